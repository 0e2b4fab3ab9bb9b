"""Many radiologists reading at once, against real `medbanana serve` processes over HTTP.

    .venv/bin/python benchmarks/many_readers.py [--url sqlite|postgres|URL] [--workers 1]
        [--levels 1,10,25,50,100] [--seconds 15] [--think 0,5] [--think-seconds 60] [--rounds 2]
        [--busy 0] [--checks on,off] [--log on,off] [--threads 4,8]

Each simulated reader is its own account reading its own list of one study: it answers the
case it is on and follows the redirect to its next case, which is what is timed ("next
case"), then looks at that case for a random time (exponential, mean --think seconds; 0: no
time at all). The think times and levels take turns (in one order, then the reverse,
round after round), so a busy machine weighs on all of them alike. Printed per think time
and level: next-case p50 / p95 / p99,
errors (any 5xx, refused connection or timeout; 503s counted apart), throughput in next
cases a second, and the p95 and throughput as ratios to the lone reader with no think time
in the same run, and the CPU time per next case of the server and of the simulated readers
(this process), who share the machine's cores with it, and how busy the machine's cores were
(every process counted: the database server's too). After the levels each server is left
5 s, and a lone reader's next case is timed again.

--busy N keeps N other processes spinning on the CPU for the whole run: a reading room's
server is never alone on its machine.

--workers 1,2 starts a server of each size at once, on the same database, and loads them in
turn (one idles while the other is read), so the two are compared in the same conditions.

--log on,off: with and without the tamper-evident audit log (MEDBANANA_AUDIT_LOG=false), to
measure what a record per answer costs a submit.

--threads 4,8 starts a server with each number of request threads
(MEDBANANA_REQUEST_THREADS), to size the default.

--checks on,off: with and without reader checks queued after a known-answer case (MEDBANANA_READER_CHECKS
=false), to measure what they cost. The server's CPU time per next case is printed per level.

--url sqlite (the default) makes a database of the demo data in var/bench/many_readers;
--url postgres uses benchmarks/postgres.py's server (a fresh database of the demo data).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import ssl
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from sqlmodel import Session  # noqa: E402

from app.accounts.users import create_user, find_user, issue_token  # noqa: E402
from app.cases.filters import CaseFilter  # noqa: E402
from app.db import make_engine, migrate  # noqa: E402
from app.demo.pilot import make_pilot  # noqa: E402
from app.models import Role  # noqa: E402
from app.studies.design import StudyPlan, create_study  # noqa: E402
from app.studies.models import Design  # noqa: E402
from benchmarks.served import MEDBANANA  # noqa: E402
from benchmarks.served import serve as served  # noqa: E402

BASE = ROOT / "var" / "bench" / "many_readers"
KEEP_ALIVE = 60.0  # seconds: under the server's (app/cli/root.py), as a browser's
CASES = 60  # each reader's list; a reader at its end starts it again (new answer versions)
KNOWN_SHARE = 0.08  # above the form's 5 %, as many as the demo pilot settles
FORMS = [{"compliance": "yes", "structure": "yes", "realism": "yes", "fidelity": "yes",
          "overall": "accept", "confidence": "4"},
         {"compliance": "no", "structure": "yes", "realism": "no", "fidelity": "yes",
          "overall": "reject", "confidence": "3"}]


def _run(*args: str, env: dict[str, str]) -> None:
    subprocess.run([MEDBANANA, *args], check=True, env=env, stdout=subprocess.DEVNULL)


def database(kind: str) -> str:
    """The URL of a database holding the demo data, made afresh."""
    source = BASE / "demo"
    if not (source / "run").exists():
        shutil.rmtree(source, ignore_errors=True)
        _run("demo-data", str(source), "--size", "256", env=dict(os.environ))
    if kind == "postgres":
        from benchmarks.postgres import start

        server = start()
        import psycopg

        with psycopg.connect(f"host=127.0.0.1 port={server.port} user=postgres dbname=postgres",
                             autocommit=True) as conn:
            conn.execute("DROP DATABASE IF EXISTS many_readers WITH (FORCE)")
            conn.execute("CREATE DATABASE many_readers")
        url = f"postgresql+psycopg://postgres@127.0.0.1:{server.port}/many_readers"
    elif kind == "sqlite":
        path = BASE / "many_readers.db"
        path.unlink(missing_ok=True)
        url = f"sqlite:///{path}"
    else:
        url = kind
    env = dict(os.environ, MEDBANANA_DATABASE_URL=url, MEDBANANA_VAR_DIR=str(BASE / "var"))
    _run("import", str(source / "run"), "--source", str(source / "source"), env=env)
    return url


def study(url: str, readers: int) -> tuple[int, list[str]]:
    """A study every reader reads, KNOWN_SHARE of each list known-answer cases (from the
    demo's locked pilot), and each reader's API token."""
    engine = make_engine(url)
    migrate(engine)
    with Session(engine) as session:
        admin = find_user(session, "many-admin") or create_user(
            session=session, name="many-admin", role=Role.admin, password="many-admin-password")
        make_pilot(session, admin)
        people = [find_user(session, f"many-{i:03d}") or create_user(
            session=session, name=f"many-{i:03d}", role=Role.reader,
            password="many-reader-password") for i in range(readers)]
        made = create_study(session=session, created_by=admin, plan=StudyPlan(
            name=f"many readers {time.time():.0f}", case_filter=CaseFilter(), total=CASES,
            design=Design.accepted, reader_ids=[p.id or 0 for p in people], seed=3,
            known_share=KNOWN_SHARE))
        tokens = [issue_token(session=session, user=p) for p in people]
        study_id = made.id or 0
    from app.studies.previews import warm_previews

    warm_previews(engine, study_id, BASE / "var" / "cache")
    engine.dispose()
    return study_id, tokens


def serve(url: str, port: int, variant: Variant) -> subprocess.Popen[bytes]:
    env = dict(MEDBANANA_DEMO="true", MEDBANANA_WORKER="false",
               MEDBANANA_VAR_DIR=str(BASE / "var"),
               MEDBANANA_READER_CHECKS=str(variant.checks).lower(),
               MEDBANANA_AUDIT_LOG=str(variant.log).lower())
    if variant.threads is not None:
        env["MEDBANANA_REQUEST_THREADS"] = str(variant.threads)
    return served(url, port, env, "--workers", str(variant.workers), wait=60)


def cpu_seconds(pid: int) -> float:
    """CPU time (user and system) of a process and its children (uvicorn's workers)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / tick
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                total += cpu_seconds(int(child))
    except (FileNotFoundError, ProcessLookupError):
        pass
    return total


def machine_ticks() -> tuple[int, int]:
    """The machine's busy and total CPU ticks so far, every core and process counted."""
    values = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle and iowait
    return sum(values) - idle, sum(values)


@dataclass(frozen=True)
class Variant:
    workers: int
    checks: bool
    threads: int | None = None  # None: the server's default
    log: bool = True

    @property
    def label(self) -> str:
        return (f"{self.workers} proc{'' if self.checks else ', no checks'}"
                f"{'' if self.log else ', no audit log'}"
                f"{'' if self.threads is None else f', {self.threads} threads'}")


@dataclass
class Level:
    times: list[float] = field(default_factory=list)  # seconds per next case
    outcomes: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    cpu: float = 0.0  # the server's CPU seconds during the level
    client_cpu: float = 0.0  # this process's (the simulated readers'), on the same cores
    busy: int = 0  # the machine's busy CPU ticks during the level, of
    ticks: int = 0  # all its ticks (every core)


async def read(base: str, study_id: int, tokens: list[str], at: list[int], seconds: float,
               think: float, level: Level) -> None:
    """Each token's reader answers and follows to its next case until the time is up."""
    # One client and connection each, as each radiologist has a browser. Idle connections
    # are dropped before the server's keep-alive ends them: a request sent on one the server
    # is closing at that moment fails (a browser resends it).
    limits = httpx.Limits(max_connections=1, keepalive_expiry=KEEP_ALIVE)
    # One TLS context for all (the URL is plain http): each client would otherwise load the
    # CA bundle, 21 ms of this process's CPU each, and 100 of them held back the first
    # readers' requests by 2 s and then sent them in a burst.
    tls = ssl.create_default_context()
    clients = [httpx.AsyncClient(base_url=base, timeout=60, limits=limits, verify=tls)
               for _ in tokens]

    async def reader(index: int) -> None:
        async with clients[index] as client:
            await reading(index, client)

    async def reading(index: int, client: httpx.AsyncClient) -> None:
        rng = random.Random(index)
        headers = {"Authorization": f"Bearer {tokens[index]}"}
        if think:  # readers who look at their cases are not all at the first one at once
            await asyncio.sleep(rng.expovariate(1 / think))
        while time.monotonic() < deadline:
            n = at[index]
            form = FORMS[(n // CASES) % 2] | {"submission_id": f"many-{index:03d}-{n:07d}"}
            started = time.perf_counter()
            try:
                answer = await client.post(f"/read/{study_id}/{n % CASES + 1}", data=form,
                                           headers=headers, follow_redirects=True)
                took = time.perf_counter() - started
                status = answer.status_code
            except httpx.HTTPError as error:
                level.outcomes[f"error: {type(error).__name__}"] += 1
                continue
            if status == 200:
                level.times.append(took)
                level.outcomes["ok"] += 1
                at[index] = n + 1
            elif status == 503:
                level.outcomes["503"] += 1
                await asyncio.sleep(float(answer.headers.get("retry-after", "1")))
            else:
                level.outcomes[f"error: {status}"] += 1
            if think:
                await asyncio.sleep(rng.expovariate(1 / think))

    started = time.monotonic()
    deadline = started + seconds
    await asyncio.gather(*(reader(i) for i in range(len(tokens))))
    level.seconds += time.monotonic() - started


def pct(times: list[float], p: int) -> float:
    if len(times) < 2:
        return float("nan")
    return statistics.quantiles(times, n=100, method="inclusive")[p - 1] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="sqlite")
    parser.add_argument("--workers", default="1", help="server processes; 1,2 compares them")
    parser.add_argument("--checks", default="on", help="reader checks; on,off compares them")
    parser.add_argument("--log", default="on", help="the audit log; on,off compares them")
    parser.add_argument("--threads", default="",
                        help="request threads per process; 4,8 compares them (default: the "
                             "server's own)")
    parser.add_argument("--levels", default="1,10,25,50,100")
    parser.add_argument("--seconds", type=float, default=15.0,
                        help="each level's time with no think time")
    parser.add_argument("--think-seconds", type=float, default=60.0,
                        help="each level's time when readers look at their cases")
    parser.add_argument("--think", default="0,5")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--busy", type=int, default=0, help="CPU-bound processes beside it")
    args = parser.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    thinks = [float(x) for x in args.think.split(",")]
    variants = [Variant(int(w), c == "on", int(t) if t else None, g == "on")
                for w in args.workers.split(",") for c in args.checks.split(",")
                for t in args.threads.split(",") for g in args.log.split(",")]
    url = database(args.url)
    study_id, tokens = study(url, max(levels))
    servers = {v: (serve(url, args.port + i, v), args.port + i)
               for i, v in enumerate(variants)}
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
               for _ in range(args.busy)]
    at = [0] * len(tokens)
    found: dict[tuple[Variant, float, int], Level] = {}
    after: dict[Variant, Level] = {}
    try:
        # Think times, levels and servers all take turns within each round: the machine's
        # speed drifts over minutes (other tenants), and a ratio is only fair between
        # measurements taken in the same minutes.
        for round_ in range(args.rounds):
            for think in thinks if round_ % 2 == 0 else thinks[::-1]:
                for n in levels if round_ % 2 == 0 else levels[::-1]:
                    for v in variants if (round_ + n) % 2 == 0 else variants[::-1]:
                        process, port = servers[v]
                        level = found.setdefault((v, think, n), Level())
                        span = args.think_seconds if think else args.seconds
                        cpu, client = cpu_seconds(process.pid), time.process_time()
                        busy, ticks = machine_ticks()
                        asyncio.run(read(f"http://127.0.0.1:{port}", study_id, tokens[:n], at,
                                         span, think, level))
                        level.cpu += cpu_seconds(process.pid) - cpu
                        level.client_cpu += time.process_time() - client
                        level.busy += machine_ticks()[0] - busy
                        level.ticks += machine_ticks()[1] - ticks
                        print(f"{v.label}, think {think:g} s, {n} readers, round {round_ + 1}: "
                              f"{dict(level.outcomes)}", flush=True)
        for v, (_, port) in servers.items():
            time.sleep(5)
            after[v] = Level()
            asyncio.run(read(f"http://127.0.0.1:{port}", study_id, tokens[:1], at, 3, 0, after[v]))
    finally:
        for burner in burners:
            burner.kill()
        for process, _ in servers.values():
            process.terminate()
            process.wait(timeout=30)
    _report(args, variants, thinks, levels, found, after)


def _report(args: argparse.Namespace, variants: list[Variant], thinks: list[float],
            levels: list[int], found: dict[tuple[Variant, float, int], Level],
            after: dict[Variant, Level]) -> None:
    lone = found[(variants[0], thinks[0], levels[0])]
    lone_p95, lone_rate = pct(lone.times, 95), len(lone.times) / lone.seconds
    print(f"\n{args.url}, {args.busy} busy process(es) beside; ratios to the lone reader of "
          f"{variants[0].label} with think {thinks[0]:g} s "
          f"(p95 {lone_p95:.1f} ms, {lone_rate:.1f} next cases/s)")
    print("| server | think (mean s) | readers | p50 ms | p95 ms | p99 ms | p95 ratio | "
          "next cases/s | throughput ratio | CPU ms per next case: server | readers | "
          "machine busy | 503s | errors |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (v, think, n), level in sorted(found.items(), key=lambda kv: (
            thinks.index(kv[0][1]), variants.index(kv[0][0]), levels.index(kv[0][2]))):
        rate = len(level.times) / level.seconds if level.seconds else 0.0
        errors = sum(c for k, c in level.outcomes.items() if k.startswith("error"))
        cpu = 1000 * level.cpu / max(1, len(level.times))
        client = 1000 * level.client_cpu / max(1, len(level.times))
        print(f"| {v.label} | {think:g} | {n} | {pct(level.times, 50):.1f} | "
              f"{pct(level.times, 95):.1f} | {pct(level.times, 99):.1f} | "
              f"{pct(level.times, 95) / lone_p95:.2f} | {rate:.1f} | {rate / lone_rate:.2f} | "
              f"{cpu:.1f} | {client:.1f} | {100 * level.busy / max(1, level.ticks):.0f} % | "
              f"{level.outcomes['503']} | {errors} |")
    for v, level in after.items():
        print(f"{v.label}: 5 s after the last level, a lone reader's next case: p95 "
              f"{pct(level.times, 95):.1f} ms, errors "
              f"{sum(c for k, c in level.outcomes.items() if k.startswith('error'))}")


if __name__ == "__main__":
    main()
