"""A known-answer case never enters a figure about the judge or the data set: every figure and
figure export of a study is byte-identical with its known-answer cases and without them."""

import json
from pathlib import Path
from typing import Any

from sqlalchemy import delete
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.exports.curated import CuratedFilter, write_curated
from app.exports.pairs import write_pairs
from app.models import Attempt, Role, Run, SourceImage, Task
from app.quality.report import forget as forget_quality
from app.readers.settled import mark
from app.studies.answers import AnswerIn, submit_answer
from app.studies.models import Answer, Assignment, Design, StudyItem
from app.web.main import create_app
from tests.accounts import add_user, token_client
from tests.agreement.test_report import answer_all
from tests.config import server_settings
from tests.signing import signing_marker
from tests.studies.conftest import make_study

FIGURES = ("agreement.json", "answers-long.csv", "reference.csv", "disagreements.csv")


def mark_edits(engine: Engine, count: int, modality: str = "chest_xray") -> None:
    """An admin marks the first edit of ``count`` tasks of a modality as unmistakable: the
    settled pool (a study draws only its own modalities and directions from it)."""
    admin = add_user(engine, f"marker-{modality}", Role.admin)
    with Session(engine) as session:
        # Edits whose both images are on disk: the demo keeps a few missing on purpose.
        attempts = list(session.scalars(
            select(col(Attempt.id)).join(Run, col(Run.id) == Attempt.run_id)
            .join(Task, col(Task.id) == Run.task_id)
            .join(SourceImage, col(SourceImage.id) == Task.source_image_id)
            .where(col(Task.modality) == modality, col(Attempt.image_present).is_(True),
                   col(SourceImage.present).is_(True))
            .order_by(col(Attempt.id))))
        seen: set[int] = set()
        for attempt in attempts:
            task = session.scalars(select(col(Run.task_id)).join(
                Attempt, col(Attempt.run_id) == Run.id).where(col(Attempt.id) == attempt)).one()
            if task in seen:
                continue
            seen.add(task)
            mark(session, attempt, {"overall": "reject" if len(seen) % 2 else "accept",
                                    "realism": "yes"}, admin)
            if len(seen) == count:
                break


def figures(engine: Engine, tmp_path: Path, study_id: int, tag: str) -> dict[str, Any]:
    forget_quality()
    client = token_client(create_app(server_settings(tmp_path), engine), engine, name=f"look-{tag}")
    found: dict[str, Any] = {"agreement.json": client.get(f"/studies/{study_id}/agreement.json").json(),
                             "quality.json": client.get(f"/api/quality?study={study_id}").json()}
    for name in FIGURES[1:]:
        response = client.get(f"/studies/{study_id}/{name}")
        assert response.status_code == 200, name
        found[name] = response.text
    pairs = write_pairs(engine, tmp_path / f"pairs-{tag}", signing_marker())
    found["pairs.jsonl"] = (pairs.target / "pairs.jsonl").read_text()
    curated = write_curated(engine, tmp_path / f"curated-{tag}", CuratedFilter(modality=("chest_xray",)),
                            signing_marker())
    manifest = json.loads((curated.target / "manifest.json").read_text())
    # The audit log is not a figure: marking edits as known answers is recorded in it.
    found["curated"] = {k: v for k, v in manifest.items()
                        if k not in ("exported_at", "target", "audit_log")}
    for value in (found["agreement.json"], found["quality.json"]):
        value.pop("generated_at", None)
        value.pop("audit_log", None)
    return found


def test_removing_the_known_answer_cases_leaves_every_figure_byte_identical(
        demo_engine: Engine, tmp_path: Path) -> None:
    mark_edits(demo_engine, 40)
    setup = make_study(demo_engine, design=Design.validation, readers=3, known_share=0.2)
    study_id = setup.study.id or 0
    with Session(demo_engine) as session:
        known = set(session.scalars(select(col(StudyItem.id)).where(
            col(StudyItem.study_id) == study_id, col(StudyItem.known_answer_id).is_not(None))))
    assert len(known) == 4
    yes_no = ["yes", "no", "yes", "yes", "cannot_assess", "no", "yes", "no"] * 2
    answer_all(demo_engine, setup, {"reader-0": ["yes"] * 12 + ["no"] * 4,
                                    "reader-1": yes_no, "reader-2": yes_no[::-1]})
    with Session(demo_engine) as session:
        for read in session.scalars(select(Assignment).where(col(Assignment.item_id).in_(known))):
            submit_answer(session, setup.study, read, AnswerIn(
                compliance="no", structure="yes", realism="no", fidelity="yes", overall="reject",
                confidence=4, submission_id=f"known-{read.id:05d}"))
    with Session(demo_engine) as session:
        reads = list(session.scalars(select(col(Assignment.id)).where(
            col(Assignment.item_id).in_(known))))
        answered = session.scalars(select(col(Answer.id)).where(
            col(Answer.assignment_id).in_(reads))).all()
    assert len(reads) == 12 and len(answered) == 12  # every reader answered every one
    with_known = figures(demo_engine, tmp_path, study_id, "with")
    with Session(demo_engine) as session:
        session.execute(delete(Answer).where(col(Answer.assignment_id).in_(reads)))
        session.execute(delete(Assignment).where(col(Assignment.id).in_(reads)))
        session.execute(delete(StudyItem).where(col(StudyItem.id).in_(known)))
        session.commit()
    without = figures(demo_engine, tmp_path, study_id, "without")
    assert with_known.keys() == without.keys()
    for name in with_known:
        assert json.dumps(with_known[name], sort_keys=True) == json.dumps(without[name], sort_keys=True), name
