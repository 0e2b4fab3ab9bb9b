"""Backends by name, as job options name them."""

from pipeline.backend import Backend
from pipeline.gemini import GeminiBackend, api_key
from pipeline.job_options import JobOptions
from pipeline.offline import OfflineBackend

BACKENDS = ("offline", "gemini")


class UnknownBackend(ValueError):
    pass


def available() -> list[str]:
    """The backends this machine can use now: gemini only with a key in the environment."""
    return [b for b in BACKENDS if b != "gemini" or api_key()]


def make_backend(options: JobOptions) -> Backend:
    if options.backend == "offline":
        return OfflineBackend()
    if options.backend == "gemini":
        key = api_key()
        if key is None:
            raise UnknownBackend("the gemini backend needs GOOGLE_API_KEY or GEMINI_API_KEY")
        return GeminiBackend(key, options.models, timeout_seconds=options.timeout_seconds)
    raise UnknownBackend(f"no backend {options.backend!r}; backends: {', '.join(BACKENDS)}")
