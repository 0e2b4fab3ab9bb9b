"""Where regenerated images are kept: a local folder by default, or any fsspec file system
(an S3 bucket, a shared network path), so that workers on several machines write where the
web app and the other workers read.

A store is named by its location: a folder path, or a URL such as ``s3://bucket/prefix``
(``pip install 'medbanana-review[s3]'``; credentials and endpoint from the usual AWS_*
variables). Writing is in two steps: ``stage`` before the round's transaction and ``place``
inside it, so that the image appears under its final name only in the step that commits its
row; ``discard`` removes it again if that transaction fails.
"""

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import fsspec


class StoreError(ValueError):
    """An image store location that cannot be used; the message says why."""


def is_remote(location: str) -> bool:
    """A URL of another file system; plain paths and file:// URLs are local folders."""
    return "://" in location and not location.startswith("file://")


def local_path(location: str) -> Path:
    return Path(location.removeprefix("file://"))


def safe_relpath(relpath: str) -> str:
    """A path inside a store, as the database holds it: relative, and never climbing out."""
    pure = PurePosixPath(relpath)
    if (not relpath or "\x00" in relpath or "\\" in relpath or pure.is_absolute()
            or any(part in ("..", "") for part in relpath.split("/"))):
        raise StoreError(f"not a path inside an image store: {relpath!r}")
    return relpath


@dataclass(frozen=True)
class LocalStore:
    root: Path

    def stage(self, relpath: str, data: bytes) -> Path:
        target = self.root / safe_relpath(relpath)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".partial")
        partial.write_bytes(data)
        return partial

    def place(self, relpath: str, staged: Any) -> None:
        Path(staged).replace(self.root / relpath)  # atomic: readers never see half a file

    def discard(self, relpath: str, staged: Any) -> None:
        for leftover in (Path(staged), self.root / relpath):
            leftover.unlink(missing_ok=True)


@dataclass(frozen=True)
class RemoteStore:
    url: str
    fs: Any = field(repr=False, compare=False)
    base: str = ""

    def _full(self, relpath: str) -> str:
        return f"{self.base.rstrip('/')}/{safe_relpath(relpath)}"

    def stage(self, relpath: str, data: bytes) -> bytes:
        return data  # an object store has no rename: the put in place() is the atomic step

    def place(self, relpath: str, staged: Any) -> None:
        self.fs.pipe_file(self._full(relpath), bytes(staged))

    def discard(self, relpath: str, staged: Any) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm_file(self._full(relpath))

    def read(self, relpath: str) -> bytes:
        return bytes(self.fs.cat_file(self._full(relpath)))

    def version(self, relpath: str) -> str:
        """What changes when the object does: its size and its modification time or ETag."""
        info = self.fs.info(self._full(relpath))
        stamp = next((info[k] for k in ("ETag", "etag", "mtime", "LastModified", "created")
                      if info.get(k) is not None), "")
        return f"{info.get('size')}:{stamp}"


Store = LocalStore | RemoteStore


def store_for(location: str | os.PathLike[str]) -> Store:
    text = os.fspath(location)
    if not is_remote(text):
        return LocalStore(local_path(text))
    try:
        fs, base = fsspec.core.url_to_fs(text)
    except (ImportError, ValueError) as error:
        raise StoreError(f"image store {text!r} cannot be used: {error}") from None
    return RemoteStore(text, fs, base)


def normalised(location: str | os.PathLike[str]) -> str:
    """The location as it is recorded as a data root: an absolute folder, or the URL."""
    text = os.fspath(location)
    return text.rstrip("/") if is_remote(text) else str(local_path(text).resolve())
