"""The benchmarks' PostgreSQL server: one durable server kept under var/bench/pg.

    .venv/bin/python benchmarks/postgres.py start   # prints the server's URL
    .venv/bin/python benchmarks/postgres.py stop

Every benchmark takes ``--url``; ``--url postgres`` means this server's ``bench`` database
(started if it is not running), made by ``benchmarks/import_scale.py --url postgres``.
"""

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.pg_server import PostgresServer

BASE = Path("var/bench/pg")
DATABASE = "bench"


def _server() -> PostgresServer:
    server = PostgresServer(BASE.resolve(), durable=True)
    port_file = BASE / "port"
    if port_file.exists():
        server.port = int(port_file.read_text())
    return server


def _running(server: PostgresServer) -> bool:
    try:
        psycopg.connect(f"host=127.0.0.1 port={server.port} user=postgres dbname=postgres",
                        connect_timeout=2).close()
    except psycopg.OperationalError:
        return False
    return True


def start() -> PostgresServer:
    """The server, started (and made, the first time) if it is not running."""
    server = _server()
    if _running(server):
        return server
    if (server.data / "PG_VERSION").exists():
        server.resume()
    else:
        server.start()
    (BASE / "port").write_text(str(server.port))
    return server


@contextmanager
def _admin() -> Iterator[tuple[psycopg.Connection, int]]:
    """An autocommit connection to the server's maintenance database, and the server's port."""
    server = start()
    with psycopg.connect(f"host=127.0.0.1 port={server.port} user=postgres dbname=postgres",
                         autocommit=True) as conn:
        yield conn, server.port


def _url(port: int, name: str) -> str:
    return f"postgresql+psycopg://postgres@127.0.0.1:{port}/{name}"


def database_url(fresh: bool = False) -> str:
    """The bench database's URL; with ``fresh``, dropped and made anew first."""
    with _admin() as (conn, port):
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)).fetchone()
        if fresh and exists:
            conn.execute(f'DROP DATABASE "{DATABASE}" WITH (FORCE)')
        if fresh or not exists:
            conn.execute(f'CREATE DATABASE "{DATABASE}"')
    return _url(port, DATABASE)


def copy_of_bench(name: str) -> str:
    """A fresh copy of the bench database (PostgreSQL copies its files: seconds, not minutes)."""
    with _admin() as (conn, port):
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{DATABASE}"')
    return _url(port, name)


def drop(name: str) -> None:
    with _admin() as (conn, _):
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def resolve(url: str | None, db: Path) -> str:
    """A benchmark's database: ``--url`` as given, ``postgres`` for this server, else ``--db``."""
    if url == "postgres":
        return database_url()
    return url or f"sqlite:///{db.resolve()}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("action", choices=["start", "stop"])
    args = parser.parse_args()
    if args.action == "start":
        print(database_url())
    else:
        server = _server()
        if _running(server):
            server.halt()
        print("stopped")


if __name__ == "__main__":
    main()
