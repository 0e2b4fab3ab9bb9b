"""Benchmark: the page and import benchmarks on an earlier commit and on this checkout, side by
side in one run, alternating, so that both see the same machine.

    .venv/bin/python benchmarks/side_by_side.py 45b781f [--rounds 4] [--work var/bench] [--pages-only]

The earlier commit is checked out as a git worktree under --work and run with this venv.
Its package resources (templates, static, migrations, prompts) are linked inside its own
packages, since the editable install maps them to this checkout's. Both sides use this
checkout's import child and page benchmark (benchmarks/pages.py and what it imports from
benchmarks/), which only measure, so both sides are timed alike. --pages-only skips the imports
and times both sides' pages on the database under --work. Prints the median p50 and p95 per page, their
after/before ratios, and the median import time.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
PAGE_LINE = re.compile(r"(.+?)\s+p50\s+([\d.]+) ms\s+p95\s+([\d.]+) ms")
FIRST_IMPORT = re.compile(r"first import: \{'seconds': ([\d.]+)")
# Resource packages and where they live in a checkout (pyproject's package-dir).
# This checkout's measuring scripts, run on both sides.
MEASURING = ("_import_child.py", "pages.py", "serving.py", "plans.py", "accounts.py", "postgres.py")
RESOURCES = {"app/templates": "templates", "app/static": "static", "app/migrations": "migrations",
             "pipeline/prompt_templates": "prompts"}


def checkout(commit: str, work: Path) -> Path:
    target = work / f"side-by-side-{commit}"
    if not target.is_dir():
        subprocess.run(["git", "worktree", "add", "--force", "--detach", str(target), commit],
                       cwd=HERE, check=True, capture_output=True)
    for link, folder in RESOURCES.items():
        path = target / link
        if not path.exists():
            path.symlink_to(Path("..") / folder)
    for name in MEASURING:
        shutil.copy(HERE / "benchmarks" / name, target / "benchmarks" / name)
    return target


def run(side: Path, tree: Path, pages_only: bool) -> tuple[float, dict[str, tuple[float, float]]]:
    env = dict(os.environ, PYTHONPATH=str(side))
    seconds = float("nan")
    if not pages_only:
        out = subprocess.run([sys.executable, "benchmarks/import_scale.py", "--work", str(tree)],
                             cwd=side, env=env, capture_output=True, text=True, check=True).stdout
        found = FIRST_IMPORT.search(out)
        if found is None:
            sys.exit(f"no import time in the output of {side}:\n{out}")
        seconds = float(found.group(1))
    pages = subprocess.run([sys.executable, "benchmarks/pages.py", "--db", str(tree / "bench.db"),
                            "--repeat", "100"], cwd=side, env=env, capture_output=True, text=True,
                           check=True).stdout
    times = {m.group(1).strip(): (float(m.group(2)), float(m.group(3)))
             for m in map(PAGE_LINE.match, pages.splitlines()) if m}
    return seconds, times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("commit")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--work", type=Path, default=Path("var/bench"))
    parser.add_argument("--pages-only", action="store_true",
                        help="no imports: time both sides' pages on the database under --work")
    args = parser.parse_args()
    work = args.work.resolve()
    sides = {"before": checkout(args.commit, work), "after": HERE}
    imports: dict[str, list[float]] = {s: [] for s in sides}
    pages: dict[str, dict[str, list[tuple[float, float]]]] = {s: {} for s in sides}
    for r in range(args.rounds):
        for name in (("before", "after") if r % 2 == 0 else ("after", "before")):
            seconds, times = run(sides[name], work, args.pages_only)
            imports[name].append(seconds)
            for url, figures in times.items():
                pages[name].setdefault(url, []).append(figures)
            print(f"round {r + 1}/{args.rounds} {name}: import {seconds:.1f} s", flush=True)
    print(f"\n{'page':58} {'p50 before':>10} {'after':>7} {'ratio':>6} {'p95 before':>10} {'after':>7}")
    ratios = []
    for url, before in pages["before"].items():
        after = pages["after"][url]
        b50, a50 = (statistics.median(p for p, _ in x) for x in (before, after))
        b95, a95 = (statistics.median(q for _, q in x) for x in (before, after))
        ratios.append(a50 / b50)
        print(f"{url:58} {b50:10.1f} {a50:7.1f} {a50 / b50:6.2f} {b95:10.1f} {a95:7.1f}")
    bi, ai = statistics.median(imports["before"]), statistics.median(imports["after"])
    print(f"geometric mean of the p50 ratios: {statistics.geometric_mean(ratios):.3f}")
    if not args.pages_only:
        print(f"import, median of {args.rounds}: before {bi:.1f} s, after {ai:.1f} s "
              f"(ratio {ai / bi:.2f})")


if __name__ == "__main__":
    main()
