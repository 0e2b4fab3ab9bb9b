"""Timing the MRMC engine (app/mrmc) on a large simulated study: 20 readers x 2,000 cases x 3
modalities, fully crossed (goal: under 2 s for the whole analysis). Not part of the tests.

Each run reads nothing from disk: the ratings are simulated once (binormal, a reader and a
case effect), then `analyse` is timed REPEATS times and the median and the slowest reported,
and the algorithm-against-the-panel comparison on one modality likewise.

    .venv/bin/python benchmarks/mrmc.py [--readers 20] [--cases 2000] [--modalities 3]
"""

import argparse
import csv
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.mrmc.data import MrmcData, read_csv
from app.mrmc.orh import analyse
from app.mrmc.standalone import versus_panel

REPEATS = 7


def simulated(readers: int, cases: int, modalities: int, seed: int = 5) -> MrmcData:
    rng = np.random.default_rng(seed)
    truth = rng.random(cases) < 0.4
    case_effect = rng.normal(0.0, 0.7, cases)
    reader_effect = rng.normal(0.0, 0.2, (1, readers, 1))
    shift = np.arange(modalities)[:, None, None] * 0.1
    signal = truth[None, None, :] * (1.5 + reader_effect + shift)
    ratings = np.round(signal + case_effect[None, None, :]
                       + rng.normal(0.0, 1.0, (modalities, readers, cases)), 1)
    return MrmcData(tuple(map(str, range(modalities))), tuple(map(str, range(readers))),
                    tuple(map(str, range(cases))), truth, ratings)


def timed(work: object) -> tuple[float, float]:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        work()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times), max(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readers", type=int, default=20)
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--modalities", type=int, default=3)
    args = parser.parse_args()
    data = simulated(args.readers, args.cases, args.modalities)
    median, slowest = timed(lambda: analyse(data))
    print(f"{args.readers} readers x {args.cases} cases x {args.modalities} modalities: the whole "
          f"OR analysis in {median:.3f} s (median of {REPEATS}), {slowest:.3f} s at the slowest "
          "(goal: under 2 s)")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ratings.csv"
        with path.open("w", newline="") as handle:
            out = csv.writer(handle)
            out.writerow(["modality", "reader", "case", "truth", "rating"])
            for m, modality in enumerate(data.modalities):
                for r, reader in enumerate(data.readers):
                    out.writerows((modality, reader, case, int(data.truth[c]), data.ratings[m, r, c])
                                  for c, case in enumerate(data.cases))
        median, slowest = timed(lambda: analyse(read_csv(path)))
    print(f"the same from its CSV ({len(data.modalities) * len(data.readers) * len(data.cases):,} "
          f"rows), read and checked: {median:.3f} s (median), {slowest:.3f} s at the slowest")
    one = MrmcData(data.modalities[:1], data.readers, data.cases, data.truth, data.ratings[:1])
    median, slowest = timed(lambda: versus_panel(one, "0"))
    print(f"reader 0 against the other {args.readers - 1}, one modality: {median:.3f} s "
          f"(median), {slowest:.3f} s at the slowest")


if __name__ == "__main__":
    main()
