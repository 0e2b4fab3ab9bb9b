"""What each rubric design samples, and so what its figures can estimate (the adaptive design,
which reads the same way, is app/designs/adaptive/)."""

from app.studies.design_traits import Design, DesignTraits, DesignWords
from app.studies.forms import PAPER_PER_STRATUM

JUDGED_POOL = ("judged attempts (accepted edits and rejected rounds whose verdict of record "
               "could be read)")
JUDGED_ATTEMPT = ("judged attempt (accepted edits and rejected rounds whose verdict of record "
                  "could be read)")

# Judged attempts, accepted edits and rejected rounds, stratified by the judge's verdict:
# both of the judge's errors (too strict, too lenient) are estimable.
VALIDATION = DesignTraits(
    kind=Design.validation, judged=True, strata_by_verdict=True, frames_the_data_set=True,
    default_facets=("verdict", "direction", "modality"), default_per_stratum=PAPER_PER_STRATUM,
    words=DesignWords(
        name="validation: judged attempts, accepted edits and rejected rounds, stratified by "
             "the judge's verdict",
        estimates="agreement, kappa, both of the judge's errors (too strict and too lenient), "
                  "and how often readers reject what the judge passed",
        cannot="nothing of the above is out of reach; figures are those of the sample, whose "
               "verdict mix is set by the strata, not by the data set",
        pool=JUDGED_POOL, eligible=f"every {JUDGED_ATTEMPT}", all_estimable=True,
        limitation="The sample was stratified by the judge's verdict: shares of all cases "
                   "(agreement, too strict, too lenient) describe this sample's verdict mix, "
                   "not the data set's; the figures conditional on the judge's verdict do not "
                   "depend on it."))

# Accepted edits only: the judge passed every one, so only how often readers reject what
# the judge accepted can be estimated (a PPV-type figure), never "too strict".
ACCEPTED = DesignTraits(
    kind=Design.accepted, accepted_only=True, frames_the_data_set=True,
    default_facets=("direction",),
    words=DesignWords(
        name="accepted edits only",
        estimates="how often readers reject what the judge accepted (a PPV-type figure)",
        cannot="too strict cannot be estimated, nor kappa: the judge passed every edit read, "
               "so its verdict is a constant",
        pool="accepted edits", eligible="the accepted edit of every task"))

# Whole runs of sampled tasks, every round read (preference data).
RUNS = DesignTraits(
    kind=Design.runs, reads_rounds=True, default_facets=("direction",),
    words=DesignWords(
        name="whole runs: every round of each sampled task (preference data)",
        estimates="agreement and both of the judge's errors, over rounds as they occur in runs",
        cannot="rounds of one run are read together, so they are clustered with their source image",
        pool="tasks with a readable round", eligible="every task with a readable round, all its rounds read"))
