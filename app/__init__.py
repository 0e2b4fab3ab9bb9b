"""MedBanana Review: review, reader-study and regeneration app for Med-Banana-50K."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("medbanana-review")
except PackageNotFoundError:  # run from a checkout that was never installed
    __version__ = "0.1.0"
