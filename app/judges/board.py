"""The leaderboard of a reference: the judge of record and every candidate scored on it (and
every panel of them) against the readers' settled reference, from the stored answers
(app/judges/scoring.py stores them; app/judges/leaderboard.py computes the figures)."""

from dataclasses import replace

from sqlalchemy import func, select
from sqlmodel import Session, col

from app.agreement.dawid_skene import skill_weighted
from app.charts import Point, forest_chart
from app.judges.candidates import get_candidate
from app.judges.leaderboard import RECORD, Answers, Board, boards
from app.judges.models import CandidateVerdict, JudgeCandidate
from app.judges.panels import majority, share_passing, stacked
from app.judges.reference import Ref, Reference, as_ref, load_reference, study_ids_of
from app.memo import Memo
from app.models import JudgeVerdict
from app.studies.models import Adjudication
from pipeline.vocabulary import DIMENSIONS, QUESTIONS


def panel_answers(name: str, rule: str, members: list[Answers],
                  reference: list[dict[str, bool | None]], clusters: list[object]) -> Answers:
    """A panel's answers on the reference's edits from its members' first answers: by
    majority, or stacked on the readers' reference with cross-fitting (app/judges/panels.py)."""
    answers: list[dict[str, bool | None]] = [{} for _ in reference]
    score: list[float | None] = [None] * len(reference)
    for question in QUESTIONS:
        votes = [[a.get(question) for a in m.usual[0]] for m in members]
        if rule == "stacked":
            combined, probability = stacked(votes, [r.get(question) for r in reference], clusters)
        else:
            combined, probability = majority(votes), share_passing(votes)
        for i, value in enumerate(combined):
            answers[i][question] = value
        if question == "overall":
            score = probability
    return Answers(name, [answers], score, panel=True)


# A verdict's columns as the leaderboard reads them: tens of thousands of rows for ten
# candidates on a 1,000-edit reference, so columns, not ORM objects.
_READ = (col(CandidateVerdict.candidate_id), col(CandidateVerdict.item_id),
         col(CandidateVerdict.repeat), col(CandidateVerdict.original_first),
         col(CandidateVerdict.error), col(CandidateVerdict.weighted_score),
         *(col(getattr(CandidateVerdict, d)) for d in DIMENSIONS), col(CandidateVerdict.qualified))
_ANSWERED = (*DIMENSIONS, "overall")


def leaderboard(session: Session, ref: Ref | int, candidate_ids: list[int] | None = None, *,
                resamples: int | None = None, questions: tuple[str, ...] = QUESTIONS,
                loaded: Reference | None = None) -> dict[str, Board]:
    """Per question (every one, or those asked for), the judge of record and the candidates
    scored on this reference (``loaded``: the reference, when the caller has it already).
    Kept until a candidate's answer is added: a locked study's reads cannot change (its
    newest adjudication is in the key all the same)."""
    ref = as_ref(ref)
    studies = loaded.study_ids if loaded is not None else study_ids_of(session, ref)
    stored = session.execute(select(func.count(), func.max(CandidateVerdict.id)).where(
        col(CandidateVerdict.study_id).in_(studies))).one()
    decided = session.scalar(select(func.max(Adjudication.id)).where(
        col(Adjudication.study_id).in_(studies)))
    made = session.scalar(select(func.max(JudgeCandidate.id)))  # a new panel adds no answer
    key = (session.get_bind().engine.url.render_as_string(hide_password=True), ref, studies,
           tuple(stored), decided, made, tuple(candidate_ids or ()), resamples, questions)
    return _boards.get_or_make(key, lambda: _leaderboard(
        session, loaded or load_reference(session, ref), candidate_ids, resamples, questions))


_boards: Memo[dict[str, Board]] = Memo(16)
_weighted: Memo[tuple[Board | None]] = Memo(16)
# Only the order and the point figures are compared: a short bootstrap is enough for them.
WEIGHTED_RESAMPLES = 200


def weighted_board(session: Session, loaded: Reference, question: str) -> Board | None:
    """The board of one question when the reference is the skill-weighted one (Dawid-Skene,
    app/agreement/dawid_skene.py) fitted to the reference's reads instead of the readers'
    majority: how far the order moves. None with fewer than three readers (dawid_skene.MIN_READERS)."""
    studies = loaded.study_ids
    stored = session.execute(select(func.count(), func.max(CandidateVerdict.id)).where(
        col(CandidateVerdict.study_id).in_(studies))).one()
    decided = session.scalar(select(func.max(Adjudication.id)).where(
        col(Adjudication.study_id).in_(studies)))
    key = (session.get_bind().engine.url.render_as_string(hide_password=True), loaded.ref,
           studies, tuple(stored), decided, session.scalar(select(func.max(JudgeCandidate.id))),
           question)

    def make() -> tuple[Board | None]:
        model = skill_weighted(loaded.data, question)
        if model is None:
            return (None,)
        # Only the edits the majority reference settles too: the two boards rank on one set.
        settled = {item: {question: label} for item, label in model.labels.items()
                   if question in loaded.settled.get(item, {})}
        return (_leaderboard(session, replace(loaded, settled=settled), None, WEIGHTED_RESAMPLES,
                             (question,))[question],)

    return _weighted.get_or_make(key, make)[0]


def _leaderboard(session: Session, loaded: Reference, candidate_ids: list[int] | None,
                 resamples: int | None, questions: tuple[str, ...]) -> dict[str, Board]:
    settled = loaded.settled
    cases = [c for c in loaded.data.cases if c.item_id in settled]
    items = {c.item_id for c in cases}
    reference: list[dict[str, bool | None]] = [dict(settled[c.item_id]) for c in cases]
    # The judge of record's weighted scores, from its frozen verdicts: its AUC beside the
    # candidates'.
    frozen = [c.judge_verdict_id for c in cases if c.judge_verdict_id is not None]
    weighted = dict(session.connection().execute(
        select(col(JudgeVerdict.id), col(JudgeVerdict.weighted_score))
        .where(col(JudgeVerdict.id).in_(frozen))).all()) if frozen else {}
    record = Answers(RECORD, [[dict(c.judge) for c in cases]],
                     [weighted.get(c.judge_verdict_id) if c.judge else None for c in cases])
    query = select(*_READ).where(col(CandidateVerdict.study_id).in_(loaded.study_ids))
    if candidate_ids is not None:
        query = query.where(col(CandidateVerdict.candidate_id).in_(candidate_ids))
    # (candidate, item, repeat, original first) -> (answers, weighted score); the first row
    # stored for a key stands (a unique constraint keeps it the only one).
    by: dict[tuple[int, int, int, bool], tuple[dict[str, bool | None], float | None]] = {}
    for candidate_id, item_id, repeat, first, error, score, *answers in session.connection().execute(
            query.order_by(col(CandidateVerdict.id))):
        key = (candidate_id, item_id, repeat, bool(first))
        if key not in by and item_id in items:  # a sentinel set holds some of its studies' edits
            by[key] = ({} if error is not None else dict(zip(_ANSWERED, answers, strict=True)),
                       score if error is None else None)
    found = []
    empty: tuple[dict[str, bool | None], float | None] = ({}, None)
    scored: dict[int, Answers] = {}
    for candidate_id in sorted({key[0] for key in by}):
        candidate = get_candidate(session, candidate_id)
        repeats = max(key[2] for key in by if key[0] == candidate_id) + 1
        usual = [[by.get((candidate_id, c.item_id, r, False), empty)[0] for c in cases]
                 for r in range(repeats)]
        scores = [by.get((candidate_id, c.item_id, 0, False), empty)[1] for c in cases]
        swapped = [by.get((candidate_id, c.item_id, 0, True), empty)[0] for c in cases]
        scored[candidate_id] = Answers(candidate.name, usual, scores, swapped if any(swapped) else None)
        found.append(scored[candidate_id])
    clusters = [c.cluster for c in cases]
    for panel in session.scalars(select(JudgeCandidate).where(col(JudgeCandidate.members).is_not(None))
                                 .order_by(col(JudgeCandidate.id))):
        if candidate_ids is not None and panel.id not in candidate_ids:
            continue
        members = [scored[m] for m in panel.member_ids if m in scored]
        if len(members) == len(panel.member_ids):  # every member scored on this study
            found.append(panel_answers(panel.name, panel.rule or "majority", members, reference,
                                       clusters))
    found_boards = boards(clusters, reference, record, found,
                          resamples=resamples, questions=questions)
    edits = tuple((c.task_id, c.task_key) for c in cases)
    return {q: replace(b, edits=edits) for q, b in found_boards.items()}


FOREST = (("agreement", "Agreement"), ("a_stricter", "Too strict"), ("a_more_lenient", "Too lenient"))
_forests: Memo[str] = Memo(16)


def forest_plot(board: Board) -> str:
    """The leaderboard as a forest plot (SVG): each judge's agreement with the readers, and
    how often it is too strict and too lenient, with their 95 % intervals; the judge of
    record marked. Kept by the figures it draws, which the table beside it lists."""
    rows = tuple((row.name, row.n, tuple(Point(row.name, "judge", f.value, f.low, f.high, f.n)
                                         for f in (row.figures[name] for name, _ in FOREST)))
                 for row in board.rows)
    title = f"{board.question}: each judge against the readers (cluster bootstrap 95 % CI)"
    return _forests.get_or_make((rows, title), lambda: forest_chart(
        rows, [label for _, label in FOREST], RECORD, title))
