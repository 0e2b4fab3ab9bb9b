"""What the agreement page's readers-random section costs beside the report it follows: the
judge as one more reader (app/agreement/judge_as_reader.py: accuracies, the grouped jackknife,
the OR interval, the alternative annotator test, the kappa z-score and the readers x images
table) against the agreement report itself (app/agreement/report.py: the cluster bootstrap),
on one simulated 1,000-case, 3-reader validation study, A and B interleaved. Not part of the
tests.

    .venv/bin/python benchmarks/judge_as_reader.py [--cases 1000] [--readers 3] [--rounds 7]
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.agreement.judge_as_reader import judge_as_reader
from app.agreement.reads import Case, Read, StudyReads
from app.agreement.report import study_report
from pipeline.vocabulary import DIMENSIONS


def simulated(cases: int, readers: int, seed: int = 4) -> StudyReads:
    """Two cases per source image; readers wrong 12 % of the time, the judge 19 %."""
    rng = np.random.default_rng(seed)
    truth = rng.random(cases) < 0.6
    names = [f"reader-{j}" for j in range(readers)]

    def answers(ok: bool) -> dict[str, str]:
        return {**{d: "yes" if ok else "no" for d in DIMENSIONS}, "overall": "accept" if ok else "reject"}

    found = [Case(item_id=i, uid=f"u{i}", task_id=i, task_key=f"t{i}", source_image_id=i // 2,
                  modality="chest_xray", disease="Edema", direction="add", round=1,
                  judge={**{d: bool(t) ^ bool(rng.random() < 0.19) for d in DIMENSIONS},
                         "overall": bool(t) ^ bool(rng.random() < 0.19)})
             for i, t in enumerate(truth)]
    reads = [Read(item_id=i, reader=n, answers=answers(bool(t) ^ bool(rng.random() < 0.12)),
                  repeat=False, time_on_case_ms=4000, version=1)
             for i, t in enumerate(truth) for n in names]
    return StudyReads(found, reads, names)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--readers", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    data = simulated(args.cases, args.readers)
    report_times, section_times = [], []
    for _ in range(args.rounds):  # A B A B: the same load on both
        start = time.perf_counter()
        study_report(data, primary="overall")
        report_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        result = judge_as_reader(data, "overall")
        section_times.append(time.perf_counter() - start)
    ratios = [b / a for a, b in zip(report_times, section_times, strict=True)]

    def line(name: str, xs: list[float], unit: str = " s") -> str:
        return (f"{name}: min {min(xs):.3f}{unit}, median {statistics.median(xs):.3f}{unit}, "
                f"max {max(xs):.3f}{unit}")

    print(f"{args.cases} cases x {args.readers} readers, {args.rounds} rounds interleaved")
    print(line("agreement report (A)", report_times))
    print(line("readers-random section (B)", section_times))
    print(line("B / A", ratios, ""))
    assert result.versus is not None
    print(f"readers minus judge {result.versus.difference:+.3f}, CI ({result.versus.ci[0]:+.3f}, "
          f"{result.versus.ci[1]:+.3f}); alt-test: {result.alt.conclusion if result.alt else '-'}")


if __name__ == "__main__":
    main()
