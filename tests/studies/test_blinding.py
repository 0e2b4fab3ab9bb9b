"""What a reader can fetch tells them nothing about rounds, verdicts, repeats or other
studies: one instruction per task, a secret order, a uid per read, ETags of their own, no
Last-Modified, previews drawn in advance, and answers after a reveal kept out of the figures."""

import csv
import io
from collections import defaultdict
from pathlib import Path

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.agreement.reads import load
from app.background import wait_for_background
from app.cases.filters import CaseFilter
from app.models import Attempt, Role, Run, Task
from app.settings import Settings
from app.studies.design import StudyPlan, create_study
from app.studies.models import Answer, Assignment, Design, Reveal, StudyItem
from app.studies.reader_instruction import reader_instruction, reader_instructions, without_history
from app.web.main import create_app
from tests.accounts import add_user
from tests.config import server_settings
from tests.studies.conftest import make_study, opened

FORM = {"compliance": "yes", "structure": "yes", "realism": "yes", "fidelity": "yes",
        "overall": "accept", "confidence": "4", "comment": "", "time_on_case_ms": "1000"}


def client_for(engine: Engine, settings: Settings, name: str) -> TestClient:
    from app.accounts.users import find_user, issue_token

    with Session(engine) as session:
        user = find_user(session, name)
        assert user is not None
        token = issue_token(session=session, user=user)
    return TestClient(create_app(settings, engine), headers={"Authorization": f"Bearer {token}"})


def runs_study(engine: Engine, name: str = "rounds", seed: int = 42, repeat: float = 0.0):  # type: ignore[no-untyped-def]
    admin = add_user(engine, f"admin-{name}", Role.admin)
    reader = add_user(engine, f"reader-{name}", Role.reader)
    plan = StudyPlan(name=name, case_filter=CaseFilter(outcome=("success",), rounds=(2, 3, 4, 5)),
                     design=Design.runs, reader_ids=[reader.id or 0], seed=seed, total=6,
                     repeat_fraction=repeat)
    with Session(engine) as session:
        return opened(engine, create_study(session=session, plan=plan, created_by=admin)), reader


def instructions_by_task(engine: Engine, settings: Settings, study_id: int, reader: str,
                         ) -> dict[int, set[str]]:
    client = client_for(engine, settings, reader)
    with Session(engine) as s:
        reads = s.exec(select(Assignment, StudyItem).join(StudyItem, StudyItem.id == Assignment.item_id)
                       .where(Assignment.study_id == study_id)).all()
    found: dict[int, set[str]] = defaultdict(set)
    for assignment, item in reads:
        page = BeautifulSoup(client.get(f"/read/{study_id}/{assignment.sequence}").text, "html.parser")
        found[item.task_id].add(page.select_one("#instruction").get_text())
    return found


def test_every_round_of_a_task_shows_the_same_instruction(demo_engine: Engine, settings: Settings) -> None:
    study, reader = runs_study(demo_engine)
    with Session(demo_engine) as s:
        rounds = s.exec(select(Attempt.instruction).join(StudyItem, StudyItem.attempt_id == Attempt.id)
                        .where(StudyItem.study_id == study.id)).all()
    assert len(set(rounds)) > len({r.split(".")[0] for r in rounds})  # the raw texts differ by round
    shown = instructions_by_task(demo_engine, settings, study.id or 0, reader.name)
    assert shown and all(len(texts) == 1 for texts in shown.values())
    first_sentences = {t for texts in shown.values() for t in texts}
    assert not any("previous" in t.lower() or "conspicuous" in t.lower() for t in first_sentences)


def test_history_sentences_are_taken_out() -> None:
    text = ("Add a small right pleural effusion. The previous edit was rejected by the judge. "
            "Keep the ribs unchanged. Try again with more density. In round 2 it was too faint.")
    assert without_history(text) == "Add a small right pleural effusion. Keep the ribs unchanged."


def test_the_order_comes_from_a_secret_not_the_seed(demo_engine: Engine) -> None:
    first, _ = runs_study(demo_engine, "one", seed=7)
    second, _ = runs_study(demo_engine, "two", seed=7)
    assert first.order_secret != second.order_secret and len(first.order_secret) == 32

    def order(study_id: int | None) -> list[int]:
        with Session(demo_engine) as s:
            return [i.task_id for _, i in s.exec(
                select(Assignment, StudyItem).join(StudyItem, StudyItem.id == Assignment.item_id)
                .where(Assignment.study_id == study_id).order_by(Assignment.sequence)).all()]

    # Same seed, same cases: the orders differ, as they would not if drawn from the seed.
    assert sorted(order(first.id)) == sorted(order(second.id))
    assert order(first.id) != order(second.id)


def test_repeats_have_their_own_uids_and_etags(demo_engine: Engine, settings: Settings) -> None:
    setup = make_study(demo_engine, repeat_fraction=0.5)
    with Session(demo_engine) as s:
        reads = s.exec(select(Assignment).where(Assignment.study_id == setup.study.id)).all()
    assert len({r.uid for r in reads}) == len(reads)
    repeat = next(r for r in reads if r.repeat_of is not None)
    first = next(r for r in reads if r.id == repeat.repeat_of)
    client = client_for(demo_engine, settings, setup.readers[0].name if repeat.user_id == setup.readers[0].id
                        else setup.readers[1].name)
    sid = setup.study.id
    a = client.get(f"/read/{sid}/image/{first.uid}/edit")
    b = client.get(f"/read/{sid}/image/{repeat.uid}/edit")
    # The same pixels in bytes of their own: a reader who hashes the files finds no repeat.
    assert a.status_code == b.status_code == 200 and a.content != b.content
    assert pixels(a.content) == pixels(b.content)
    assert a.headers["etag"] != b.headers["etag"]
    assert "last-modified" not in a.headers and "last-modified" not in b.headers
    assert client.get(f"/read/{sid}/image/{first.uid}/edit",
                      headers={"If-None-Match": a.headers["etag"]}).status_code == 304
    diff = client.get(f"/read/{sid}/diff/{repeat.uid}")
    assert diff.status_code == 200 and "last-modified" not in diff.headers
    first_diff = client.get(f"/read/{sid}/diff/{first.uid}")
    assert diff.content != first_diff.content and pixels(diff.content) == pixels(first_diff.content)
    # The same read gets the same bytes again (its ETag stands for them).
    assert client.get(f"/read/{sid}/image/{repeat.uid}/edit").content == b.content


def pixels(data: bytes) -> bytes:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        return image.tobytes()


def test_hidden_repeats_are_spread_over_the_second_half_well_after_their_first_read(
        demo_engine: Engine) -> None:
    """Placed last, every read after the last new case was a repeat: they are spread over
    the second half of each reader's order, each at least REPEAT_GAP reads after the first."""
    from app.studies.study_rows import REPEAT_GAP

    setup = make_study(demo_engine, repeat_fraction=0.5, design=Design.validation)
    with Session(demo_engine) as s:
        reads = s.exec(select(Assignment).where(Assignment.study_id == setup.study.id)).all()
    by_id = {r.id: r for r in reads}
    for reader in setup.readers:
        mine = sorted((r for r in reads if r.user_id == reader.id), key=lambda r: r.sequence)
        assert [r.sequence for r in mine] == list(range(1, len(mine) + 1))
        repeats = [r for r in mine if r.repeat_of is not None]
        assert len(repeats) == 8  # half of 16
        assert all(r.sequence > len(mine) // 2 for r in repeats)
        assert all(r.sequence - by_id[r.repeat_of].sequence >= REPEAT_GAP for r in repeats)
        # Not all at the end: a new case comes after the first repeat.
        assert any(r.repeat_of is None for r in mine if r.sequence > repeats[0].sequence)


def test_the_same_image_in_two_studies_has_unrelated_etags(demo_engine: Engine, settings: Settings) -> None:
    setup = make_study(demo_engine)
    with Session(demo_engine) as s:
        item = s.exec(select(StudyItem).where(StudyItem.study_id == setup.study.id)).first()
        assert item is not None
        read = s.exec(select(Assignment).where(Assignment.item_id == item.id,
                                               Assignment.user_id == setup.readers[0].id)).one()
    admin = client_for(demo_engine, settings, "study-admin")
    direct = admin.get(f"/images/attempt/{item.attempt_id}")
    reader = client_for(demo_engine, settings, "reader-0")
    blinded = reader.get(f"/read/{setup.study.id}/image/{read.uid}/edit")
    assert direct.headers["etag"] != blinded.headers["etag"]
    assert direct.content != blinded.content and pixels(direct.content) == pixels(blinded.content)


def test_answers_after_a_reveal_are_kept_flagged_and_left_out(demo_engine: Engine,
                                                              settings: Settings) -> None:
    setup = make_study(demo_engine, reveal=Reveal.after_submit)
    reader = client_for(demo_engine, settings, "reader-0")
    sid = setup.study.id
    reader.post(f"/read/{sid}/1", data=FORM | {"submission_id": "before-reveal-1"})
    page = BeautifulSoup(reader.get(f"/read/{sid}/1").text, "html.parser")
    assert page.select_one("#reveal") is not None and page.select_one("#reveal-note") is not None
    reader.post(f"/read/{sid}/1", data=FORM | {"overall": "reject", "submission_id": "after-reveal-1"})
    with Session(demo_engine) as s:
        versions = s.exec(select(Answer.version, Answer.overall, Answer.after_reveal)
                          .order_by(col(Answer.version))).all()
        assert versions == [(1, "accept", False), (2, "reject", True)]
        reads = load(s, setup.study).reads
    assert [(r.version, r.answers["overall"]) for r in reads] == [(1, "accept")]
    admin = client_for(demo_engine, settings, "study-admin")
    rows = list(csv.DictReader(io.StringIO(admin.get(f"/studies/{sid}/answers.csv").text)))
    assert [(r["version"], r["after_reveal"]) for r in rows] == [("1", "False"), ("2", "True")]


def test_a_study_can_hide_instructions(demo_engine: Engine, settings: Settings) -> None:
    setup = make_study(demo_engine)
    with Session(demo_engine) as s:
        study = s.get(type(setup.study), setup.study.id)
        assert study is not None
        study.show_instructions = False
        s.commit()
    page = BeautifulSoup(client_for(demo_engine, settings, "reader-0")
                         .get(f"/read/{setup.study.id}/1").text, "html.parser")
    assert page.select_one("#instruction") is None and page.select_one("#instruction-hidden")


def test_creating_a_study_draws_every_preview(demo_engine: Engine, tmp_path: Path) -> None:
    settings = server_settings(tmp_path / "var", worker=False)
    make_study(demo_engine)  # the accounts
    admin = client_for(demo_engine, settings, "study-admin")
    with Session(demo_engine) as s:
        reader_ids = [str(u) for u in s.exec(select(Assignment.user_id).distinct()).all()]
    response = admin.post("/studies?modality=chest_xray&outcome=success", follow_redirects=False, data={
        "name": "warm", "design": "accepted", "facets": ["direction"], "n:add": "2", "n:remove": "2",
        "readers": reader_ids, "hide_instructions": "true"})
    assert response.status_code == 303
    wait_for_background()  # drawn in a thread of its own, not on the admin's request
    previews = list((settings.resolved_cache_dir() / "preview").rglob("*.jpeg"))
    diffs = list((settings.resolved_cache_dir() / "diff" / "preview").glob("*.png"))
    assert len(previews) == 8 and len(diffs) == 4  # 4 items: original and edit, and a map each
    with Session(demo_engine) as s:
        from app.studies.models import Study

        assert s.exec(select(Study.show_instructions).where(Study.name == "warm")).one() is False


def test_the_instructions_read_in_one_go_are_those_read_one_by_one(demo_engine: Engine) -> None:
    """Study creation reads every item's instruction at once; each must be the one the
    per-item reader gives (a run's first instruction without history, else the plain task)."""
    with Session(demo_engine) as session:
        rows = session.exec(select(Attempt, Task).join(Run, Run.id == Attempt.run_id)
                            .join(Task, Task.id == Run.task_id)).all()
        together = reader_instructions(session, [(t.id or 0, a.id or 0) for a, t in rows])
        assert len(together) == len(rows) > 300
        assert all(together[a.id or 0] == reader_instruction(session, t, a) for a, t in rows)
