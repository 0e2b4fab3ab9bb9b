"""Each study design declares what it is once, in its own package (app/designs), and the shared
machinery asks its traits (app/studies/design_traits.py): they must agree with what its
sampling accepts."""

import subprocess
import sys

import pytest

from app.studies.design_traits import default_design, designs, rubric_kinds, traits_of
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
    assert sorted(rubric_kinds()) == sorted(d.value for d in with_rubric)
    assert {d for d in Design if d.single_image} == {d for d in Design if d.one_per_source_image} \
        == {Design.real_or_edited}
    assert {d for d in Design if d.judged} == {Design.validation, Design.adaptive}
    assert {d for d in Design if d.frames_the_data_set} == {Design.validation, Design.accepted}
    assert {d for d in Design if d.draws_in_batches} == {Design.adaptive}
    assert {d for d in Design if d.reads_rounds} == {Design.runs}
    assert {d for d in Design if d.accepted_only} == {Design.accepted, Design.real_or_edited}
    assert {d for d in Design if d.traits.strata_by_verdict} == {Design.validation}
    assert {d for d in Design if not d.traits.compares_judge} \
        == {d for d in Design if d.traits.shows_originals} == {Design.real_or_edited}
    assert default_design() is Design.validation


def test_every_stored_kind_is_declared_by_one_design_in_the_registrys_order() -> None:
    assert sorted(designs()) == sorted(Design)
    assert all(traits_of(kind).kind is kind for kind in Design)
    # The new-study form lists them in this order.
    assert designs()[:4] == [Design.validation, Design.accepted, Design.runs, Design.adaptive]


def test_shared_code_asking_first_has_the_designs_declared() -> None:
    # A process that never imported app.designs (a worker, a script) still gets the traits:
    # the first question loads the designs' registry.
    asked = ("import sys; from app.studies.models import Design; "
             "assert 'app.designs' not in sys.modules; "
             "print(Design.accepted.accepted_only, Design.pairwise.rubric, sorted(sys.modules)"
             ".count('app.designs.registry'))")
    out = subprocess.run([sys.executable, "-c", asked], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False", "1"]
