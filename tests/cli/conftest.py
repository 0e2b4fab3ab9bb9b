"""Fixtures the command-line tests share with the features they drive."""

from tests.judges.conftest import reference  # noqa: F401  (a locked study for `medbanana judges`)
