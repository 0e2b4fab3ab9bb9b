"""Run one import in a fresh process and print its wall time and peak RSS as JSON."""

import json
import sys
import time
from pathlib import Path

# The repository first: run as a script, this folder is on the path before it, and its
# pipeline.py benchmark would shadow the pipeline package the importer's vocabulary is in.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from app.db import make_engine, migrate
from app.importer import import_tree


def peak_rss_mib() -> float:
    """VmHWM belongs to this address space; ru_maxrss would include the parent's before exec."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


url, run_root, source_root = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
engine = make_engine(url)
migrate(engine)
start = time.perf_counter()
report = import_tree(engine, run_root, source_root)
seconds = time.perf_counter() - start
print(json.dumps({
    "seconds": round(seconds, 2),
    "peak_rss_mib": round(peak_rss_mib(), 1),
    "tasks_added": report.tasks_added, "attempts_added": report.attempts_added,
    "files_unchanged": report.files_unchanged, "problems": report.problem_total,
}))
