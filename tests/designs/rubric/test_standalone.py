"""The self-contained study report: its description of the filter, and its checklist."""

from bs4 import BeautifulSoup
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.agreement.checklist import ITEMS
from app.agreement.reads import load
from app.designs.rubric.standalone import describe_filter, standalone_html
from app.studies.models import Design, Study
from tests.agreement.test_report import answer_all
from tests.studies.conftest import make_study


def test_the_filter_in_words_with_metric_bounds() -> None:
    """A numeric bound once raised a TypeError (the report was a 500)."""
    recorded = {"modality": ["chest_xray"], "disease": [], "q": "", "changed_min": 20.0,
                "regions_min": 0, "ssim_outside_max": None, "sort": "changed"}
    assert describe_filter(recorded) == "modality chest_xray; changed min 20.0; regions min 0"
    assert describe_filter({"modality": [], "q": "", "sort": ""}) == "all cases"


def test_the_report_answers_its_own_checklist(demo_engine: Engine) -> None:
    """Every GRRAS and STARD item the software can answer points at a section that exists and
    says something; the flow adds up; the design sentence is honest about unread cases."""
    setup = make_study(demo_engine, readers=3, design=Design.validation)
    with Session(demo_engine) as session:
        cases = load(session, setup.study).cases
    pattern = {name: ["yes" if c.judge["overall"] else "no" for c in cases]
               for name in ("reader-0", "reader-1", "reader-2")}
    answer_all(demo_engine, setup, pattern, skip={"reader-2": {0, 1, 2}})
    with Session(demo_engine) as session:
        study = session.get(Study, setup.study.id)
        assert study is not None
        page = BeautifulSoup(standalone_html(session, study), "html.parser")
    for item in ITEMS:
        if item.section is None:
            continue
        section = page.find(id=item.section)
        assert section is not None, f"{item.guideline} {item.number}: no #{item.section}"
        assert len(section.get_text(strip=True)) > 20, f"{item.guideline} {item.number}"
    rows = page.select("#checklist-table tbody tr")
    assert len(rows) == len(ITEMS) == 15 + 34  # STARD: 30 items, four of them split a and b
    links = {a["href"] for a in page.select("#checklist-table a")}
    assert all(page.find(id=href[1:]) is not None for href in links)
    sampled = int(page.select_one("#flow-sampled").get_text())
    compared = int(page.select_one("#flow-compared").get_text())
    excluded = sum(int(li.get_text().rsplit(":", 1)[1]) for li in page.select("#flow-excluded li")
                   if li.get_text().startswith("excluded"))
    assert sampled == len(cases) == compared + excluded
    assert "reader-2 read 13 of 16" in page.select_one("#overlap").get_text()
    assert "every reader read every case" not in page.get_text()
    assert page.select_one("#index-test").get_text().count("imported") >= 1
    assert page.select_one("#planning") is not None and "Achieved" in page.select_one("#planned").get_text()
    assert not page.select("link[href], script[src], img[src]")  # self-contained
