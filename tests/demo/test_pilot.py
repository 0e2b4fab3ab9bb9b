"""The demo's locked pilot study: on a fresh demo, practice, known-answer cases and
qualification have settled cases to draw from (issue 53)."""

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.demo.pilot import PILOT_READERS, make_pilot
from app.models import Role, User
from app.studies.known_answers import pool_size
from app.studies.models import Answer, Assignment, StudyItem, StudyStatus
from app.studies.practice import create_practice
from tests.accounts import add_user


def test_the_pilot_is_locked_its_settled_cases_fill_the_pool_and_it_is_made_once(
        demo_engine: Engine) -> None:
    admin = add_user(demo_engine, "demo-admin-like", Role.admin)
    with Session(demo_engine) as session:
        assert pool_size(session) == 0  # a fresh demo: nothing to practise on
        pilot = make_pilot(session, admin)
        assert pilot is not None and pilot.status == StudyStatus.locked
        reads = session.scalars(select(Answer).join(
            Assignment, col(Assignment.id) == Answer.assignment_id)
            .where(col(Assignment.study_id) == pilot.id)).all()
        assert len(reads) == 24 * len(PILOT_READERS)
        settled = pool_size(session)
        # Most cases unanimous, a few not: as a pilot of three careful readers.
        assert 12 <= settled < 24
        readers = session.scalars(select(User).where(col(User.name).in_(PILOT_READERS))).all()
        assert len(readers) == 3 and not any(r.active for r in readers)
        assert all(r.is_demo and "synthetic" in (r.qualification or "") for r in readers)
        assert make_pilot(session, admin).id == pilot.id and pool_size(session) == settled
        reader = add_user(demo_engine, "new-reader", Role.reader)
        practice = create_practice(session, name="first practice", cases=8,
                                   reader_ids=[reader.id or 0], created_by=admin)
        items = session.scalars(select(StudyItem).where(col(StudyItem.study_id) == practice.id)).all()
        assert practice.practice and len(items) == 8 and all(i.known_answer_id for i in items)
