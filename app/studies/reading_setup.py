"""What readers are told and which image tools they get: the admin may change both until the
study starts (its first answer), and then they are frozen with it, so every read of a study
was made under the same words and the same tools."""

from sqlalchemy import select
from sqlmodel import Session, col

from app.errors import Conflict, Invalid
from app.studies.models import Assignment, Design, Study, StudyStatus, answer_table
from app.studies.viewer_tools import tools_json

MAX_INSTRUCTIONS = 10_000


def checked_instructions(text: str) -> str | None:
    """The instructions as stored: trimmed, None when empty."""
    text = text.replace("\r\n", "\n").strip()
    if len(text) > MAX_INSTRUCTIONS:
        raise Invalid(f"write the instructions in at most {MAX_INSTRUCTIONS} characters",
                      field="instructions")
    if "\x00" in text:
        raise Invalid("the instructions contain a NUL character", field="instructions")
    return text or None


def started(session: Session, study: Study) -> bool:
    """A study starts with its first answer (an undo does not un-start it)."""
    table = answer_table(study)
    first = session.scalars(
        select(col(table.id)).join(Assignment, col(Assignment.id) == col(table.assignment_id))
        .where(col(Assignment.study_id) == study.id).limit(1)).first()
    return first is not None


def change_reading_setup(session: Session, study: Study, instructions: str,
                         viewer_tools: list[str]) -> Study:
    if study.status == StudyStatus.locked:
        raise Conflict("the study is locked")
    if started(session, study):
        raise Conflict("readers have started: the instructions and tools are frozen with the study")
    study.instructions = checked_instructions(instructions)
    study.viewer_tools = tools_json(viewer_tools,
                                    single_image=Design(study.design).single_image)
    session.add(study)
    session.commit()
    session.refresh(study)
    return study
