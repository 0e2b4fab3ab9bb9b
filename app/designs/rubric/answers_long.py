"""A study's reads in long format: one row per case x reader x question, the judge's answer
beside the reader's, as statistics packages read them."""

from collections.abc import Iterator

from sqlmodel import Session

from app.agreement.reads import load
from app.agreement.stats import pass_fail
from app.csv_cells import CsvRows
from app.studies.export import CHUNK
from app.studies.models import Study
from app.studies.viewer_tools import VIEWER_TOOLS
from pipeline.vocabulary import QUESTIONS

# Per tool, how often the reader turned it on and for how long (0 when unused, blank when the
# page recorded nothing, as for reads made before tool use was recorded).
TOOL_COLUMNS = tuple(f"{tool}_{what}" for tool in VIEWER_TOOLS for what in ("uses", "ms"))
LONG_HEADER = ("study", "case", "task", "modality", "disease", "direction", "round", "reader",
               "repeat", "question", "answer", "judge_answer", "time_on_case_ms", "version",
               *TOOL_COLUMNS)


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
        tools = _tool_cells(read.tool_use, recorded=read.time_on_case_ms is not None)
        for question in QUESTIONS:
            rows.writerow((study.name, case.uid, case.task_key, case.modality, case.disease,
                           case.direction, case.round, read.reader, read.repeat, question,
                           read.answers[question], pass_fail(case.judge.get(question)),
                           read.time_on_case_ms if read.time_on_case_ms is not None else "",
                           read.version, *tools))
        if n % CHUNK == CHUNK - 1:
            yield rows.take()
    yield rows.take()


def _tool_cells(use: dict[str, dict[str, int]], *, recorded: bool) -> list[int | str]:
    if not use and not recorded:
        return [""] * len(TOOL_COLUMNS)
    return [use.get(tool, {}).get(what, 0) for tool in VIEWER_TOOLS for what in ("uses", "ms")]
