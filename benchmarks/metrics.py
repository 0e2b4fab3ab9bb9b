"""Benchmark: preservation metrics of one 1024-pixel pair.

    .venv/bin/python benchmarks/metrics.py [--pairs 40] [--db var/bench/bench.db]

Draws demo phantoms at 1024 x 1024 (JPEG 95, as the data), edits each with a lesion, and
times app.images.metrics.preservation (decode, resize to the working side, PSNR, SSIM, the changed
region, masked SSIM, regions), against a plain full-resolution SSIM for reference.
Goal: <= 100 ms per pair.
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np
from PIL import Image
from skimage.metrics import structural_similarity

from app.demo.phantoms import Lesion, Scene, render
from app.images.metrics import WORK_SIDE, preservation
from app.models import Modality

GOAL_MS = 100.0
GOAL_DIFF_MS = 10.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=40)
    parser.add_argument("--db", type=Path, default=Path("var/bench/bench.db"),
                        help="For the difference-map part (left out if missing).")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    pairs = []
    modalities = [Modality.chest_xray, Modality.brain_mri, Modality.fundus]
    for n in range(args.pairs):
        scene = Scene(modalities[n % 3], n)
        before, after = folder / f"{n}-a.jpeg", folder / f"{n}-b.jpeg"
        render(scene, 1024).save(before, quality=95)
        render(scene.with_lesions(Lesion(0.3 + 0.01 * (n % 20), 0.5, 0.1, 0.3)), 1024).save(after, quality=95)
        pairs.append((before, after))
    times = []
    for before, after in pairs:
        start = time.perf_counter()
        preservation(before, after)
        times.append((time.perf_counter() - start) * 1000)
    with Image.open(pairs[0][0]) as a, Image.open(pairs[0][1]) as b:
        full_a = np.asarray(a.convert("L"), dtype=np.float32) / 255
        full_b = np.asarray(b.convert("L"), dtype=np.float32) / 255
    start = time.perf_counter()
    structural_similarity(full_a, full_b, data_range=1.0)
    full = (time.perf_counter() - start) * 1000
    p50, p95 = statistics.median(times), statistics.quantiles(times, n=20)[-1]
    print(f"{len(pairs)} pairs of 1024 x 1024 JPEGs, metrics at {WORK_SIDE} x {WORK_SIDE}:")
    print(f"  per pair (decode, PSNR, SSIM, changed region, masked SSIM, regions): "
          f"median {p50:.1f} ms, p95 {p95:.1f} ms")
    print(f"  for reference, a plain SSIM at full resolution: {full:.0f} ms")
    print(f"  goal <= {GOAL_MS:.0f} ms: {'met' if p95 <= GOAL_MS else 'NOT met'}")
    if args.db.is_file():
        difference_maps(args.db)


def difference_maps(db: Path) -> None:
    """Serving /images/diff/{attempt}: drawn on the first request, cached afterwards."""
    from fastapi.testclient import TestClient
    from sqlalchemy import select
    from sqlmodel import Session, col

    from app.db import make_engine, migrate
    from app.models import Task
    from app.settings import Settings
    from app.web.main import create_app
    from benchmarks.accounts import bench_admin_token

    engine = make_engine(f"sqlite:///{db.resolve()}")
    migrate(engine)
    with Session(engine) as session:
        attempts = list(session.scalars(select(col(Task.accepted_attempt_id)).where(
            col(Task.accepted_attempt_id).is_not(None)).limit(20)))
    settings = Settings(demo=True, var_dir=Path(tempfile.mkdtemp()), worker=False)
    client = TestClient(create_app(settings, engine),
                        headers={"Authorization": f"Bearer {bench_admin_token(engine)}"})
    first, cached = [], []
    for attempt in attempts:
        start = time.perf_counter()
        assert client.get(f"/images/diff/{attempt}").status_code == 200
        first.append((time.perf_counter() - start) * 1000)
        for _ in range(5):
            start = time.perf_counter()
            assert client.get(f"/images/diff/{attempt}").status_code == 200
            cached.append((time.perf_counter() - start) * 1000)
    print(f"difference map (preview, 768 px PNG) on {db}: first request median "
          f"{statistics.median(first):.0f} ms; cached median {statistics.median(cached):.1f} ms, "
          f"p95 {statistics.quantiles(cached, n=20)[-1]:.1f} ms "
          f"(goal <= {GOAL_DIFF_MS:.0f} ms: "
          f"{'met' if statistics.quantiles(cached, n=20)[-1] <= GOAL_DIFF_MS else 'NOT met'})")


if __name__ == "__main__":
    main()
