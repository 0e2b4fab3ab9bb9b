"""Backends by name, as job options name them, made with this server's settings (the
Gemini key and base URL)."""

from app.jobs.options import JobOptions
from app.settings import Settings
from pipeline.backend import Backend
from pipeline.gemini import GeminiBackend
from pipeline.offline import OfflineBackend

BACKENDS = ("offline", "gemini")


class UnknownBackend(ValueError):
    pass


def available(settings: Settings | None = None) -> list[str]:
    """The backends this machine can use now: gemini only with a key configured."""
    key = (settings or Settings()).gemini_api_key.get_secret_value()
    return [b for b in BACKENDS if b != "gemini" or key]


def make_backend(options: JobOptions, settings: Settings | None = None) -> Backend:
    """The job's backend. Without settings given, they are read from the environment at this
    call (as ``available`` reads them), the one place both look."""
    if options.backend == "offline":
        return OfflineBackend()
    if options.backend == "gemini":
        settings = settings or Settings()
        key = settings.gemini_api_key.get_secret_value()
        if not key:
            raise UnknownBackend("the gemini backend needs GOOGLE_API_KEY or GEMINI_API_KEY")
        return GeminiBackend(key, options.models, base_url=settings.gemini_base_url or None,
                             timeout_seconds=options.timeout_seconds)
    raise UnknownBackend(f"no backend {options.backend!r}; backends: {', '.join(BACKENDS)}")
