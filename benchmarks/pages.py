"""Benchmark: server time of /cases and /cases/{id} on the 88K-task database.

    .venv/bin/python benchmarks/pages.py [--db var/bench/bench.db] [--repeat 200]

Run benchmarks/import_scale.py first; it leaves the database behind. Requests go through
the ASGI app in-process, so the times are the server's, not the network's. Goal: p95 <= 50 ms.
"""

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from fastapi.testclient import TestClient

from app.db import make_engine, migrate
from app.main import create_app
from app.settings import Settings
from benchmarks.accounts import bench_admin_token

GOAL_P95_MS = 50.0
LIST_URLS = {
    "/cases (no filter)": "/cases",
    "/cases?modality=chest_xray&outcome=failed": "/cases?modality=chest_xray&outcome=failed",
    "/cases?disease=Pneumothorax&direction=remove&rounds=1":
        "/cases?disease=Pneumothorax&direction=remove&rounds=1",
    "/cases?failed_dimension=realism&modality=fundus": "/cases?failed_dimension=realism&modality=fundus",
    "/cases?q=pleural (text search)": "/cases?q=pleural",
    "/cases htmx partial, page 3": None,
}


def percentile(samples: list[float], p: float) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[int(p) - 1]


def measure(client: TestClient, urls: list[str], headers: dict[str, str] | None = None) -> list[float]:
    times = []
    for url in urls:
        start = time.perf_counter()
        response = client.get(url, headers=headers or {})
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", type=Path, default=Path("var/bench/bench.db"))
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    if not args.db.is_file():
        sys.exit(f"{args.db} not found: run benchmarks/import_scale.py first")
    engine = make_engine(f"sqlite:///{args.db.resolve()}")
    migrate(engine)  # a database left by an older import_scale run
    settings = Settings(var_dir=Path(tempfile.mkdtemp()))
    client = TestClient(create_app(settings, engine),
                        headers={"Authorization": f"Bearer {bench_admin_token(engine)}"})
    # The first list after an import pays for the facet scan that later requests reuse.
    cold = measure(client, ["/cases"])[0]
    cold_text = measure(client, ["/cases?q=opacity"])[0]  # in nearly every task: worst case
    total = client.get("/api/cases?limit=1").json()["total"]
    ids = [item["id"] for item in client.get("/api/cases?limit=1000").json()["items"]]
    third = client.get("/api/cases?limit=96").json()["items"][-1]["id"]
    rng = random.Random(1)
    print(f"database: {args.db} ({total} cases); {args.repeat} requests each, after one warm-up")
    results = {}
    for name, url in LIST_URLS.items():
        headers = {"HX-Request": "true"} if url is None else None
        target = url or f"/cases?after={third}"
        measure(client, [target], headers)  # warm-up: fills the facet cache as a user would
        results[name] = measure(client, [target] * args.repeat, headers)
    case_urls = [f"/cases/{rng.choice(ids)}" for _ in range(args.repeat)]
    results["/cases/{id} (random cases)"] = measure(client, case_urls)
    results["/cases/{id}?modality=fundus (with j/k neighbours)"] = measure(
        client, [f"/cases/{rng.choice(ids)}?modality=fundus" for _ in range(args.repeat)])
    worst = 0.0
    for name, samples in results.items():
        p50, p95 = percentile(samples, 50), percentile(samples, 95)
        worst = max(worst, p95)
        print(f"{name:58s} p50 {p50:6.1f} ms   p95 {p95:6.1f} ms")
    print(f"first /cases after start (facet scan, cached afterwards): {cold:.0f} ms; "
          f"first search for a new word: {cold_text:.0f} ms")
    print(f"goal p95 <= {GOAL_P95_MS:.0f} ms: {'met' if worst <= GOAL_P95_MS else 'NOT met'} "
          f"(worst p95 {worst:.1f} ms)")


if __name__ == "__main__":
    main()
