"""Making an adaptive study: its pool frozen, its readers' lists opened, its first batch drawn."""

import json
import random

from sqlmodel import Session

from app.designs.adaptive.batches import place_batch, pool_images
from app.designs.adaptive.budget import edit_budget
from app.designs.adaptive.draws import EditPool, draw_edit_batch, edit_selection, rule_target
from app.designs.adaptive.prior import check_pool
from app.models import User
from app.studies.design import (
    StudyError,
    StudyPlan,
    check_people,
    check_planned_targets,
    enrol_in_practice,
    plan_apart,
    selection_json,
    study_row,
    validate_plan,
)
from app.studies.models import Study, StudyReader


def create_adaptive(session: Session, plan: StudyPlan, created_by: User) -> Study:
    """The pool of judged edits frozen, the readers' lists opened, and the first batch drawn
    from the score-based prior mixed with the uniform (nothing is read yet)."""
    validate_plan(plan)
    found = pool_images(session, plan.case_filter, plan_apart(session, plan))
    problem = check_pool(found)
    if problem:
        raise StudyError(problem, field="design")
    check_people(session, plan)
    edits = EditPool.of(found)
    budget = edit_budget(len(edits), plan.total or 0, len(plan.reader_ids), plan.readers_per_case)
    # The cases its budget of draws can read, as the form and the study page state them.
    check_planned_targets(plan, int(budget.edits_about))
    selection = json.loads(selection_json(plan, {})) | edit_selection(
        found, plan.total or 0, plan.batch_images) | {"budget": budget.as_dict()}
    study = study_row(plan, created_by, json.dumps(selection, sort_keys=True))
    session.add(study)
    session.flush()
    assert study.id is not None
    for user_id in plan.reader_ids:
        order_seed = random.Random(f"{study.order_secret}:reader:{user_id}").randrange(2**31)
        session.add(StudyReader(study_id=study.id, user_id=user_id, order_seed=order_seed))
    session.flush()
    batch, _ = draw_edit_batch(session, study, edits, {}, 0, plan.batch_images,
                               rule_target(plan.targets))
    place_batch(session, study, batch)
    enrol_in_practice(session, plan)
    session.commit()
    session.refresh(study)
    return study
