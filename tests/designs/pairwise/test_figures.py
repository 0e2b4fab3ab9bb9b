"""A pairwise study's figures: runs compared by how each was made, and consecutive rounds
with the later one's share; each figure with its n."""

from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.cases.filters import CaseFilter
from app.designs import design_of, pairwise_figures
from app.designs.pairwise.answers import PairAnswerIn, submit, undo_last
from app.designs.pairwise.figures import reads_of
from app.models import Role, Task
from app.studies.design import StudyPlan
from app.studies.models import Assignment, Design, StudyPair
from tests.accounts import add_user
from tests.regeneration import regenerate_offline


def test_runs_are_compared_by_how_they_were_made(demo_engine: Engine, tmp_path: Path) -> None:
    with Session(demo_engine) as session:
        tasks = [t.id or 0 for t in session.exec(select(Task).order_by(Task.id).limit(6)).all()]
    regenerate_offline(demo_engine, tasks, tmp_path)
    admin = add_user(demo_engine, "chief", Role.admin)
    reader = add_user(demo_engine, "dr-a", Role.reader)
    plan = StudyPlan(name="before and after", case_filter=CaseFilter(), reader_ids=[reader.id or 0],
                     design=Design.pairwise, total=4)
    with Session(demo_engine) as session:
        study = design_of(Design.pairwise).create(session, replace(plan, pair_kind="runs"), admin)
        reads = session.exec(select(Assignment).where(Assignment.study_id == study.id)
                             .order_by(Assignment.sequence)).all()
        for i, assignment in enumerate(reads):
            submit(session, study, assignment, PairAnswerIn(
                call=["a", "b", "equal"][i % 3], confidence=3, submission_id=f"runs-{i:04d}"))
        figures = pairwise_figures(session, study, resamples=200)
        # Kept until an answer is added: an undo (a new version) is seen at once.
        assert pairwise_figures(session, study, resamples=200) is figures
        undo_last(session, study, reader.id or 0)
        assert pairwise_figures(session, study, resamples=200).reads == 3
    assert figures.kind == "runs" and figures.reads == 4 and figures.pairs == 4
    # Two editors: the data set's own edits, and the offline backend's regeneration.
    assert figures.by_editor is not None
    assert figures.by_editor.labels == ["imported", "regenerated · offline-heuristic-1"]
    assert figures.by_editor.figures.n == 4 and figures.by_editor.figures.ties == 1
    # The later run (the regeneration) preferred: of the 3 reads that preferred one run.
    assert figures.later is not None and figures.later.n == 3
    assert figures.later.value == figures.choices["second"] / 3
    assert figures.premature is None  # the judge passed both or neither of each pair
    assert figures.left.n == 3 and figures.choices["equal"] == 1


def test_premature_acceptance_and_wrongful_rejection_follow_the_judges_verdicts() -> None:
    from app.designs.pairwise.figures import Read, _judged, _premature, _wrongful

    def read(image: int, choice: str, first_passed: bool, second_passed: bool) -> Read:
        return Read(image, "r", choice, True, image, "consecutive", 1, 2, 1, 1,
                    first_passed, second_passed)

    # The judge failed round 1 and passed round 2 (a consecutive pair), and the reverse.
    reads = [read(1, "first", False, True),  # the failed one preferred: premature, wrongful
             read(2, "equal", False, True),  # equal: wrongful only
             read(3, "neither", False, True),  # both unacceptable: premature only
             read(4, "second", True, False),  # the failed (second) preferred: both
             read(5, "first", True, False),  # the judge's choice preferred: neither
             read(6, "first", True, True)]  # both passed: not counted
    premature = _judged(reads, _premature, 200)
    wrongful = _judged(reads, _wrongful, 200)
    assert premature is not None and premature.n == 5 and premature.value == 3 / 5
    assert wrongful is not None and wrongful.n == 4 and wrongful.value == 3 / 4


def test_editors_are_compared_only_where_two_editors_meet() -> None:
    from app.designs.pairwise.figures import Read, _by_editor

    editors = {1: "imported", 2: "regenerated · model-b", 3: "regenerated · model-b",
               4: "regenerated · model-a"}

    def read(image: int, first: int, second: int, choice: str) -> Read:
        return Read(image, "r", choice, image % 2 == 0, image, "runs", 2, 2, first, second)

    reads = [read(i, 1, 2, "second") for i in range(6)] + [
        read(10 + i, 2, 3, "first") for i in range(5)] + [
        read(20 + i, 1, 4, ["first", "second", "equal"][i % 3]) for i in range(6)]
    found = _by_editor(reads, editors, 200)
    assert found is not None
    # The data set's own edits are the reference; model-b against model-b says nothing.
    assert found.labels == ["imported", "regenerated · model-a", "regenerated · model-b"]
    assert found.figures.n == 12 and found.figures.ties == 2
    assert _by_editor([read(1, 2, 3, "first")], editors, 200) is None


def test_each_refinement_step_has_its_own_share(demo_engine: Engine) -> None:
    """Round k + 1 against round k, step by step: each step's share of the reads that
    preferred one, and together the pooled share's reads."""
    admin = add_user(demo_engine, "chief", Role.admin)
    reader = add_user(demo_engine, "dr-a", Role.reader)
    # Fundus: the demo's one original left out on purpose is not among its tasks.
    plan = StudyPlan(name="steps", case_filter=CaseFilter(modality=("fundus",)),
                     reader_ids=[reader.id or 0], design=Design.pairwise, pair_kind="consecutive")
    design = design_of(Design.pairwise)
    with Session(demo_engine) as session:
        study = design.create(session, design.up_to(session, plan, 1000), admin)
        reads = session.exec(select(Assignment).where(Assignment.study_id == study.id)
                             .order_by(Assignment.sequence)).all()
        for i, assignment in enumerate(reads):
            submit(session, study, assignment, PairAnswerIn(
                call=["a", "b", "a", "equal"][i % 4], confidence=3, submission_id=f"steps-{i:04d}"))
        figures = pairwise_figures(session, study, resamples=200)
        first_rounds = [p.first_round for p in session.exec(select(StudyPair)).all()]
        answered = {r.item_id: r for r in reads_of(session, study)}
    assert figures.later is not None and set(figures.later_by_round) == set(first_rounds)
    assert len(figures.later_by_round) >= 2  # more than one step of refinement was read
    assert sum(f.n for f in figures.later_by_round.values()) == figures.later.n
    for k, figure in figures.later_by_round.items():
        step = [r for r in answered.values() if r.first_round == k and r.choice in ("first", "second")]
        assert figure.n == len(step)
        if step:
            assert figure.value == pytest.approx(sum(r.choice == "second" for r in step) / len(step))


def test_editors_of_many_runs_are_read_in_chunks(demo_engine: Engine) -> None:
    """A study of 20,000 pairs of runs names up to 40,000 runs: past SQLite's default limit on
    one statement's parameters (32,766; this machine's build allows more, so the test sets the
    default), so they are asked in chunks."""
    import sqlite3

    from app.designs.pairwise.figures import editors_of

    with Session(demo_engine) as session:
        raw = session.connection().connection.driver_connection
        assert isinstance(raw, sqlite3.Connection)
        raw.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 32_766)
        first = session.exec(select(Task).order_by(Task.id)).first()
        assert first is not None and first.latest_run_id is not None
        editors = editors_of(session, set(range(1, 40_001)))
    assert len(editors) == 40_000 and editors[first.latest_run_id] == "imported"
