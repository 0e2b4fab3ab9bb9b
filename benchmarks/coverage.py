"""Coverage of the report's intervals on clustered data (not part of the test suite).

Each simulated study has IMAGES source images with EDITS edits each. An image carries a random
effect that makes all its edits easier or harder for everyone: the judge and three readers
err more on a hard image, so edits of one image are correlated, as in Med-Banana. Every
interval the report shows is computed exactly as the report does (the same functions), and
its coverage of the true value is counted over DATASETS studies. The true values come from
one very large population drawn from the same model.

    .venv/bin/python benchmarks/coverage.py [--datasets 500] [--images 25] [--edits 4]
        [--model shared | readers]

A second data-generating model (``--model readers``), not the one the intervals were tuned
on: an image random effect on the logit scale with ICC 0.2; readers with their own error rates
(8, 12 and 16 % at an average image); and an edit-level difficulty every rater shares, so the
judge's errors correlate with the readers' beyond the image.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.agreement.ceiling import human_ceiling
from app.agreement.readers import among_readers
from app.agreement.reference import consensus, leave_one_out
from app.agreement.resample import ClusterBootstrap
from app.agreement.two_raters import compare

READERS = 3
PASS_RATE = 0.66  # the paper's share of qualified attempts
IMAGE_SD = 1.0  # spread of the image effect on the log-odds of an error
JUDGE_ERROR, READER_ERROR = 0.15, 0.10  # at an average image


MODEL_ICC = 0.2
READER_ERRORS = (0.08, 0.12, 0.16)
DIFFICULTY_SD = 0.8  # an edit's difficulty on the logit scale, shared by the judge and readers


def simulate_readers(rng: np.random.Generator, images: int, edits: int) -> dict[str, object]:
    """The second model: ICC 0.2 image effect, readers' own error rates, correlated errors."""
    sigma = np.sqrt(MODEL_ICC / (1 - MODEL_ICC) * np.pi**2 / 3)
    effect = np.repeat(rng.normal(0, sigma, images), edits)
    difficulty = rng.normal(0, DIFFICULTY_SD, images * edits)
    truth = rng.random(images * edits) < PASS_RATE

    def rater(error: float) -> list[bool]:
        logit = np.log(error / (1 - error)) + effect + difficulty
        wrong = rng.random(len(truth)) < 1 / (1 + np.exp(-logit))
        return list(np.where(wrong, ~truth, truth))

    return {"clusters": list(np.repeat(np.arange(images), edits)), "judge": rater(JUDGE_ERROR),
            "readers": [rater(e) for e in READER_ERRORS], "repeat": rater(READER_ERRORS[0])}


def simulate(rng: np.random.Generator, images: int, edits: int) -> dict[str, object]:
    effect = np.repeat(rng.normal(0, IMAGE_SD, images), edits)
    truth = rng.random(images * edits) < PASS_RATE

    def rater(error: float) -> list[bool]:
        logit = np.log(error / (1 - error)) + effect
        wrong = rng.random(len(truth)) < 1 / (1 + np.exp(-logit))
        return list(np.where(wrong, ~truth, truth))

    return {"clusters": list(np.repeat(np.arange(images), edits)), "judge": rater(JUDGE_ERROR),
            "readers": [rater(READER_ERROR) for _ in range(READERS)],
            # reader 1 reading every case again, blind to the first read (intra-reader)
            "repeat": rater(READER_ERROR)}


Interval = tuple[float | None, float | None, float | None]


def figures(study: dict[str, object], resamples: int) -> dict[str, Interval]:
    """Every interval of one question, as (value, low, high)."""
    boot = ClusterBootstrap(study["clusters"], resamples=resamples)  # type: ignore[arg-type]
    judge, readers = study["judge"], study["readers"]
    by_case = list(zip(*readers, strict=True))  # type: ignore[call-overload]
    reference = [consensus(v)[0] for v in by_case]
    out: dict[str, Interval] = {}

    def take(prefix: str, found: dict[str, object], names: tuple[str, ...]) -> None:
        for name in names:
            f = found[name]
            out[f"{prefix} {name}"] = (f["value"], f["low"], f["high"])  # type: ignore[index]

    pair_names = ("agreement", "kappa", "ac1", "a_stricter", "a_more_lenient",
                  "a_stricter_given_b_pass", "b_fail_given_a_pass", "a_pass_rate", "b_pass_rate")
    take("judge vs reference:", compare(judge, reference, boot).as_dict(), pair_names)  # type: ignore[arg-type]
    take("judge vs reader 1:", compare(judge, readers[0], boot).as_dict(), ("agreement", "kappa"))  # type: ignore[index]
    others = [leave_one_out(v, 0) for v in by_case]
    take("reader 1 vs others:", compare(readers[0], others, boot).as_dict(), ("agreement", "kappa"))  # type: ignore[index]
    take("readers 1-2:", compare(readers[0], readers[1], boot).as_dict(), ("agreement", "kappa"))  # type: ignore[index]
    take("reader 1 vs own repeat:", compare(readers[0], study["repeat"], boot).as_dict(),  # type: ignore[index, arg-type]
         ("agreement", "kappa"))
    take("among readers:", among_readers(readers, boot), ("fleiss_kappa", "ac1", "krippendorff_alpha"))  # type: ignore[arg-type]
    take("human ceiling:", human_ceiling(judge, readers, boot),  # type: ignore[arg-type]
         ("judge_vs_readers", "reader_vs_reader", "difference"))
    return out


MODELS = {"shared": simulate, "readers": simulate_readers}


def truths(rng: np.random.Generator, model: str = "shared") -> dict[str, float]:
    """The population values: the same estimators on one very large draw (no intervals)."""
    population = MODELS[model](rng, 200_000, 1)
    return {name: value for name, (value, _, _) in figures(population, resamples=2).items()
            if value is not None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=500)
    parser.add_argument("--images", type=int, default=25)
    parser.add_argument("--edits", type=int, default=4)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--model", choices=sorted(MODELS), default="shared")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    truth = truths(rng, args.model)
    hits: dict[str, list[bool]] = {name: [] for name in truth}
    started = time.perf_counter()
    for i in range(args.datasets):
        found = figures(MODELS[args.model](rng, args.images, args.edits), args.resamples)
        for name, (_, low, high) in found.items():
            if name in hits and low is not None and high is not None:
                hits[name].append(low <= truth[name] <= high)
        print(f"\r{i + 1}/{args.datasets} data sets", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    print(f"model {args.model}: {args.datasets} data sets, {args.images} images x {args.edits} "
          f"edits, {READERS} readers, {args.resamples} resamples, "
          f"{time.perf_counter() - started:.0f} s")
    print("| interval | true value | coverage | intervals |\n|---|---|---|---|")
    for name, got in hits.items():
        share = sum(got) / len(got) if got else float("nan")
        print(f"| {name} | {truth[name]:.3f} | {share * 100:.1f} % | {len(got)} |")


if __name__ == "__main__":
    main()
