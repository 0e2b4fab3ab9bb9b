"""Image files by id: resolution inside the configured roots, resizing, and a disk cache.

Ids are opaque: no URL ever names a file, and nothing outside a registered data root
is opened, whatever the database holds.
"""

import hashlib
import io
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import BinaryIO

from PIL import Image
from sqlalchemy import select
from sqlmodel import Session, col

from app.errors import NotFound
from app.images.store import RemoteStore, StoreError, is_remote, store_for
from app.models import Attempt, DataRoot, Run, SourceImage, Task
from app.safe_files import open_inside


class ImageKind(StrEnum):
    source = "source"
    attempt = "attempt"


class ImageSize(StrEnum):
    thumb = "thumb"
    preview = "preview"
    full = "full"


# Longest side in pixels; full is the file itself, untouched.
SIZE_PIXELS = {ImageSize.thumb: 160, ImageSize.preview: 768}
CACHE_QUALITY = 88


class ImageNotFound(NotFound):
    pass



# What an image is by its bytes (Pillow's reading of them), never by a label or a file name:
# the image model may answer PNG where JPEG was expected.
FORMATS = {"JPEG": ("image/jpeg", ".jpeg"), "PNG": ("image/png", ".png"),
           "WEBP": ("image/webp", ".webp")}
SUFFIX_TYPES = {suffix: mime for mime, suffix in FORMATS.values()} | {".jpg": "image/jpeg"}


def sniff_image(data: bytes) -> tuple[str, str] | None:
    """(MIME type, file suffix) of an image's bytes; None when they are not an image this
    app stores."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            return FORMATS.get(image.format or "")
    except (OSError, Image.DecompressionBombError):
        return None


@dataclass(frozen=True)
class ImageFile:
    root: Path
    path: Path
    etag: str
    # Set for an image in a remote store (app/images/store.py): read there, by its relpath.
    remote: RemoteStore | None = None
    # What a blinded screen is told when the image cannot be read, instead of the details
    # (an id or a path would unblind it).
    hide: str | None = None

    def open(self) -> BinaryIO:
        """The file, opened so that nothing outside its data root can be read
        (app/safe_files.py); every reader of an image goes through here."""
        if self.remote is not None:
            try:
                return io.BytesIO(self.remote.read(self.path.as_posix()))
            except (OSError, StoreError) as error:
                raise ImageNotFound(self.hide or f"the image cannot be read from its store: "
                                                  f"{error}") from None
        try:
            return open_inside(self.root, self.path)
        except OSError as error:
            raise ImageNotFound(self.hide or f"the image file cannot be opened: "
                                              f"{error.strerror}") from None

    def read_bytes(self) -> bytes:
        with self.open() as handle:
            return handle.read()


def resolve_image(session: Session, kind: ImageKind, image_id: int) -> ImageFile:
    root_id, relpath = _location(session, kind, image_id)
    if root_id is None or relpath is None:
        raise ImageNotFound(f"{kind.value} image {image_id} has no file")
    root = session.get(DataRoot, root_id)
    if root is None:
        raise ImageNotFound(f"{kind.value} image {image_id} has no data root")
    if is_remote(root.path):
        return _remote_image(kind, image_id, root.path, relpath)
    image = ImageFile(root=Path(root.path), path=Path(root.path) / relpath, etag="")
    try:
        with image.open() as handle:
            stat = os.fstat(handle.fileno())
    except ImageNotFound:
        raise ImageNotFound(f"{kind.value} image {image_id} is missing on disk") from None
    tag = hashlib.blake2b(f"{kind}:{image_id}:{stat.st_mtime_ns}:{stat.st_size}".encode(),
                          digest_size=12).hexdigest()
    return ImageFile(root=image.root, path=image.path, etag=tag)


def _remote_image(kind: ImageKind, image_id: int, location: str, relpath: str) -> ImageFile:
    try:
        store = store_for(location)
        assert isinstance(store, RemoteStore)
        version = store.version(relpath)
    except (OSError, StoreError) as error:
        raise ImageNotFound(f"{kind.value} image {image_id} is missing from its store "
                            f"({error})") from None
    tag = hashlib.blake2b(f"{kind}:{image_id}:{location}:{version}".encode(),
                          digest_size=12).hexdigest()
    return ImageFile(root=Path("/"), path=Path(relpath), etag=tag, remote=store)


def _location(session: Session, kind: ImageKind, image_id: int) -> tuple[int | None, str | None]:
    if kind is ImageKind.source:
        source = session.get(SourceImage, image_id)
        if source is None:
            raise ImageNotFound(f"no source image {image_id}")
        if not source.present:
            return None, None
        return source.root_id, f"{source.dataset}/{source.category}/{source.filename}"
    attempt = session.get(Attempt, image_id)
    if attempt is None:
        raise ImageNotFound(f"no attempt {image_id}")
    return attempt.image_root_id, attempt.image_relpath


def source_of_attempt(session: Session, attempt_id: int) -> int:
    """The source image id of the task an attempt belongs to."""
    row = session.execute(select(col(Task.source_image_id)).join(Run, col(Run.task_id) == Task.id)
                          .join(Attempt, col(Attempt.run_id) == Run.id)
                          .where(col(Attempt.id) == attempt_id)).first()
    if row is None:
        raise ImageNotFound(f"no attempt {attempt_id}")
    return int(row[0])


def sized_file(image: ImageFile, size: ImageSize, cache_dir: Path) -> Path:
    """A cached JPEG of the image at a display size, made on first use. The cache is ours,
    so the file is served by name; ``full`` is read through ``ImageFile.open``."""
    if size is ImageSize.full:
        raise ValueError("the full-size image is never cached")
    target = cache_dir / size.value / image.etag[:2] / f"{image.etag}.jpeg"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        return _write_resized(image, target, SIZE_PIXELS[size])
    except (OSError, Image.DecompressionBombError) as error:
        raise ImageNotFound(image.hide or f"the image file cannot be decoded: {error}") from None


def blinded_full_file(image: ImageFile, cache_dir: Path) -> Path:
    """The full-size image as a blinded read sends it: decoded and written again as a PNG in
    RGB with no metadata, whatever it was stored as. Regenerated rounds are PNG and imported
    ones JPEG, so the stored file's type, mode and metadata told which edit of a pair was the
    regeneration; lossless, so nothing of the pixels is lost."""
    target = cache_dir / "blind-full" / image.etag[:2] / f"{image.etag}.png"
    if target.is_file():
        return target
    try:
        with image.open() as stream, Image.open(stream) as img:
            pixels = img.convert("RGB")
            return write_cached(target, lambda out: pixels.save(out, "PNG", compress_level=6))
    except (OSError, Image.DecompressionBombError) as error:
        raise ImageNotFound(image.hide or f"the image file cannot be decoded: {error}") from None


def _write_resized(source: ImageFile, target: Path, pixels: int) -> Path:
    with source.open() as stream, Image.open(stream) as img:
        # draft() lets the JPEG decoder scale by 1/2..1/8 while decoding: 1024² -> 128² is
        # several times faster than a full decode followed by a resize.
        img.draft("RGB", (pixels, pixels))
        small = img.convert("RGB")
        small.thumbnail((pixels, pixels), Image.Resampling.LANCZOS)
        return write_cached(target, lambda out: small.save(out, "JPEG", quality=CACHE_QUALITY))


def write_cached(target: Path, write: Callable[[BinaryIO], object]) -> Path:
    """A file of our cache, written whole or not at all: ``write`` fills a temporary file
    beside it, which then replaces the target in one step, so a concurrent request never
    reads half a file; one that fails leaves no temporary file behind."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            write(out)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return target
