"""Benchmark: what marking every edit costs an export, and DICOM against the scripts' layout.

    .venv/bin/python benchmarks/marking.py [--edits 1000] [--repeats 3] [--busy 1]

A scripts-format run is written once under var/bench/marking: tasks with 1-5 rounds until
there are at least --edits edits, every image its own 1024 x 1024 JPEG (textured noise, so
each file is as large and as slow to decode as a real radiograph's: about 0.8 MB), and
imported into a fresh SQLite database. Then, in turns (the order reversed every repeat, a
fresh process each, while --busy processes spin on the other cores):

- ``export-run`` as shipped: every edit marked (app/provenance, a signed C2PA manifest);
- ``export-run`` unmarked: the same code with a Marker that hands back the stored bytes,
  as the export wrote them before marking;
- ``export-dicom`` of the same tasks (app/dicom/export.py), originals, edits and reports.

Goals (issue 57): marking adds at most 20 % to export-run; export-dicom takes at most 3 times
export-run. Printed: each run's seconds, the medians, and the two ratios of medians.
"""

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.importer import layout
from app.models import Direction

BASE = Path("var/bench/marking")
SIZE = 1024
ROUNDS = [1] * 6 + [2] * 2 + [3, 4, 5]
DATASETS = (("Chest-XRay", "Lung_Lesion", "L"), ("Brain-MRI", "glioma", "L"), ("Fundus", "AMD", "RGB"))
CHILD = r'''
import json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from app.db import make_engine
from app.dicom.export import write_dicom
from app.dicom.selection import DicomSelection
from app.dicom.uids import Uids
from app.exports import export_runs
from app.images.files import ImageKind, resolve_image
from app.provenance.marker import Marker
from app.provenance.signing import own_identity


class Unmarked(Marker):
    """The control: the stored bytes, as export-run wrote them before marking."""

    def edit(self, session, attempt_id, data=None, *, without_original=False):
        if data is not None:
            return data
        return resolve_image(session, ImageKind.attempt, attempt_id).read_bytes()


engine = make_engine(sys.argv[2])
target, arm = Path(sys.argv[3]), sys.argv[4]
identity = own_identity(target.parent.parent / "c2pa")
start = time.perf_counter()
if arm == "dicom":
    from sqlmodel import Session, select
    from app.models import Task
    with Session(engine) as session:
        tasks = tuple(session.exec(select(Task.id)))
    built = write_dicom(engine, target, DicomSelection(task_ids=tasks), Uids())
    count = built.edits
else:
    written = export_runs(engine, target, Marker(identity) if arm == "marked" else Unmarked(identity))
    count = written.edits
print(json.dumps({"seconds": time.perf_counter() - start, "edits": count}))
'''


def noise(rng: np.random.Generator, mode: str) -> Image.Image:
    """A textured image: smooth structure plus grain, which JPEG cannot squeeze away."""
    coarse = rng.normal(128, 40, (SIZE // 32, SIZE // 32))
    base = np.kron(coarse, np.ones((32, 32))) + rng.normal(0, 18, (SIZE, SIZE))
    grey = np.clip(base, 0, 255).astype(np.uint8)
    if mode == "L":
        return Image.fromarray(grey)
    return Image.fromarray(np.stack([grey, np.roll(grey, 7, 0), np.roll(grey, 7, 1)], axis=2))


def write_tree(out: Path, edits: int, seed: int = 57) -> int:
    """The run (once; a finished tree is reused); returns its edits."""
    done = out / "COMPLETE"
    if done.is_file():
        return int(done.read_text())
    shutil.rmtree(out, ignore_errors=True)
    rng, np_rng = random.Random(seed), np.random.default_rng(seed)
    folders: dict[tuple[str, str], dict] = {}
    made, n = 0, 0
    while made < edits:
        dataset, disease, mode = DATASETS[n % len(DATASETS)]
        stem = f"bm-{n:05d}"
        category = layout.source_category(Direction.add, disease)
        source = out / "source" / dataset / category / f"{stem}.jpeg"
        source.parent.mkdir(parents=True, exist_ok=True)
        noise(np_rng, mode).save(source, "JPEG", quality=92)
        rounds = rng.choice(ROUNDS)
        entries = []
        for k in range(1, rounds + 1):
            accepted = k == rounds and rng.random() < 0.7
            rel = (layout.accepted_relpath(dataset, Direction.add, stem, disease) if accepted
                   else layout.failed_relpath(dataset, Direction.add, stem, disease, k))
            target = out / "run" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            noise(np_rng, mode).save(target, "JPEG", quality=92)
            prompt = {"thinking_summary": "", "prompt": f"Add a lesion, round {k}"}
            entries.append({"round": k, "generate_prompt": prompt,
                            "edit_result": {"success": True},
                            "verification": {"qualified": accepted, "has_disease": accepted,
                                             "structure_reasonable": True, "looks_realistic": accepted,
                                             "reason": "benchmark"}})
            made += 1
        key = f"{stem}-{disease}"
        folder = folders.setdefault((dataset, disease), {"conversations": {}, "progress": {}})
        status = "success" if entries[-1]["verification"]["qualified"] else "failed"
        folder["conversations"][key] = {
            "image": f"{stem}.jpeg", "disease": disease, "status": status, "rounds": entries,
            "final_prompt": entries[-1]["generate_prompt"]["prompt"],
            "final_image_path": f"img_gen/{key}.jpeg"}
        folder["progress"][key] = status
        n += 1
    for (dataset, _), found in folders.items():
        folder = out / "run" / f"{dataset}-{layout.DISK_DIRECTION[Direction.add]}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "all_conversations.json").write_text(json.dumps(found["conversations"]))
        (folder / "progress.json").write_text(json.dumps(found["progress"]))
        (folder / "api_failures.json").write_text("[]")
    done.write_text(str(made))
    return made


def database(tree: Path) -> str:
    from app.db import make_engine, migrate
    from app.importer import import_tree

    path = tree.parent / "marking.db"
    if not path.is_file():
        engine = make_engine(f"sqlite:///{path.resolve()}")
        migrate(engine)
        import_tree(engine, tree / "run", tree / "source")
        engine.dispose()
    return f"sqlite:///{path.resolve()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--busy", type=int, default=1, help="CPU-bound processes beside it")
    args = parser.parse_args()
    tree = BASE / f"tree-{args.edits}"
    started = time.perf_counter()
    edits = write_tree(tree, args.edits)
    url = database(tree)
    print(f"{edits} edits of {SIZE} px under {tree} ({time.perf_counter() - started:.0f} s to make)")
    repo = str(Path(__file__).resolve().parent.parent)
    arms = ["marked", "unmarked", "dicom"]
    found: dict[str, list[float]] = {arm: [] for arm in arms}
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    out = BASE / "out"
    try:
        for repeat in range(args.repeats):
            for arm in arms if repeat % 2 == 0 else arms[::-1]:
                shutil.rmtree(out / arm, ignore_errors=True)
                (out / arm).parent.mkdir(parents=True, exist_ok=True)
                result = subprocess.run(
                    [sys.executable, "-c", CHILD, repo, url, str(out / arm), arm],
                    capture_output=True, text=True, check=True)
                run = json.loads(result.stdout.strip().splitlines()[-1])
                found[arm].append(run["seconds"])
                print(f"repeat {repeat + 1}, {arm}: {run['seconds']:.1f} s, {run['edits']} edits",
                      flush=True)
    finally:
        for burner in burners:
            burner.kill()
    median = {arm: statistics.median(times) for arm, times in found.items()}
    print(f"medians: marked {median['marked']:.1f} s, unmarked {median['unmarked']:.1f} s, "
          f"dicom {median['dicom']:.1f} s")
    print(f"marking: {median['marked'] / median['unmarked']:.2f}x export-run unmarked (goal <= 1.20)")
    print(f"export-dicom: {median['dicom'] / median['marked']:.2f}x export-run (goal <= 3.00)")


if __name__ == "__main__":
    main()
