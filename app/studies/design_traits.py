"""What each study design is, as the shared machinery may ask it: its kind as stored, and its
traits. Each design declares its traits in its own package (app/designs), and this module
only keeps what they declared: the pool, the worklists, the forms and the statistics ask
``design.judged`` or ``design.accepted_only``, never which design it is.

The designs declare themselves when app/designs is imported (the web app and the CLI import
it; anything else that asks first has it imported here, by its package's name, because a
static import would run the shared machinery's imports back up through the designs)."""

import importlib
from dataclasses import dataclass
from enum import StrEnum

# A pair's strata: its modality, its direction, and the judge's verdicts of record on its two
# edits ("both passed", "one passed", "neither passed").
PAIR_FACETS = ("modality", "direction", "verdicts")
DESIGNS_PACKAGE = "app.designs"


class Design(StrEnum):
    """A study design's kind, as a study stores it (what each one is: app/designs)."""

    validation = "validation"
    accepted = "accepted"
    runs = "runs"
    real_or_edited = "real_or_edited"
    adaptive = "adaptive"
    pairwise = "pairwise"

    @property
    def traits(self) -> "DesignTraits":
        return traits_of(self)

    @property
    def label(self) -> str:
        return self.value.replace("_", "-")

    # The traits the shared machinery asks most, by their own names.
    @property
    def rubric(self) -> bool:
        return self.traits.rubric

    @property
    def pairs(self) -> bool:
        return self.traits.pairs

    @property
    def single_image(self) -> bool:
        return self.traits.single_image

    @property
    def judged(self) -> bool:
        return self.traits.judged

    @property
    def accepted_only(self) -> bool:
        return self.traits.accepted_only

    @property
    def reads_rounds(self) -> bool:
        return self.traits.reads_rounds

    @property
    def one_per_source_image(self) -> bool:
        return self.traits.one_per_source_image

    @property
    def draws_in_batches(self) -> bool:
        return self.traits.draws_in_batches

    @property
    def takes_known_answers(self) -> bool:
        """Known-answer cases can be mixed in: the readers answer the rubric (a settled answer
        is checked against it) and every case is placed when the study is made (an adaptive
        study's arrive as it goes)."""
        return self.rubric and not self.draws_in_batches

    @property
    def frames_the_data_set(self) -> bool:
        return self.traits.frames_the_data_set

    @property
    def default_facets(self) -> tuple[str, ...]:
        return self.traits.default_facets

    @property
    def figures_path(self) -> str:
        return self.traits.figures_path


@dataclass(frozen=True)
class DesignWords:
    """The design in honest words, as its report and the new-study form state it."""

    name: str
    estimates: str
    cannot: str
    # What its pool holds, as the new-study form says it, and what was eligible, as the report
    # says it.
    pool: str
    eligible: str
    # The report's first limitation; by default "Design: " and what it cannot estimate.
    limitation: str = ""
    # Every figure of the report is estimable: "Cannot:" is not said.
    all_estimable: bool = False

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "estimates": self.estimates, "cannot": self.cannot}

    def first_limitation(self) -> str:
        return self.limitation or f"Design: {self.cannot}."


@dataclass(frozen=True)
class DesignTraits:
    """What a design is, declared by the design (app/designs/<design>/)."""

    kind: Design
    words: DesignWords
    # The strata a new study of this design starts with.
    default_facets: tuple[str, ...]
    # Readers answer the rubric and the judge of record is compared with them.
    rubric: bool = True
    # A unit is a pair of edits of one source image, read side by side.
    pairs: bool = False
    # The reader sees one image alone, never the original beside an edit.
    single_image: bool = False
    # It samples judged attempts (accepted edits and rejected rounds) by the judge's verdict.
    judged: bool = False
    # Its strata must include the judge's verdict, so rejected rounds are read as well.
    strata_by_verdict: bool = False
    # It reads accepted edits only: the judge passed every one, so "too strict" is out of reach.
    accepted_only: bool = False
    # A sampled unit is a whole run, every round read, not one edit.
    reads_rounds: bool = False
    # At most one case of each source image (a reader could otherwise compare them).
    one_per_source_image: bool = False
    # Source images are drawn as reading goes, each at a recorded probability.
    draws_in_batches: bool = False
    # Its sample is a probability sample of a frame of the data set's edits, so the whole
    # data set's quality can be estimated from it (app/quality).
    frames_the_data_set: bool = False
    # Its cases are drawn by stratum and weighted to their strata's shares of the pool, so its
    # figures estimate the data set's share (app/studies/allocation.py); the form's default
    # counts are proportional to the pool.
    estimates_pool: bool = False
    # It compares the readers with a judge, so a plan may set targets for that comparison.
    compares_judge: bool = True
    # A share of its cases shows the original instead of the edit (the plan sets the share).
    shows_originals: bool = False
    # What the new-study form asks of each stratum at first.
    default_per_stratum: int = 50
    # Its figures' page under /studies/{id}/.
    figures_path: str = "agreement"


_DECLARED: dict[Design, DesignTraits] = {}
_DEFAULT: list[Design] = []


def declare(traits: list[DesignTraits], *, default: Design) -> None:
    """The designs' registry declares every design's traits, and the design a study gets when
    none is chosen."""
    _DECLARED.clear()
    _DECLARED.update({t.kind: t for t in traits})
    _DEFAULT[:] = [default]


def _declared() -> dict[Design, DesignTraits]:
    if not _DECLARED:
        importlib.import_module(DESIGNS_PACKAGE)
    return _DECLARED


def traits_of(kind: Design | str) -> DesignTraits:
    declared = _declared()
    try:
        return declared[Design(kind)]
    except KeyError:  # asked while app.designs is still being imported, or a design unlisted
        raise LookupError(f"no design in {DESIGNS_PACKAGE}'s registry declares {kind!r}") from None


def default_design() -> Design:
    """The design a study, a form or a follow-up gets when none is chosen."""
    _declared()
    return _DEFAULT[0]


def designs() -> list[Design]:
    """Every design, in the order its registry lists them (the new-study form's order)."""
    return list(_declared())


def rubric_kinds() -> list[str]:
    """The designs whose readers answer the rubric, as stored: for a query's filter."""
    return [d.value for d in designs() if d.rubric]
