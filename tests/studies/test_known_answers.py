"""Drawing known-answer cases: when the settled pool cannot give what a share asks, the refusal
says how many it holds and why each left out is left out."""

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.errors import Invalid
from app.studies.known_answers import draw_known
from tests.readers.test_figures_without_known import mark_edits


def test_a_pool_that_cannot_serve_says_why_each_case_is_left_out(demo_engine: Engine) -> None:
    """"0 usable known-answer cases" while the form showed a pool of 12."""
    mark_edits(demo_engine, 12)  # chest X-ray edits
    with Session(demo_engine) as session, pytest.raises(Invalid) as refused:
        draw_known(session, 3, seed=1, reader_ids=[], leave_out_tasks=set(),
                   kinds={("fundus", "add")})
    said = str(refused.value)
    assert "holds 12 known-answer cases, 0 usable here" in said
    assert "12 because they are of a modality or direction this study's cases do not have" in said
    assert refused.value.field == "known_share"
