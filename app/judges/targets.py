"""Where the judge of record and the readers disagreed on a locked study's edits, as lists to
act on: the edits the readers rejected and the judge accepted (to regenerate, with the
promoted judge and the readers' comments), and the reverse, the edits the judge rejected and
the readers accepted (to review: the judge may be throwing good edits away)."""

from dataclasses import dataclass

from sqlmodel import Session

from app.agreement.reads import StudyReads
from app.judges.reference import reference_study


@dataclass(frozen=True)
class Target:
    item_id: int
    task_id: int
    task_key: str
    disease: str
    direction: str
    round: int


@dataclass(frozen=True)
class Targets:
    study_id: int
    let_through: list[Target]  # the readers rejected it, the judge accepted it
    thrown_away: list[Target]  # the judge rejected it, the readers accepted it
    settled: int  # edits with a settled overall reference

    @property
    def tasks_to_regenerate(self) -> list[int]:
        return list(dict.fromkeys(t.task_id for t in self.let_through))


def targets(session: Session, study_id: int) -> Targets:
    """The study's disagreements on the overall question; 409 unless it is locked and settled."""
    _, data, settled = reference_study(session, study_id)
    return targets_of(study_id, data, settled)


def targets_of(study_id: int, data: StudyReads, settled: dict[int, dict[str, bool]]) -> Targets:
    """``targets`` from a study's reads and reference already loaded."""
    let_through, thrown_away = [], []
    count = 0
    for case in data.cases:
        readers = settled.get(case.item_id, {}).get("overall")
        judge = case.judge.get("overall")
        if readers is None:
            continue
        count += 1
        target = Target(case.item_id, case.task_id, case.task_key, case.disease, case.direction,
                        case.round)
        if judge is True and readers is False:
            let_through.append(target)
        elif judge is False and readers is True:
            thrown_away.append(target)
    return Targets(study_id, let_through, thrown_away, count)
