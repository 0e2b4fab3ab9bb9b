"""Which of a study's cases are complete, and when: an image (or, in an adaptive study that
draws edits, a case) counts once every read assigned on it is in, compared with the readers'
consensus as it stood then. The live figures (app/agreement/monitoring.py) and the adaptive
sampler (app/designs/adaptive/top_up.py) take their observations from here.
"""

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from datetime import datetime

from app.agreement.reads import Case, StudyReads, vote
from app.agreement.reference import consensus
from app.agreement.report import first_reads
from app.agreement.stats import Vote


@dataclass(frozen=True)
class ImageObservation:
    cluster: object
    completed_at: datetime | None
    verdicts: list[tuple[int, Vote, Vote]]  # per case: item id, the judge, the consensus
    ties: int = 0  # cases the readers left tied: out of the sequence, for adjudication

    @property
    def judge_ref(self) -> list[tuple[bool, bool]]:
        """The compared cases: both the judge and the readers decided."""
        return [(bool(j), bool(r)) for _, j, r in self.verdicts if j is not None and r is not None]


def completed_images(data: StudyReads, question: str, *,
                     by_item: bool = False) -> list[ImageObservation]:
    """Every source image whose assigned reads are all in, in the order they were completed;
    ``by_item``: every case, each its own unit (an adaptive study that draws edits)."""
    return completed_by_question(data, (question,), by_item=by_item)[question]


def completed_by_question(data: StudyReads, questions: Sequence[str], *,
                          by_item: bool = False) -> dict[str, list[ImageObservation]]:
    """``completed_images`` for several questions: which images are complete, and when, is
    the same for all of them, so it is worked out once."""
    reads = first_reads(data.reads)
    by_image: dict[object, list[Case]] = {}
    for case in data.cases:
        by_image.setdefault(case.item_id if by_item else case.cluster, []).append(case)
    complete: list[tuple[object, list[Case], datetime | None]] = []
    for cluster, cases in by_image.items():
        answered = [reads.get((name, c.item_id)) for c in cases for name in c.assigned]
        if not answered or any(r is None for r in answered):
            continue
        times = [r.answered_at for r in answered if r is not None and r.answered_at is not None]
        complete.append((cluster, cases, max(times, default=None)))
    complete.sort(key=lambda image: (image[2] or datetime.min, str(image[0])))
    found: dict[str, list[ImageObservation]] = {}
    for question in questions:
        found[question] = []
        for cluster, cases, completed_at in complete:
            votes = [[vote(reads[(name, c.item_id)].answers[question]) for name in c.assigned]
                     for c in cases]
            references = [consensus(v)[0] for v in votes]
            ties = sum(r is None and any(x is not None for x in v)
                       for r, v in zip(references, votes, strict=True))
            found[question].append(ImageObservation(cluster, completed_at, [
                (c.item_id, c.judge.get(question), r)
                for c, r in zip(cases, references, strict=True)], ties))
    return found


def in_fixed_order(images: list[ImageObservation],
                   order: Sequence[Hashable]) -> list[ImageObservation]:
    """The complete images that have entered the sequence: the study's images in its fixed
    random order, up to the first not yet complete. Each enters when it and every image
    before it are complete (its time is the latest of theirs)."""
    complete = {o.cluster: o for o in images}
    entered: list[ImageObservation] = []
    latest: datetime | None = None
    for cluster in order:
        found = complete.get(cluster)
        if found is None:
            break
        if found.completed_at is not None and (latest is None or found.completed_at > latest):
            latest = found.completed_at
        entered.append(ImageObservation(found.cluster, latest, found.verdicts, found.ties))
    return entered


def overturned(data: StudyReads, question: str, *, by_item: bool = False) -> dict[int, bool | None]:
    """Item id -> whether the readers' consensus overturned the judge (None: no consensus or
    no verdict), for the cases of every completed image (``by_item``: every completed case):
    what the adaptive sampler learns from (app/designs/adaptive/prior.py, edits.py)."""
    return {item: None if judge is None or reference is None else judge != reference
            for o in completed_images(data, question, by_item=by_item)
            for item, judge, reference in o.verdicts}
