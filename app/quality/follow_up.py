"""A follow-up study where a quality estimate is least sure: the planner's part (a modality and
direction, say) of the root study's frame, drawn with the root's design and strata, the reads
allocated to the strata in proportion to their size.

The follow-up is drawn independently of the root (an edit the root read may be drawn again;
its consensus comes from the first study that settled it), which is what the estimate's
inclusion probability 1 - prod(1 - n_h / N_h) assumes (app/quality/population.py). Its
selection records the root and the part, so the root's estimate takes it in.
"""

import json
import secrets
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, Field
from sqlmodel import Session

from app.cases.filters import recorded_filter
from app.errors import Invalid
from app.models import Role, User
from app.quality.population import FACETS
from app.quality.report import Part, QualityReport
from app.studies.design import MAX_CASES, StudyPlan, create_study
from app.studies.models import Design, Reveal, Study
from app.studies.pool import SEPARATOR, strata_table
from app.studies.viewer_tools import VIEWER_TOOLS


def allocate(sizes: dict[str, int], reads: int) -> dict[str, int]:
    """``reads`` spread over strata in proportion to their sizes (largest remainders), none
    above its stratum's size."""
    total = sum(sizes.values())
    reads = min(reads, total)
    if not total or reads <= 0:
        return {}
    exact = {k: reads * n / total for k, n in sizes.items()}
    counts = {k: min(int(v), sizes[k]) for k, v in exact.items()}
    for key in sorted(exact, key=lambda k: (-(exact[k] - int(exact[k])), k)):
        if sum(counts.values()) >= reads:
            break
        if counts[key] < sizes[key]:
            counts[key] += 1
    return {k: n for k, n in counts.items() if n > 0}


def _only(part: dict[str, str], facet: str, recorded: tuple[str, ...]) -> tuple[str, ...]:
    return (part[facet],) if facet in part else recorded


def create_follow_up(session: Session, *, root: Study, part: dict[str, str], reads: int,
                     reader_ids: list[int], name: str, created_by: User) -> Study:
    if not Design(root.design).frames_the_data_set:
        raise Invalid("a follow-up samples a validation or an accepted-edits study's frame")
    raw = json.loads(root.selection)
    if raw.get("follow_up_of") is not None:
        raise Invalid("make the follow-up from the study it follows, not from another follow-up")
    unknown = sorted(set(part) - set(FACETS))
    if unknown or not part:
        raise Invalid(f"a part is a modality, direction or disease, not {', '.join(unknown) or 'nothing'}",
                      field="part")
    if not 1 <= reads <= MAX_CASES:
        raise Invalid(f"ask for between 1 and {MAX_CASES} edits", field="reads")
    root_filter = recorded_filter(raw.get("filter", {}))
    for facet, value in part.items():
        chosen = getattr(root_filter, facet)
        if chosen and value not in chosen:
            raise Invalid(f"{facet} {value!r} is outside the study's filter", field="part")
    narrowed = replace(root_filter, modality=_only(part, "modality", root_filter.modality),
                       direction=_only(part, "direction", root_filter.direction),
                       disease=_only(part, "disease", root_filter.disease))
    facets = tuple(raw.get("strata_facets") or ())
    rows, _ = strata_table(session, narrowed, Design(root.design), facets)
    per_stratum = allocate({row.key: row.pool for row in rows}, reads)
    if not per_stratum:
        raise Invalid("no edit of the data set is in this part now", field="part")
    readers = [session.get(User, uid) for uid in reader_ids]
    if not reader_ids or any(r is None or r.role != Role.reader or not r.active for r in readers):
        raise Invalid("tick at least one active reader", field="readers")
    tools = tuple(t for t in json.loads(root.viewer_tools) if t in VIEWER_TOOLS)
    plan = StudyPlan(
        name=name.strip(), case_filter=narrowed, reader_ids=reader_ids,
        # A fresh seed, recorded with the study: two follow-ups of one part must be independent
        # draws, as the inclusion probabilities assume, not the same edits twice.
        design=Design(root.design), seed=secrets.randbelow(2**31),
        strata_facets=facets, per_stratum=per_stratum, primary_question=root.primary_question,
        readers_per_case=min(root.readers_per_case, len(reader_ids)) if root.readers_per_case else None,
        blinded=root.blinded, reveal=Reveal(root.reveal), instructions=root.instructions or "",
        viewer_tools=tools, follow_up_of=root.id, part=dict(part))
    # Drawn as its design draws (validation and accepted: app/studies/design.py). Only the
    # designs that frame the data set have follow-ups, and app.designs sits above app.quality.
    return create_study(session=session, plan=plan, created_by=created_by)


class FollowUpForm(BaseModel):
    """The planner's form on /quality."""

    study: int = Field(ge=1)
    # A part of the frame as its values joined by "/", in FACETS order ("fundus/remove").
    part: str = Field(min_length=1, max_length=300)
    reads: int = Field(ge=1, le=MAX_CASES)
    name: str = Field(min_length=1, max_length=200)
    readers: list[int] = Field([], max_length=500)

    def chosen_part(self) -> dict[str, str]:
        values = self.part.split(SEPARATOR)
        if len(values) > len(FACETS) or any(not v for v in values):
            raise Invalid("choose a part from the list", field="part")
        return dict(zip(FACETS, values, strict=False))


def follow_up_parts(report: QualityReport) -> list[tuple[str, str]]:
    """The parts a follow-up can sample: (form value, label), modality to disease."""
    if not report.populations:
        return []
    return [(SEPARATOR.join(p.part.values()), p.label.replace("_", " "))
            for p in report.populations[0].parts if p.level >= 1]


def follow_up_defaults(report: QualityReport, widest: Part | None, question: str) -> dict[str, Any]:
    """The form as first shown: the widest part, the reads the planner asks for there."""
    part = SEPARATOR.join(widest.part.values()) if widest else ""
    plan = widest.rows[question].plan if widest else None
    reads = min(MAX_CASES, max(1, plan.more)) if plan and plan.more else 50
    study = report.study or {}
    label = widest.label.replace("_", " ") if widest else ""
    name = f"{study.get('name', 'study')} follow-up: {label}".strip()[:200]
    return {"study": study.get("id"), "part": part, "reads": reads, "name": name, "readers": []}
