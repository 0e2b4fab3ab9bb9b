"""Benchmark: the importer against a raw floor on the same 88K-task run. Goal: <= 1.5x.

    .venv/bin/python benchmarks/import_floor.py [--work var/bench]

The floor is the least any importer must do to put the same rows in the same schema:
``json.load`` each folder's all_conversations.json, build plain tuples, and insert them
with sqlite3's ``executemany``, one transaction per file, with the app's own pragmas and
indexes (the database is made by the app's migrations). It checks nothing: no image on
disk, no schema validation, no fingerprints, no problems reported, no re-import. The app's
import runs in a fresh process on a fresh database, as in benchmarks/import_scale.py
(run that first: it writes the tree).
"""

import argparse
import json
import sqlite3
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from app.db import make_engine, migrate
from benchmarks.import_scale import run_import

GOAL_RATIO = 1.5
MODALITY = {"Chest-XRay": "chest_xray", "Brain-MRI": "brain_mri", "Fundus": "fundus"}
NOW = "2026-01-01 00:00:00.000000"


def floor_import(db: Path, run_root: Path) -> tuple[float, int]:
    """Seconds taken and tasks written by the raw floor."""
    engine = make_engine(f"sqlite:///{db.resolve()}")
    migrate(engine)  # the same tables, indexes and FTS5 table as the app's
    engine.dispose()
    start = time.perf_counter()
    conn = sqlite3.connect(db, isolation_level=None)
    for pragma in ("journal_mode=WAL", "synchronous=FULL", "foreign_keys=ON"):
        conn.execute(f"PRAGMA {pragma}")
    ids = {"source": 0, "task": 0, "run": 0, "attempt": 0, "verdict": 0}
    sources: dict[tuple[str, str, str], int] = {}
    tasks = 0
    for path in sorted(run_root.glob("*/all_conversations.json")):
        folder = path.parent.name
        dataset = next(d for d in MODALITY if folder.startswith(d))
        direction = "remove" if "-remove" in folder else "add"
        rows: dict[str, list[tuple]] = {k: [] for k in ("source", "task", "run", "attempt", "verdict",
                                                        "search")}
        for key, entry in json.load(path.open()).items():
            source_key = (dataset, entry["disease"], entry["image"])
            if source_key not in sources:
                ids["source"] += 1
                sources[source_key] = ids["source"]
                rows["source"].append((ids["source"], *source_key[:1], MODALITY[dataset],
                                       *source_key[1:], 1))
            ids["task"] += 1
            ids["run"] += 1
            sid, tid, rid = sources[source_key], ids["task"], ids["run"]
            rounds = entry.get("rounds") or []
            success = entry.get("status") == "success"
            rows["task"].append((tid, sid, dataset, MODALITY[dataset], entry["disease"], direction, key,
                                 rid, "success" if success else "failed", len(rounds), 0))
            rows["run"].append((rid, tid, "imported", "success" if success else "failed", len(rounds),
                                len(rounds) if success else None, entry.get("final_prompt"), key, NOW))
            texts = []
            for r in rounds:
                ids["attempt"] += 1
                prompt, verdict = r.get("generate_prompt") or {}, r.get("verification") or {}
                rows["attempt"].append((ids["attempt"], rid, int(r["round"]), prompt.get("prompt"),
                                        prompt.get("thinking_summary"), 1, f"{key}/{r['round']}.jpeg", 1))
                ids["verdict"] += 1
                rows["verdict"].append((ids["verdict"], ids["attempt"], verdict.get("qualified"),
                                        verdict.get("has_disease"), verdict.get("structure_reasonable"),
                                        verdict.get("looks_realistic"), verdict.get("reason"),
                                        verdict.get("thinking_summary"), json.dumps(verdict), NOW))
                texts += [prompt.get("prompt") or "", verdict.get("reason") or ""]
            rows["search"].append((tid, "\n".join(texts)))
            tasks += 1
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO source_image (id, dataset, modality, category, filename, present) "
                         "VALUES (?, ?, ?, ?, ?, ?)", rows["source"])
        conn.executemany("INSERT INTO task (id, source_image_id, dataset, modality, disease, direction, "
                         "task_key, latest_run_id, outcome, n_rounds, failed_mask) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows["task"])
        conn.executemany("INSERT INTO run (id, task_id, origin, outcome, n_rounds, success_round, "
                         "final_instruction, fingerprint, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         rows["run"])
        conn.executemany("INSERT INTO attempt (id, run_id, round, instruction, instruction_thinking, "
                         "image_root_id, image_relpath, image_present) VALUES (?, ?, ?, ?, ?, NULL, ?, ?)",
                         [row[:5] + row[6:] for row in rows["attempt"]])
        conn.executemany("INSERT INTO judge_verdict (id, attempt_id, qualified, has_disease, structure, "
                         "realism, reason, thinking_summary, raw_json, created_at) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows["verdict"])
        conn.executemany("INSERT INTO task_search (rowid, body) VALUES (?, ?)", rows["search"])
        conn.execute("COMMIT")
    conn.close()
    return time.perf_counter() - start, tasks


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, default=Path("var/bench"))
    args = parser.parse_args()
    tree = args.work / "tree"
    if not (tree / "run").is_dir():
        sys.exit(f"{tree / 'run'}: no benchmark tree; run benchmarks/import_scale.py first")
    floor_db, app_db = args.work / "floor.db", args.work / "floor-app.db"
    for db in (floor_db, app_db):
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
    floor_seconds, tasks = floor_import(floor_db, tree / "run")
    print(f"raw floor (json.load + executemany): {floor_seconds:.2f} s, {tasks} tasks")
    app = run_import(f"sqlite:///{app_db.resolve()}", tree)
    print(f"app import: {app['seconds']:.2f} s, {app['tasks_added']} tasks, {app['peak_rss_mib']} MiB")
    ratio = app["seconds"] / floor_seconds
    print(f"app / floor: {ratio:.2f}x (goal <= {GOAL_RATIO}x: {'met' if ratio <= GOAL_RATIO else 'NOT met'})")
    for db in (floor_db, app_db):
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)


if __name__ == "__main__":
    main()
