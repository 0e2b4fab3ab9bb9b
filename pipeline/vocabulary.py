"""The words the engine and the app share, defined once: the judge's rubric (which the readers
answer too) and the states of a run.

They live in the engine because the engine produces them (its prompts ask for these four
dimensions, its loop ends runs in these states); the app stores and shows them, and imports
them from here, never the other way round.
"""

from enum import StrEnum


class Dimension(StrEnum):
    """The judge's four rubric dimensions, in the paper's order."""

    compliance = "compliance"
    structure = "structure"
    realism = "realism"
    fidelity = "fidelity"


# What a judge verdict and a reader's answer both say: the four dimensions, then the overall
# accept / reject (the judge's "qualified").
DIMENSIONS = tuple(d.value for d in Dimension)
OVERALL = "overall"
QUESTIONS = (*DIMENSIONS, OVERALL)

# How pages, forms and reports name them.
LABELS = {
    Dimension.compliance: "Instruction compliance",
    Dimension.structure: "Structural plausibility",
    Dimension.realism: "Realism",
    Dimension.fidelity: "Fidelity preservation",
    OVERALL: "Overall",
}

# The paper's weighted score: each dimension's share of it.
WEIGHTS = {Dimension.compliance: 0.40, Dimension.structure: 0.25, Dimension.realism: 0.20,
           Dimension.fidelity: 0.15}

# A task's failed dimensions, as bits of ``Task.failed_mask`` (a filter reads them in SQL).
DIMENSION_BITS = {
    Dimension.compliance: 1,
    Dimension.structure: 2,
    Dimension.realism: 4,
    Dimension.fidelity: 8,
}


# The judge's step, as runs record a failure: its round's edit is stored before the judge is
# called, so a failure there belongs to that stored round, not to the next one.
JUDGE_STEP = "verify_image"


class Outcome(StrEnum):
    """Where a run stands: open while it has rounds to come, then how it ended."""

    running = "running"  # open: a job resumes it from its next round
    success = "success"
    failed = "failed"  # the judge rejected every round it judged
    # Every round ended with no verdict to act on (no image came back, or no verdict could
    # be read): the judge never rejected anything, so this is not a rejected run, and study
    # pools and judge figures leave it out.
    unjudged = "unjudged"
    api_failed = "api_failed"
    # The API refused to answer (a safety or content block): no round was judged for it, so
    # it is neither a rejected edit nor a transient failure worth retrying.
    blocked = "blocked"
    cancelled = "cancelled"  # its job was cancelled while it was open; it never resumes

    @property
    def ended_by_the_loop(self) -> bool:
        """An end the refinement loop reached (not open, not cut short by a cancel)."""
        return self not in (Outcome.running, Outcome.cancelled)


def exhausted(judged: bool) -> "Outcome":
    """How a run ends when its rounds ran out with no accepted edit: failed when the judge
    rejected at least one round, unjudged when it never gave a verdict at all."""
    return Outcome.failed if judged else Outcome.unjudged


# The ends a run reaches on its own, as tables and exports count them.
ENDS = tuple(o for o in Outcome if o.ended_by_the_loop)
# A task's outcome is how its latest run ended (an open or cancelled run never is one), as
# filters on the web and in the CLI take it.
TaskOutcome = StrEnum("TaskOutcome", [(o.name, o.value) for o in ENDS])  # type: ignore[misc]
