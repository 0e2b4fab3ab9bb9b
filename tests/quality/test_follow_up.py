"""A follow-up study of one part of a study's frame: drawn like the root, recorded as its
follow-up, and taken into the root's estimate."""

import json

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.errors import Invalid
from app.models import Role, User
from app.quality.follow_up import allocate, create_follow_up
from app.quality.report import quality_report
from app.studies.models import Study, StudyItem
from tests.accounts import add_user
from tests.quality.conftest import read_study, validation_study


def test_reads_are_spread_in_proportion_to_the_strata() -> None:
    assert allocate({"pass/a": 60, "fail/a": 30, "pass/b": 10}, 10) == {"pass/a": 6, "fail/a": 3, "pass/b": 1}
    assert allocate({"x": 2, "y": 100}, 50) == {"x": 1, "y": 49}
    assert allocate({"x": 3, "y": 4}, 100) == {"x": 3, "y": 4}  # at most the whole pool
    assert sum(allocate({"a": 7, "b": 7, "c": 7}, 10).values()) == 10
    assert allocate({}, 5) == {}


def _admin(engine: Engine) -> User:
    return add_user(engine, "follow-admin", Role.admin)


def test_a_follow_up_samples_the_part_and_joins_the_estimate(demo_engine: Engine) -> None:
    root = validation_study(demo_engine)
    read_study(demo_engine, root)
    reader = add_user(demo_engine, "follow-reader", Role.reader)
    with Session(demo_engine) as session:
        before = quality_report(session, root.id).populations[1]
        follow = create_follow_up(session, root=session.get(Study, root.id), part={
            "modality": "brain_mri", "direction": "remove"}, reads=8, reader_ids=[reader.id or 0],
            name="brain removals", created_by=_admin(demo_engine))
        raw = json.loads(follow.selection)
        assert raw["follow_up_of"] == root.id
        assert raw["part"] == {"modality": "brain_mri", "direction": "remove"}
        assert raw["filter"]["modality"] == ["brain_mri"] and raw["filter"]["direction"] == ["remove"]
        assert raw["strata_facets"] == ["verdict", "modality"] and sum(raw["per_stratum"].values()) == 8
        assert follow.design == root.design and follow.primary_question == root.primary_question
    read_study(demo_engine, follow)
    with Session(demo_engine) as session:
        report = quality_report(session, root.id)
        assert [s["name"] for s in report.studies] == ["quality", "brain removals"]
        after = report.populations[1]
        part = lambda pop: next(p for p in pop.parts  # noqa: E731
                                if p.part == {"modality": "brain_mri", "direction": "remove"})
        assert part(after).rows["overall"].reads > part(before).rows["overall"].reads
        # The root's own parts elsewhere are read as before.
        fundus = lambda pop: next(p for p in pop.parts if p.part == {"modality": "fundus"})  # noqa: E731
        assert fundus(after).rows["overall"].reads == fundus(before).rows["overall"].reads


@pytest.mark.parametrize(("part", "reads", "readers", "words"), [
    ({"colour": "blue"}, 5, True, "not colour"),
    ({"modality": "fundus"}, 0, True, "between 1"),
    ({"modality": "fundus"}, 5, False, "active reader"),
])
def test_bad_requests_are_refused(demo_engine: Engine, part: dict[str, str], reads: int,
                                  readers: bool, words: str) -> None:
    root = validation_study(demo_engine)
    reader = add_user(demo_engine, "follow-reader", Role.reader)
    with Session(demo_engine) as session, pytest.raises(Invalid, match=words):
        create_follow_up(session, root=session.get(Study, root.id), part=part, reads=reads,
                         reader_ids=[reader.id or 0] if readers else [], name="x",
                         created_by=_admin(demo_engine))


def test_two_follow_ups_of_one_part_are_independent_draws(demo_engine: Engine) -> None:
    """The same part asked twice gives two draws (a fresh seed, recorded), not one twice."""
    root = validation_study(demo_engine)
    reader = add_user(demo_engine, "follow-reader", Role.reader)
    admin = _admin(demo_engine)
    with Session(demo_engine) as session:
        drawn = []
        for name in ("first", "second"):
            study = create_follow_up(session, root=session.get(Study, root.id),
                                     part={"modality": "chest_xray"}, reads=20,
                                     reader_ids=[reader.id or 0], name=name, created_by=admin)
            items = session.exec(select(StudyItem.attempt_id).where(StudyItem.study_id == study.id))
            drawn.append((study.seed, sorted(items)))
        assert drawn[0][0] != drawn[1][0] and drawn[0][1] != drawn[1][1]
