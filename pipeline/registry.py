"""Backends by name, as job options name them."""

from pipeline.backend import Backend
from pipeline.jobs import JobOptions
from pipeline.offline import OfflineBackend

BACKENDS = ("offline",)


class UnknownBackend(ValueError):
    pass


def make_backend(options: JobOptions) -> Backend:
    if options.backend == "offline":
        return OfflineBackend()
    raise UnknownBackend(f"no backend {options.backend!r}; backends: {', '.join(BACKENDS)}")
