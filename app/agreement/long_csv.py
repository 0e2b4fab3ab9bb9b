"""A study's reads in long format: one row per case x reader x question, the judge's answer
beside the reader's, as statistics packages read them."""

from collections.abc import Iterator

from sqlmodel import Session

from app.agreement.reads import load
from app.agreement.stats import pass_fail
from app.csv_cells import CsvRows
from app.studies.export import CHUNK
from app.studies.models import Study
from pipeline.vocabulary import QUESTIONS

LONG_HEADER = ("study", "case", "task", "modality", "disease", "direction", "round", "reader",
               "repeat", "question", "answer", "judge_answer", "time_on_case_ms", "version")


def iter_long_csv(session: Session, study: Study) -> Iterator[str]:
    """One row per case x reader x question, for the answer in force: the layout statistics
    packages read directly. Withdrawn answers are left out; answers.csv keeps them."""
    rows = CsvRows()
    rows.writerow(LONG_HEADER)
    yield rows.take()
    data = load(session, study)
    cases = {c.item_id: c for c in data.cases}
    for n, read in enumerate(sorted(data.reads, key=lambda r: (r.reader, r.item_id, r.repeat))):
        case = cases[read.item_id]
        for question in QUESTIONS:
            rows.writerow((study.name, case.uid, case.task_key, case.modality, case.disease,
                           case.direction, case.round, read.reader, read.repeat, question,
                           read.answers[question], pass_fail(case.judge.get(question)),
                           read.time_on_case_ms if read.time_on_case_ms is not None else "",
                           read.version))
        if n % CHUNK == CHUNK - 1:
            yield rows.take()
    yield rows.take()
