"""The difference map: transparent where nothing changed, cached, ETag'd, admin-only."""

import io

import numpy as np
from fastapi.testclient import TestClient
from PIL import Image
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.models import Role, Task
from app.settings import Settings
from app.web.main import create_app
from tests.accounts import token_client


def accepted_attempt(engine: Engine) -> int:
    with Session(engine) as session:
        task = session.exec(select(Task).where(Task.outcome == "success",
                                               Task.direction == "add")).first()
        assert task is not None and task.accepted_attempt_id is not None
        return task.accepted_attempt_id


def test_the_map_shows_the_change_and_is_cached(client: TestClient, demo_engine: Engine) -> None:
    attempt_id = accepted_attempt(demo_engine)
    first = client.get(f"/images/diff/{attempt_id}")
    assert first.status_code == 200 and first.headers["content-type"] == "image/png"
    with Image.open(io.BytesIO(first.content)) as image:
        alpha = np.asarray(image.convert("RGBA"))[..., 3]
    assert alpha.max() > 200  # the added lesion shows
    assert (alpha == 0).mean() > 0.5  # most of the image did not change: transparent
    again = client.get(f"/images/diff/{attempt_id}", headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304


def test_unknown_attempts_and_readers(client: TestClient, demo_engine: Engine,
                                      settings: Settings) -> None:
    assert client.get("/images/diff/999999").status_code == 404
    assert client.get("/images/diff/0").status_code == 422
    reader = token_client(create_app(settings, demo_engine), demo_engine, "r", Role.reader,
                          raise_server_exceptions=False)
    assert reader.get(f"/images/diff/{accepted_attempt(demo_engine)}").status_code == 403


def test_an_undecodable_image_is_a_404_not_a_500(client: TestClient, demo_engine: Engine) -> None:
    from app.images.files import ImageKind, resolve_image

    attempt_id = accepted_attempt(demo_engine)
    with Session(demo_engine) as session:
        path = resolve_image(session, ImageKind.attempt, attempt_id).path
    original = path.read_bytes()
    try:
        path.write_bytes(b"not a jpeg at all")
        assert client.get(f"/images/diff/{attempt_id}?size=thumb").status_code == 404
    finally:
        path.write_bytes(original)  # the demo tree is shared by the whole session
