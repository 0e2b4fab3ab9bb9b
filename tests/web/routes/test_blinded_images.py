"""A blinded read's full-size images are all one format, with nothing of how each was stored:
regenerated rounds are PNG and imported ones JPEG, so the file told which edit of a pair was
the regeneration."""

import io
from dataclasses import replace
from pathlib import Path

from bs4 import BeautifulSoup
from PIL import Image
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.cases.filters import CaseFilter
from app.designs import design_of
from app.jobs import JobOptions, claim, create_job, run_job
from app.models import Attempt, Role, Task, User
from app.settings import Settings
from app.studies.design import StudyPlan
from app.studies.models import Design
from pipeline.backend import Edit, TaskInfo
from pipeline.loop import RetryPolicy
from pipeline.offline import OfflineBackend
from tests import aio
from tests.studies.conftest import opened
from tests.web.routes.test_accounts import client_for


def _chunks(png: bytes) -> list[bytes]:
    found, at = [], 8
    while at < len(png):
        length = int.from_bytes(png[at:at + 4], "big")
        found.append(png[at + 4:at + 8])
        at += 12 + length
    return found


class PngEdits(OfflineBackend):
    """The offline backend, answering with PNG as Gemini's image model does."""

    async def edit(self, task: TaskInfo, original: bytes, instruction: str) -> Edit:
        made = await super().edit(task, original, instruction)
        if made.image is None:
            return made
        out = io.BytesIO()
        Image.open(io.BytesIO(made.image)).save(out, "PNG")
        return replace(made, image=out.getvalue())


def _regenerate_as_png(engine: Engine, task_ids: list[int], work: Path) -> None:
    create_job(engine, task_ids, JobOptions(backend="offline", rounds=2))
    lease = claim(engine)
    assert lease is not None
    aio.run(run_job(engine, lease, lambda _: PngEdits(), work,
                    policy=RetryPolicy(attempts=1, base_seconds=0.0)))


def test_both_edits_of_a_pair_of_runs_come_as_png_without_metadata(
        demo_engine: Engine, settings: Settings, tmp_path: Path) -> None:
    with Session(demo_engine) as session:
        tasks = [t.id or 0 for t in session.exec(select(Task).order_by(Task.id).limit(4)).all()]
    _regenerate_as_png(demo_engine, tasks, tmp_path)
    with Session(demo_engine) as session:
        stored = {Path(a.image_relpath or "").suffix.lower()
                  for a in session.exec(select(Attempt)).all() if a.image_relpath}
    assert stored == {".png", ".jpeg"}  # regenerated PNG beside imported JPEG
    client_for(demo_engine, settings, "chief", Role.admin)
    reader = client_for(demo_engine, settings, "dr-a", Role.reader)
    with Session(demo_engine) as session:
        chief = session.exec(select(User).where(User.name == "chief")).one()
        dr_a = session.exec(select(User).where(User.name == "dr-a")).one()
        plan = StudyPlan(name="runs", case_filter=CaseFilter(), reader_ids=[dr_a.id or 0],
                         design=Design.pairwise, total=2)
        study = design_of(Design.pairwise).create(session, replace(plan, pair_kind="runs"), chief)
        study_id = study.id
    opened(demo_engine, study)
    formats = set()
    for sequence in (1, 2):
        screen = BeautifulSoup(reader.get(f"/read/{study_id}/{sequence}").text, "html.parser")
        uid = screen.select_one("#img-a")["src"].split("/image/")[1].split("/")[0]
        for side in ("left", "right", "original"):
            got = reader.get(f"/read/{study_id}/image/{uid}/{side}?size=full")
            assert got.status_code == 200
            formats.add(got.headers["content-type"])
            assert got.content.startswith(b"\x89PNG\r\n\x1a\n")
            with Image.open(io.BytesIO(got.content)) as img:
                assert img.mode == "RGB"
            # the image data and the read's mark, nothing of the stored file
            assert set(_chunks(got.content)) <= {b"IHDR", b"IDAT", b"IEND", b"mbRd"}
    assert formats == {"image/png"}


MARKING = (b"caBX", b"jumb", b"c2pa", b"XML:com.adobe.xmp", b"Iptc4xmpExt", b"http://ns.adobe.com/xap")


def _segments(jpeg: bytes) -> list[int]:
    """The JPEG's markers up to the scan."""
    found, at = [], 2
    while at + 4 <= len(jpeg) and jpeg[at] == 0xFF and jpeg[at + 1] != 0xDA:
        found.append(jpeg[at + 1])
        at += 2 + int.from_bytes(jpeg[at + 2:at + 4], "big")
    return found


def test_a_blinded_edit_carries_nothing_of_the_marking_an_original_lacks(
        demo_engine: Engine, settings: Settings) -> None:
    """The marking would tell an edit from an original at a glance at the bytes: a blinded
    read's edit and original are made alike, and the admin's marked copies (fetched first,
    so they are in the cache) never reach a reader."""
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    reader = client_for(demo_engine, settings, "dr-a", Role.reader)
    with Session(demo_engine) as session:
        chief = session.exec(select(User).where(User.name == "chief")).one()
        dr_a = session.exec(select(User).where(User.name == "dr-a")).one()
        plan = StudyPlan(name="marks", case_filter=CaseFilter(outcome=("success",)),
                         reader_ids=[dr_a.id or 0], design=Design.accepted,
                         strata_facets=("direction",), per_stratum={"add": 1, "remove": 1})
        study = design_of(Design.accepted).create(session, plan, chief)
        study_id = study.id
    opened(demo_engine, study)
    screen = BeautifulSoup(reader.get(f"/read/{study_id}/1").text, "html.parser")
    uid = screen.select_one("#img-edit")["src"].split("/image/")[1].split("/")[0]
    with Session(demo_engine) as session:
        attempts = [a.id for a in session.exec(select(Attempt).where(Attempt.image_present == True)).all()]  # noqa: E712
    for attempt_id in attempts[:6]:  # the marked copies, in the shared cache
        for size in ("preview", "full"):
            assert admin.get(f"/images/attempt/{attempt_id}?size={size}").status_code == 200
    for size, shape in (("full", _chunks), ("preview", _segments)):
        edit = reader.get(f"/read/{study_id}/image/{uid}/edit?size={size}").content
        original = reader.get(f"/read/{study_id}/image/{uid}/original?size={size}").content
        assert shape(edit) == shape(original), size
        assert not any(mark in image for mark in MARKING for image in (edit, original)), size
