"""Each study design declares what it is once (app/studies/design_traits.py), and the rest of the app
asks it: its traits must agree with what its sampling accepts."""

import pytest

from app.studies.models import Design
from app.studies.pool import check_facets


@pytest.mark.parametrize("design", list(Design))
def test_a_designs_default_strata_are_ones_it_accepts(design: Design) -> None:
    assert check_facets(design, design.default_facets) is None
    # Strata by the judge's verdict only where the judge's verdicts are sampled.
    assert (check_facets(design, ("verdict",)) is None) == (design.judged and not design.draws_in_batches)


def test_the_traits_of_each_design() -> None:
    with_rubric = {d for d in Design if d.rubric}
    assert with_rubric == set(Design) - {Design.real_or_edited, Design.pairwise}
    assert {d for d in Design if d.pairs} == {Design.pairwise}
    assert Design.with_rubric() == [d.value for d in Design if d in with_rubric]
    assert {d for d in Design if d.single_image} == {d for d in Design if d.one_per_source_image} \
        == {Design.real_or_edited}
    assert {d for d in Design if d.judged} == {Design.validation, Design.adaptive}
    assert {d for d in Design if d.frames_the_data_set} == {Design.validation, Design.accepted}
    assert {d for d in Design if d.draws_in_batches} == {Design.adaptive}
    assert {d for d in Design if d.reads_rounds} == {Design.runs}
