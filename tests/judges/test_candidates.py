"""Adding a candidate judge: its template checked on every kind of task the data holds."""

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.errors import Invalid
from app.judges.candidates import CandidatePlan, create_candidate, data_kinds
from pipeline.judge_spec import SAMPLES, default_template


def _plan(template: str) -> CandidatePlan:
    return CandidatePlan(name="branching", backend="offline", model="offline-heuristic-1",
                         template=template)


def test_a_template_that_branches_on_a_disease_no_sample_has_is_refused(
        demo_engine: Engine) -> None:
    """The check rendered 12 samples of three diseases; a template that broke on any other
    disease of the data was kept, and failed on every such task of every job."""
    with Session(demo_engine) as session:
        sampled = {s["disease"] for s in SAMPLES}
        other = next(d for _, d, _ in data_kinds(session) if d not in sampled)
        broken = f"{{% if disease == {other!r} %}}{{{{ no_such_variable }}}}{{% endif %}}"
        with pytest.raises(Invalid, match="no_such_variable"):
            create_candidate(session, _plan(broken + default_template()), None)
        create_candidate(session, _plan(default_template()), None)  # the default still goes


def test_data_kinds_are_every_modality_disease_and_direction_of_the_tasks(
        demo_engine: Engine) -> None:
    with Session(demo_engine) as session:
        kinds = data_kinds(session)
    assert len(kinds) == len(set(kinds)) > 6
    assert {m for m, _, _ in kinds} == {"chest_xray", "brain_mri", "fundus"}
    assert {r for _, _, r in kinds} == {"add", "remove"}
