"""The app as a running server serves it: one event loop for every request, and the work its
start sets going finished before anything is timed.

A TestClient used outside a ``with`` block starts a new event loop in a new thread for each
request (starlette's blocking portal); that cost 2-3 ms a request on this 2-core machine, which
no real server pays. Inside ``with``, the lifespan runs, as uvicorn runs it, and one loop serves.
"""

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from fastapi import FastAPI
from fastapi.testclient import TestClient

# The start-up threads of app/web/main.py's lifespan that end ("prepare-studies" looks for
# unprepared studies every few seconds for as long as the app serves).
START_THREADS = ("judged-pool", "warm-figures", "compile-templates", "settle-heap")


@contextmanager
def running(app: FastAPI, headers: dict[str, str]) -> Iterator[TestClient]:
    before = set(threading.enumerate())  # another app's start threads are not this one's
    with TestClient(app, headers=headers) as client:
        for thread in threading.enumerate():
            if thread.name in START_THREADS and thread not in before:
                thread.join(timeout=600)
        yield client
