"""Images by id: sizes, caching, and no way out of the roots."""

import io

from fastapi.testclient import TestClient
from PIL import Image
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.images.files import ImageKind, resolve_image
from app.models import Attempt
from app.provenance.facts import TRAINED_EDIT
from app.provenance.marks import read_mark
from tests.accounts import token_client
from tests.config import server_settings


def first_attempt_id(engine: Engine) -> int:
    with Session(engine) as s:
        attempt = s.exec(select(Attempt).where(Attempt.image_present == True)).first()  # noqa: E712
    assert attempt is not None and attempt.id is not None
    return attempt.id


def resolve_image_bytes(engine: Engine, attempt_id: int) -> bytes:
    with Session(engine) as s:
        return resolve_image(s, ImageKind.attempt, attempt_id).read_bytes()


def decoded(data: bytes) -> bytes:
    with Image.open(io.BytesIO(data)) as image:
        return image.tobytes()


def test_every_size_of_an_edit_says_it_is_synthetic_and_a_download_is_an_attachment(
        client: TestClient, demo_engine: Engine) -> None:
    attempt_id = first_attempt_id(demo_engine)
    for size in ("thumb", "preview", "full"):
        response = client.get(f"/images/attempt/{attempt_id}?size={size}")
        reading = read_mark(response.content)
        assert reading is not None and reading.state == "Valid" and reading.self_signed
        assert reading.source_type == TRAINED_EDIT  # an imported edit: Gemini made it
    download = client.get(f"/images/attempt/{attempt_id}?size=full&download=true")
    assert download.headers["content-disposition"].startswith('attachment; filename="edit-synthetic-')
    original = client.get("/images/source/1?size=full&download=true")
    assert read_mark(original.content) is None  # an original is left as it is
    assert original.headers["content-disposition"].startswith('attachment; filename="original-1')


def test_thumb_is_small_and_cached_with_etag(client: TestClient, demo_engine: Engine) -> None:
    url = f"/images/attempt/{first_attempt_id(demo_engine)}?size=thumb"
    response = client.get(url)
    assert response.status_code == 200
    assert max(Image.open(io.BytesIO(response.content)).size) <= 160
    assert "max-age=31536000" in response.headers["cache-control"]
    etag = response.headers["etag"]
    again = client.get(url, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""


def test_full_size_is_the_file_itself(client: TestClient, demo_engine: Engine) -> None:
    attempt_id = first_attempt_id(demo_engine)
    with Session(demo_engine) as s:
        attempt = s.get(Attempt, attempt_id)
    response = client.get(f"/images/attempt/{attempt_id}?size=full")
    assert response.status_code == 200 and response.content[:2] == b"\xff\xd8"
    assert attempt is not None
    # Its pixels are the stored file's: the marking adds segments, never re-encodes.
    stored = resolve_image_bytes(demo_engine, attempt_id)
    assert decoded(response.content) == decoded(stored)


def test_unknown_ids_and_kinds(client: TestClient) -> None:
    assert client.get("/images/attempt/999999").status_code == 404
    assert client.get("/images/source/999999").status_code == 404
    assert client.get("/images/secret/1").status_code == 422
    assert client.get("/images/attempt/1?size=huge").status_code == 422
    assert client.get("/images/attempt/..%2F..%2Fetc%2Fpasswd").status_code in (404, 422)


def test_a_tampered_path_in_the_database_never_leaves_the_root(client: TestClient,
                                                               demo_engine: Engine) -> None:
    attempt_id = first_attempt_id(demo_engine)
    with Session(demo_engine) as s:
        attempt = s.get(Attempt, attempt_id)
        assert attempt is not None
        attempt.image_relpath = "../../../../../../etc/passwd"
        s.add(attempt)
        s.commit()
    response = client.get(f"/images/attempt/{attempt_id}?size=full")
    assert response.status_code == 404
    assert b"root:" not in response.content


def test_an_undecodable_file_is_a_404_not_a_500(client: TestClient, demo_engine: Engine,
                                               demo_dir) -> None:  # type: ignore[no-untyped-def]
    attempt_id = first_attempt_id(demo_engine)
    with Session(demo_engine) as s:
        attempt = s.get(Attempt, attempt_id)
        assert attempt is not None and attempt.image_relpath
        broken = demo_dir / "run" / "broken.jpeg"
        broken.write_bytes(b"not a jpeg")
        attempt.image_relpath = "broken.jpeg"
        s.add(attempt)
        s.commit()
    response = client.get(f"/images/attempt/{attempt_id}?size=thumb")
    assert response.status_code == 404
    assert "cannot be decoded" in response.text


def test_full_size_1024_jpeg_in_every_size(engine: Engine, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from app.importer import import_tree
    from app.models import Direction
    from app.web.main import create_app
    from tests import factories

    run = tmp_path / "run"
    key, entry = "Te-no_0001-Lung_Lesion", factories.conversation(
        "Te-no_0001.jpeg", "Lung_Lesion", "success", [factories.round_entry(1, True)])
    factories.write_folder(run, "Chest-XRay", Direction.add, {key: entry})
    factories.write_images(run, "Chest-XRay", Direction.add, "Te-no_0001", "Lung_Lesion", [],
                           accepted=True)
    factories.jpeg(run / "Chest-XRay-edit/Lung_Lesion/Te-no_0001-Lung_Lesion-edit.jpeg", size=1024)
    import_tree(engine, run)
    client = token_client(create_app(server_settings(tmp_path / "var"), engine), engine)
    attempt_id = first_attempt_id(engine)
    sizes = {}
    for size in ("thumb", "preview", "full"):
        response = client.get(f"/images/attempt/{attempt_id}?size={size}")
        assert response.status_code == 200
        sizes[size] = Image.open(io.BytesIO(response.content)).size
    assert sizes == {"thumb": (160, 160), "preview": (768, 768), "full": (1024, 1024)}
    cache = tmp_path / "var" / "cache"
    # thumb and preview as drawn, then each size marked once; the marked full size is the
    # file itself with the marking
    assert len(list((cache / "thumb").rglob("*.jpeg")) + list((cache / "preview").rglob("*.jpeg"))) == 2
    assert len(list((cache / "marked").rglob("*.jpeg"))) == 3
