"""Background work done once, however many server processes share the database.

Each `medbanana serve` process has its own background threads, and a reader's answers reach
whichever process their connection lands on. A study's images drawn, an adaptive study's next
batch and a reader's check are each claimed under a key first: on PostgreSQL with a
session-level advisory lock (held on a connection of its own, and freed by the server if the
process dies), on SQLite, whose processes share one machine, with an exclusive lock on a file
beside the database (freed by the kernel likewise). A claim is held by one holder at a time,
in one process or across several.
"""

import fcntl
import hashlib
import logging
import os
import time
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import Engine

logger = logging.getLogger(__name__)
POLL = 0.05  # seconds between tries while waiting for a claim


def _digest(key: Hashable) -> bytes:
    return hashlib.blake2b(repr(key).encode(), digest_size=8).digest()


@contextmanager
def claimed(engine: Engine, key: Hashable, wait: float = 0.0) -> Iterator[bool]:
    """Hold the claim on ``key`` for the block, and yield True; yield False when another
    holder kept it for ``wait`` seconds (0: one try), and the block must skip its work."""
    if engine.dialect.name == "postgresql":
        with _advisory(engine, key, wait) as held:
            yield held
        return
    database = engine.url.database
    if not database or database == ":memory:":
        yield True  # a private database: one process, and nothing to share
        return
    with _file_lock(Path(database), key, wait) as held:
        yield held


@contextmanager
def _advisory(engine: Engine, key: Hashable, wait: float) -> Iterator[bool]:
    number = int.from_bytes(_digest(key), "big", signed=True)
    deadline = time.monotonic() + wait
    with engine.connect() as connection:
        # Each try is its own transaction: none stays open while waiting or working.
        while not connection.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": number}).scalar():
            connection.commit()
            if time.monotonic() >= deadline:
                yield False
                return
            time.sleep(POLL)
        connection.commit()
        try:
            yield True
        finally:
            connection.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": number})
            connection.commit()


@contextmanager
def _file_lock(database: Path, key: Hashable, wait: float) -> Iterator[bool]:
    folder = database.with_name(database.name + ".claims")
    folder.mkdir(exist_ok=True)
    descriptor = os.open(folder / _digest(key).hex(), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    yield False
                    return
                time.sleep(POLL)
        try:
            yield True
        finally:
            fcntl.flock(descriptor, fcntl.LOCK_UN)
    finally:
        os.close(descriptor)
