"""Images by opaque id, resized on first use and cached on disk and in the browser."""

import hashlib
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import FileResponse, Response

from app.images.diffmap import attempt_diff
from app.images.files import (
    SUFFIX_TYPES,
    ImageFile,
    ImageKind,
    ImageSize,
    blinded_full_file,
    resolve_image,
    sized_file,
)
from app.images.read_marks import marked, read_mark
from app.web.deps import IdPath, MarkerDep, SessionDep, SettingsDep
from app.web.schemas import ErrorOut

router = APIRouter(tags=["images"])
# The bytes behind an id never change (a new edit gets a new id); the ETag covers the rest.
CACHE_CONTROL = "private, max-age=31536000, immutable"


def image_response(request: Request, image: ImageFile, size: ImageSize,
                         cache_dir: Path, *, blind: str = "") -> Response:
    """The sized file with ETag and caching; a 304 when the browser has it. The ETag is a
    hash of the file's identity, so it names no id, round or outcome. Called from sync
    routes, so resizing runs in the thread pool and never holds the event loop.

    ``blind`` (reading screens): the ETag is mixed with it, and no Last-Modified is sent,
    whose time would tell when anyone first opened the image."""
    etag = f'"{_blinded(f"{image.etag}-{size.value}", blind)}"'
    headers = {"ETag": etag, "Cache-Control": CACHE_CONTROL}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    if size is ImageSize.full and blind:  # one format for every blinded image, as previews
        return _cached_file(blinded_full_file(image, cache_dir), "image/png", headers, blind)
    if size is ImageSize.full:  # a data root's file: read through the safe open, never by name
        media_type = SUFFIX_TYPES.get(image.path.suffix.lower(), "image/jpeg")
        return Response(image.read_bytes(), media_type=media_type, headers=headers)
    return _cached_file(sized_file(image, size, cache_dir), "image/jpeg", headers, blind)


def _cached_file(path: Path, media_type: str, headers: dict[str, str], blind: str) -> Response:
    """A file of our cache. Blinded: sent as bytes, since FileResponse would add the file's
    Last-Modified, which tells when the image was first drawn, that is, first opened; and
    marked for the read, so that two reads of one image never share their bytes."""
    if blind:
        data = marked(path.read_bytes(), read_mark(blind, headers["ETag"]))
        return Response(data, media_type=media_type, headers=headers)
    return FileResponse(path, media_type=media_type, headers=headers)


def _blinded(tag: str, blind: str) -> str:
    if not blind:
        return tag
    return hashlib.blake2b(f"{blind}:{tag}".encode(), digest_size=12).hexdigest()


# Before /images/{kind}/{id}, which would take 'diff' for a kind.
@router.get("/images/diff/{attempt_id}", response_class=FileResponse, responses={
    200: {"content": {"image/png": {}}, "description": "The map, transparent where unchanged"},
    304: {"description": "Not modified"},
    404: {"model": ErrorOut, "description": "No such image, or it cannot be read"}})
def get_diff(request: Request, session: SessionDep, settings: SettingsDep, attempt_id: IdPath,
             size: Annotated[ImageSize, Query()] = ImageSize.preview) -> Response:
    """|edit - original| for one attempt, colour-mapped, transparent where nothing changed."""
    known = attempt_diff(session, attempt_id, size, settings.resolved_cache_dir())
    return cached_response(request, *known)


def cached_response(request: Request, path: Path, etag: str, *, blind: str = "",
                  media_type: str = "image/png") -> Response:
    """A file of our cache (a difference map; a blinded JPEG) with its tag."""
    etag = f'"{_blinded(etag.strip(chr(34)), blind)}"'
    headers = {"ETag": etag, "Cache-Control": CACHE_CONTROL}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    return _cached_file(path, media_type, headers, blind)


@router.get("/images/{kind}/{image_id}", response_class=FileResponse, responses={
    200: {"content": {"image/jpeg": {}, "image/png": {}, "image/webp": {}}, "description": "The image"},
    304: {"description": "Not modified"},
    404: {"model": ErrorOut, "description": "No such image, or it cannot be read"}})
def get_image(request: Request, session: SessionDep, settings: SettingsDep, marker: MarkerDep,
              kind: ImageKind, image_id: IdPath,
              size: Annotated[ImageSize, Query()] = ImageSize.preview,
              download: Annotated[bool, Query()] = False) -> Response:
    """An original as stored; an edit, at every size, with its C2PA manifest and XMP saying
    it is synthetic (app/provenance). ``download``: sent as an attachment."""
    image = resolve_image(session, kind, image_id)
    if kind is ImageKind.source and not download:
        return image_response(request, image, size, settings.resolved_cache_dir())
    etag = f'"{image.etag}-{size.value}-{marker.fingerprint if kind is ImageKind.attempt else ""}"'
    headers = {"ETag": etag, "Cache-Control": CACHE_CONTROL}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    suffix = image.path.suffix.lower() or ".jpeg"
    media_type = SUFFIX_TYPES.get(suffix, "image/jpeg") if size is ImageSize.full else "image/jpeg"
    if download:
        name = f"{'original' if kind is ImageKind.source else 'edit-synthetic'}-{image_id}"
        headers["Content-Disposition"] = (
            f'attachment; filename="{name}{suffix if size is ImageSize.full else ".jpeg"}"')
    if kind is ImageKind.source:  # the original, as stored
        if size is ImageSize.full:
            return Response(image.read_bytes(), media_type=media_type, headers=headers)
        return FileResponse(sized_file(image, size, settings.resolved_cache_dir()),
                            media_type=media_type, headers=headers)
    path = marker.served(session, image_id, image, size, settings.resolved_cache_dir())
    return FileResponse(path, media_type=media_type, headers=headers)
