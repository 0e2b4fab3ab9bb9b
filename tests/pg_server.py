"""A throwaway PostgreSQL server for the tests, started from Debian's binaries.

initdb refuses to run as root, so as root the server runs as the `postgres` user.
"""

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def find_bin(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


class PostgresServer:
    """A server in a fresh temporary folder on a free port; the benchmarks pass their own
    folder and ``durable=True``, so their figures are those of a server that syncs."""

    def __init__(self, base: Path | None = None, *, durable: bool = False) -> None:
        initdb, pg_ctl = find_bin("initdb"), find_bin("pg_ctl")
        if not initdb or not pg_ctl:
            raise FileNotFoundError("PostgreSQL server binaries (apt-get install postgresql)")
        self.initdb, self.pg_ctl = initdb, pg_ctl
        if base is None:
            base = Path(tempfile.mkdtemp(prefix="medbanana-pg-"))
        else:
            base.mkdir(parents=True, exist_ok=True)
        self.base, self.durable = base, durable
        self.data = self.base / "data"
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = int(sock.getsockname()[1])
        self.as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []

    def _run(self, *args: str) -> None:
        subprocess.run([*self.as_user, *args], check=True, capture_output=True, text=True)

    def start(self) -> str:
        if self.as_user:
            shutil.chown(self.base, "postgres", "postgres")
        self._run(self.initdb, "-D", str(self.data), "-U", "postgres", "--auth=trust",
                  "--encoding=UTF8", "--locale=C")
        return self.resume()

    def resume(self) -> str:
        """Start the server on a data folder made before."""
        # The tests' servers need no durability, and syncing slows a 2-core machine down.
        sync = "" if self.durable else " -c fsync=off"
        self._run(self.pg_ctl, "-D", str(self.data), "-l", str(self.base / "log"), "-w", "-o",
                  f"-p {self.port} -k {self.base} -c listen_addresses=127.0.0.1{sync}", "start")
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres",
                             autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{name}"

    def halt(self) -> None:
        """Stop the server and keep its data."""
        self._run(self.pg_ctl, "-D", str(self.data), "-m", "fast", "stop")

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self._run(self.pg_ctl, "-D", str(self.data), "-m", "immediate", "stop")
        deadline = time.monotonic() + 5
        while (self.data / "postmaster.pid").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        shutil.rmtree(self.base, ignore_errors=True)
