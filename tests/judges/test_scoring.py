"""Offline candidates with known faults, scored on a locked study: the leaderboard shows each
fault as its bias implies, and scoring is resumable."""

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.errors import Conflict, Invalid
from app.judges.board import leaderboard
from app.judges.candidates import CandidatePlan, create_candidate
from app.judges.leaderboard import RECORD
from app.judges.reference import reference_study
from app.judges.scoring import offline_judge, score
from app.studies.models import Design
from pipeline.judge_spec import default_template
from tests import aio
from tests.reference_study import Reference, candidate
from tests.studies.conftest import make_study

QUESTIONS = ("compliance", "structure", "realism", "fidelity", "overall")


def test_the_leaderboard_shows_each_offline_fault(demo_engine: Engine, reference: Reference) -> None:
    made = {bias or "fair": candidate(demo_engine, bias or "fair", bias, repeats=2 if bias == "noisy" else 1)
            for bias in (None, "lenient", "strict", "order_biased", "noisy")}
    for judge in made.values():
        done = aio.run(score(demo_engine, judge.id or 0, reference.study_id, offline_judge))
        assert done.asked > 0 and done.failed == 0
        again = aio.run(score(demo_engine, judge.id or 0, reference.study_id, offline_judge))
        assert again.asked == 0  # resumable: nothing stored is asked twice
    with Session(demo_engine) as session:
        boards = leaderboard(session, reference.study_id, resamples=300)
    rows = {q: {r.name: r for r in boards[q].rows} for q in QUESTIONS}
    assert all(set(r) == {RECORD, *made} for r in rows.values())
    for q in QUESTIONS:
        fair = rows[q]["fair"].figures
        assert fair["agreement"].value == 1.0  # the readers answered by the fair rule
        assert rows[q]["lenient"].figures["a_stricter"].value == 0.0
        assert rows[q]["strict"].figures["a_more_lenient"].value == 0.0
        assert rows[q]["fair"].order is not None and rows[q]["fair"].order.flipped.value == 0.0
    # Each fault falls on some of the 16 edits.
    assert any(rows[q]["lenient"].figures["a_more_lenient"].value > 0 for q in QUESTIONS)
    assert any(rows[q]["strict"].figures["a_stricter"].value > 0 for q in QUESTIONS)
    order = [rows[q]["order_biased"].order for q in QUESTIONS]
    assert all(o is not None for o in order)
    # With the original first it sees nothing added, and fails what it passed.
    assert any(o.flipped.value > 0 and o.pass_rate_change.value < 0 for o in order if o)
    assert all(rows[q][name].order.flipped.value == 0.0 for q in QUESTIONS
               for name in ("lenient", "strict"))
    noisy = [rows[q]["noisy"].consistency for q in QUESTIONS]
    assert all(c is not None for c in noisy) and any(c.value < 1 for c in noisy if c)
    assert rows["overall"]["fair"].auc is not None
    # Nothing is ranked above the fair judge, and it is not ranked above what it cannot be
    # told apart from.
    for q in QUESTIONS:
        assert all("fair" not in r.above for r in rows[q].values())


def test_a_reference_must_be_locked_and_settled(demo_engine: Engine) -> None:
    setup = make_study(demo_engine, readers=2, design=Design.validation)
    with Session(demo_engine) as session, pytest.raises(Conflict, match="not locked"):
        reference_study(session, setup.study.id or 0)
    from app.studies.versions import lock_study
    with Session(demo_engine) as session:
        study = session.merge(setup.study)
        lock_study(session, study)
        with pytest.raises(Conflict, match="no settled reference"):
            reference_study(session, study.id or 0)


@pytest.mark.parametrize(("change", "field", "words"), [
    ({"template": "Judge {{ instruction }} {% if %}"}, "template", "does not render"),
    ({"template": "Judge {{ nonsense }}"}, "template", "nonsense"),
    ({"template": "Judge the edit: {{ instruction }}"}, "template", "never names compliance"),
    ({"template": "compliance structure realism fidelity has_disease weighted_score qualified "
                  "reason"}, "template", "instruction"),
    ({"template": "{{ ''.__class__.__mro__ }} {{ instruction }}"}, "template", "does not render"),
    ({"bias": "lenient", "backend": "gemini"}, "bias", "offline backend only"),
    ({"repeats": 9}, "repeats", "1 to 5"),
    ({"temperature": 3.0}, "temperature", "0 to 2"),
    ({"name": ""}, "name", "name the candidate"),
    ({"model": "bad model!"}, "model", "model's name"),
])
def test_a_bad_candidate_is_refused_naming_its_field(demo_engine: Engine, change: dict[str, object],
                                                     field: str, words: str) -> None:
    values: dict[str, object] = {"name": "good", "backend": "offline", "model": "m-1",
                                 "template": default_template(), **change}
    with Session(demo_engine) as session, pytest.raises(Invalid, match=words) as refused:
        create_candidate(session, CandidatePlan(**values), created_by=None)  # type: ignore[arg-type]
    assert refused.value.field == field


def test_a_candidate_names_exactly_what_produced_its_verdicts(demo_engine: Engine) -> None:
    first = candidate(demo_engine, "a")
    with Session(demo_engine) as session:
        reworded = create_candidate(session, CandidatePlan(
            name="b", backend="offline", model="offline-heuristic-1",
            template=default_template() + "\nBe brief."), created_by=None)
        with pytest.raises(Invalid, match="already named"):
            create_candidate(session, CandidatePlan(name="a", backend="offline", model="m",
                                                    template=default_template()), created_by=None)
    assert first.version != reworded.version and len(first.version) == 12
    assert reworded.template.endswith("Be brief.")


def test_a_kept_leaderboard_follows_new_answers(demo_engine: Engine, reference: Reference) -> None:
    first = candidate(demo_engine, "first", "strict")
    aio.run(score(demo_engine, first.id or 0, reference.study_id, offline_judge))
    with Session(demo_engine) as session:
        before = leaderboard(session, reference.study_id, resamples=200, questions=("overall",))
        assert leaderboard(session, reference.study_id, resamples=200,
                           questions=("overall",)) is before  # kept
    second = candidate(demo_engine, "second", "lenient")
    aio.run(score(demo_engine, second.id or 0, reference.study_id, offline_judge))
    with Session(demo_engine) as session:
        after = leaderboard(session, reference.study_id, resamples=200, questions=("overall",))
    assert {r.name for r in after["overall"].rows} == {RECORD, "first", "second"}
    assert set(before) == {"overall"}


def test_panels_of_scored_candidates_join_the_leaderboard(demo_engine: Engine,
                                                          reference: Reference) -> None:
    from app.judges.candidates import create_panel
    from app.judges.promotion import promote

    made = [candidate(demo_engine, name, bias) for name, bias in
            (("lenient", "lenient"), ("strict", "strict"), ("fair", None))]
    for judge in made:
        aio.run(score(demo_engine, judge.id or 0, reference.study_id, offline_judge))
    ids = [m.id or 0 for m in made]
    with Session(demo_engine) as session:
        vote = create_panel(session, "three vote", ids, "majority", None)
        create_panel(session, "three stacked", ids, "stacked", None)
        with pytest.raises(Invalid, match="at least two"):
            create_panel(session, "alone", ids[:1], "majority", None)
        with pytest.raises(Invalid, match="not panels"):
            create_panel(session, "nested", [ids[0], vote.id or 0], "majority", None)
        with pytest.raises(Invalid, match="is a panel"):
            promote(session, vote.id, None)
        with pytest.raises(Conflict, match="is a panel"):
            from app.judges.scoring import plan
            plan(session, vote, reference.study_id)
        boards = leaderboard(session, reference.study_id, resamples=200)
    rows = {r.name: r for r in boards["overall"].rows}
    assert {"three vote", "three stacked"} <= set(rows)
    assert rows["three vote"].n > 0 and rows["three vote"].auc is not None
    assert rows["three stacked"].figures["agreement"].value is not None


def test_a_failed_answer_is_kept_with_its_reason_and_asked_again(demo_engine: Engine,
                                                                  reference: Reference) -> None:
    from sqlalchemy import select
    from sqlmodel import col

    from app.judges.models import CandidateVerdict
    from pipeline.backend import BackendError

    async def down(*_: object) -> object:
        raise BackendError("503 UNAVAILABLE: the model is overloaded")

    judge = candidate(demo_engine, "flaky")
    first = aio.run(score(demo_engine, judge.id or 0, reference.study_id, down))  # type: ignore[arg-type]
    assert first.asked == first.failed > 0
    again = aio.run(score(demo_engine, judge.id or 0, reference.study_id, offline_judge))
    assert again.asked == first.asked and again.failed == 0
    with Session(demo_engine) as session:
        rows = session.scalars(select(CandidateVerdict).where(
            col(CandidateVerdict.candidate_id) == judge.id)).all()
    assert len(rows) == first.asked and all(r.error is None for r in rows)
    assert aio.run(score(demo_engine, judge.id or 0, reference.study_id, offline_judge)).asked == 0


def test_the_judge_of_record_has_the_auc_of_its_frozen_scores(demo_engine: Engine,
                                                              reference: Reference) -> None:
    from sklearn.metrics import roc_auc_score
    from sqlalchemy import update
    from sqlmodel import col

    from app.models import JudgeVerdict

    with Session(demo_engine) as session:
        _, data, settled = reference_study(session, reference.study_id)
        before = leaderboard(session, reference.study_id, resamples=300, questions=("overall",))
        # The demo's runs, like the paper's files, keep no weighted score: no AUC to show.
        assert {r.name: r for r in before["overall"].rows}[RECORD].auc is None
        cases = [c for c in data.cases if c.item_id in settled and c.judge_verdict_id]
        # Scores as a run that keeps them would: higher where the readers passed the edit,
        # with overlap so the AUC is neither 0.5 nor 1.
        scores = {c.judge_verdict_id: round(0.4 + 0.2 * settled[c.item_id]["overall"]
                                            + 0.1 * (i % 4), 2) for i, c in enumerate(cases)}
        for verdict_id, value in scores.items():
            session.execute(update(JudgeVerdict).where(col(JudgeVerdict.id) == verdict_id)
                            .values(weighted_score=value))
        session.commit()
        board = leaderboard(session, reference.study_id, resamples=301, questions=("overall",))
    record = {r.name: r for r in board["overall"].rows}[RECORD]
    truth = [settled[c.item_id]["overall"] for c in cases]
    expected = roc_auc_score(truth, [scores[c.judge_verdict_id] for c in cases])
    assert len(set(truth)) == 2 and 0.5 < expected < 1
    assert record.auc is not None and record.auc.value == pytest.approx(expected)
    assert record.auc.low is not None and record.auc.low <= expected <= (record.auc.high or 0)
