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
    estimates_pool=True,
    default_facets=("verdict", "direction", "modality"), default_per_stratum=PAPER_PER_STRATUM,
    words=DesignWords(
        name="validation: judged attempts, accepted edits and rejected rounds, stratified by "
             "the judge's verdict, each stratum weighted to its share of the pool",
        estimates="agreement, kappa, both of the judge's errors (too strict and too lenient), "
                  "and how often readers reject what the judge passed, of the whole pool",
        cannot="nothing of the above is out of reach; each stratum's cases are weighted to the "
               "stratum's share of the pool, so the figures estimate the data set, and a "
               "stratum read more than its share costs reads",
        pool=JUDGED_POOL, eligible=f"every {JUDGED_ATTEMPT}", all_estimable=True,
        limitation="The sample was stratified by the judge's verdict, direction and modality; "
                   "every figure weights each stratum's cases to the stratum's share of the "
                   "pool, so shares of all cases (agreement, too strict, too lenient) estimate "
                   "the data set's, and the case counts (n) are the cases read."))

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
