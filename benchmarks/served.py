"""A real `medbanana serve` for a benchmark: started on a port with settings of its own, and
returned once it answers /healthz."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

MEDBANANA = str(Path(sys.executable).parent / "medbanana")


def serve(url: str, port: int, env: dict[str, str], *args: str,
          wait: float = 120) -> subprocess.Popen[bytes]:
    """The server process on ``url``'s database, with ``env`` over this process's environment
    and ``args`` after `serve --port N`; SystemExit when it does not answer within ``wait``."""
    settings = dict(os.environ, MEDBANANA_DATABASE_URL=url,
                    MEDBANANA_LOG_LEVEL=os.environ.get("MEDBANANA_LOG_LEVEL", "WARNING"), **env)
    process = subprocess.Popen([MEDBANANA, "serve", "--port", str(port), *args], env=settings)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("the server did not start")
