"""What each study design is, as the rest of the app asks it: its name and its traits,
declared once (app/designs holds what each design does)."""

from enum import StrEnum

# A pair's strata: its modality, its direction, and the judge's verdicts of record on its two
# edits ("both passed", "one passed", "neither passed").
PAIR_FACETS = ("modality", "direction", "verdicts")


class Design(StrEnum):
    """What a study samples, and so what its figures can estimate."""

    # Judged attempts, accepted edits and rejected rounds, stratified by the judge's verdict:
    # both of the judge's errors (too strict, too lenient) are estimable.
    validation = "validation"
    # Accepted edits only: the judge passed every one, so only how often readers reject what
    # the judge accepted can be estimated (a PPV-type figure), never "too strict".
    accepted = "accepted"
    # Whole runs of sampled tasks, every round read (preference data).
    runs = "runs"
    # A visual Turing test: one image per sampled source image, its original or its accepted
    # edit, and the reader says which (app/designs/real_or_edited/ratings.py). No judge is compared.
    real_or_edited = "real_or_edited"
    # Judged edits like a validation study, but source images are drawn in batches as reading
    # goes, each at a recorded probability chosen to narrow the target figure fastest
    # (app/studies/adaptive.py); the figures weight each draw by its inverse probability.
    adaptive = "adaptive"
    # Two edits of one source image side by side, the original a key away, and the reader says
    # which is better (app/designs/pairwise): refinement rounds, or runs, compared.
    pairwise = "pairwise"

    # What each design is, as the rest of the app asks it (never by its name): the traits
    # live here, beside the designs, so that adding one is adding its line to each.

    @classmethod
    def with_rubric(cls) -> list[str]:
        """The designs whose readers answer the rubric, as stored: for a query's filter."""
        return [d.value for d in cls if d.rubric]

    @property
    def rubric(self) -> bool:
        """Readers answer the rubric and the judge of record is compared with them (real or
        edited and pairwise have their own answers and their own figures)."""
        return self not in (Design.real_or_edited, Design.pairwise)

    @property
    def label(self) -> str:
        return self.value.replace("_", "-")

    @property
    def figures_path(self) -> str:
        """Its figures' page under /studies/{id}/ (app/designs names it as its first figure)."""
        return {Design.real_or_edited: "real-or-edited",
                Design.pairwise: "pairwise"}.get(self, "agreement")

    @property
    def pairs(self) -> bool:
        """A unit is a pair of edits of one source image, read side by side."""
        return self is Design.pairwise

    @property
    def single_image(self) -> bool:
        """The reader sees one image alone, never the original beside an edit."""
        return self is Design.real_or_edited

    @property
    def judged(self) -> bool:
        """It samples judged attempts, stratified by the judge's verdict of record."""
        return self in (Design.validation, Design.adaptive)

    @property
    def reads_rounds(self) -> bool:
        """A sampled unit is a whole run, every round read, not one edit."""
        return self is Design.runs

    @property
    def one_per_source_image(self) -> bool:
        """At most one case of each source image (a reader could otherwise compare them)."""
        return self is Design.real_or_edited

    @property
    def draws_in_batches(self) -> bool:
        """Source images are drawn as reading goes, each at a recorded probability."""
        return self is Design.adaptive

    @property
    def frames_the_data_set(self) -> bool:
        """Its sample is a probability sample of a frame of the data set's edits, so the
        whole data set's quality can be estimated from it (app/quality)."""
        return self in (Design.validation, Design.accepted)

    @property
    def default_facets(self) -> tuple[str, ...]:
        """The strata a new study of this design starts with."""
        return {Design.validation: ("verdict", "direction", "modality"),
                Design.accepted: ("direction",), Design.runs: ("direction",),
                Design.real_or_edited: ("modality",), Design.adaptive: ("modality",),
                Design.pairwise: PAIR_FACETS}[self]
