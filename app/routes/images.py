"""Images by opaque id, resized on first use and cached on disk and in the browser."""

from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import FileResponse, Response
from starlette.concurrency import run_in_threadpool

from app.deps import IdPath, SessionDep, SettingsDep
from app.images import ImageKind, ImageNotFound, ImageSize, resolve_image, sized_file

router = APIRouter(tags=["images"])
# The bytes behind an id never change (a new edit gets a new id); the ETag covers the rest.
CACHE_CONTROL = "private, max-age=31536000, immutable"


@router.get("/images/{kind}/{image_id}", response_class=FileResponse,
            responses={304: {"description": "Not modified"}, 404: {"description": "No such image"}})
async def get_image(request: Request, session: SessionDep, settings: SettingsDep,
                    kind: ImageKind, image_id: IdPath,
                    size: Annotated[ImageSize, Query()] = ImageSize.preview) -> Response:
    try:
        image = resolve_image(session, kind, image_id)
        etag = f'"{image.etag}-{size.value}"'
        if request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers={"ETag": etag, "Cache-Control": CACHE_CONTROL})
        path = await run_in_threadpool(sized_file, image, size, settings.resolved_cache_dir())
    except ImageNotFound as error:
        raise HTTPException(404, str(error)) from None
    return FileResponse(path, media_type=_media_type(path.suffix),
                        headers={"ETag": etag, "Cache-Control": CACHE_CONTROL})


def _media_type(suffix: str) -> str:
    return "image/png" if suffix.lower() == ".png" else "image/jpeg"
