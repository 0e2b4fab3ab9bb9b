"""The figures' code run once when the server starts, on a small made-up study, so that the
first agreement page a coordinator opens does not pay for what a process does only once: the
lazy set-up of scipy's distributions and statsmodels' tests, numpy's and the BLAS library's
first calls, the allocator growing its heap for the bootstrap's arrays. In a fresh process the
first report took twice as long as the same report a moment later (benchmarks/agreement.py).

Nothing here touches a database or a kept result: the made-up study is thrown away."""

import logging
import random

import numpy as np

from app.agreement.monitoring import watch
from app.agreement.reads import Case, Read, StudyReads
from app.agreement.report import study_report
from app.agreement.resample import ClusterBootstrap
from app.agreement.two_raters import FIGURES
from pipeline.vocabulary import DIMENSIONS

logger = logging.getLogger(__name__)

CASES = 120
READERS = ("a", "b", "c")


def made_up_study(seed: int = 7) -> StudyReads:
    """Three readers on 120 cases of 40 source images, with a judge, a repeat and ties."""
    rng = random.Random(seed)
    cases = [Case(item_id=i, uid=f"warm-{i}", task_id=i, task_key=f"warm-{i}",
                  source_image_id=i // 3, modality=("chest_xray", "brain_mri", "fundus")[i % 3],
                  disease=f"disease-{i % 5}", direction=("add", "remove")[i % 2], round=1 + i % 2,
                  judge={q: rng.random() < 0.7 for q in (*DIMENSIONS, "overall")},
                  assigned=READERS)
             for i in range(CASES)]

    def answers() -> dict[str, str]:
        found = {d: rng.choice(("yes", "yes", "no", "cannot_assess")) for d in DIMENSIONS}
        return found | {"overall": rng.choice(("accept", "accept", "reject"))}

    reads = [Read(item_id=c.item_id, reader=r, answers=answers(), repeat=False,
                  time_on_case_ms=10_000, version=1) for c in cases for r in READERS]
    reads += [Read(item_id=c.item_id, reader="a", answers=answers(), repeat=True,
                   time_on_case_ms=10_000, version=1) for c in cases[:12]]
    return StudyReads(cases=cases, reads=reads, readers=list(READERS))


# A study's size in source images: the bootstrap's arrays at this size are tens of
# megabytes, and the first arrays that large a process allocates come fresh from the kernel
# (50 ms more for the first than for the next in benchmarks/quality.py's process).
REAL_SIZE = 1000


def warm_figures() -> None:
    """Run a report and a watch on the made-up study, and one figure at a real study's size
    (logged, never raised: a page computes its own figures whatever happened here)."""
    try:
        data = made_up_study()
        study_report(data)
        watch(data, "overall", {"agreement": 0.05})
        features = np.tile([[1.0, 0.0, 0.0, 1.0]], (REAL_SIZE, 1))
        ClusterBootstrap(list(range(REAL_SIZE))).figure(features, FIGURES["agreement"],
                                                        n=REAL_SIZE, bounds=(0.0, 1.0))
        logger.info("agreement figures warmed up")
    except Exception:
        logger.exception("the agreement figures could not be warmed up")
