"""The Dockerfile and compose.yaml, checked without a container runtime (none runs here):
they parse, every command they start exists in the CLI with those options, every file the
image copies exists, and the health check asks a route the app has."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import click
import pytest
import typer
import yaml

from app.cli import cli

ROOT = Path(__file__).resolve().parent.parent


def check_command(argv: list[str]) -> None:
    """Resolve argv through the CLI as click would, options included, without running it."""
    assert argv[0] == "medbanana", argv
    command: click.Command = typer.main.get_command(cli)
    args = argv[1:]
    context = None
    while isinstance(command, click.Group):
        name, args = args[0], args[1:]
        found = command.get_command(click.Context(command), name)
        assert found is not None, f"no command {name!r} in {argv}"
        command = found
    context = command.make_context(argv[-1], list(args))  # raises on an unknown option
    assert context is not None


def dockerfile() -> list[tuple[str, str]]:
    lines = (ROOT / "Dockerfile").read_text().replace("\\\n", " ").splitlines()
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines
            if line.strip() and not line.lstrip().startswith("#")]


def test_the_dockerfile_copies_what_exists_and_starts_the_server() -> None:
    instructions = dockerfile()
    for kind, rest in instructions:
        if kind == "COPY":
            *sources, _target = rest.split()
            for source in sources:
                assert (ROOT / source).exists(), source
    [cmd] = [json.loads(rest) for kind, rest in instructions if kind == "CMD"]
    check_command(cmd)
    assert cmd[cmd.index("--host") + 1] == "0.0.0.0"
    [health] = [rest for kind, rest in instructions if kind == "HEALTHCHECK"]
    assert "/healthz" in health
    assert any(kind == "USER" and rest.strip() != "root" for kind, rest in instructions)


def test_compose_runs_postgres_migrations_app_and_worker() -> None:
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"db", "migrate", "app", "worker"}
    for name in ("migrate", "app", "worker"):
        service = services[name]
        check_command(service["command"])
        environment = service["environment"]
        assert environment["MEDBANANA_DATABASE_URL"].startswith("postgresql+psycopg://")
        assert "@db:5432/" in environment["MEDBANANA_DATABASE_URL"]
        assert "MEDBANANA_SECRET_KEY" in environment
        assert any(str(v).endswith(":/data:ro") for v in service["volumes"])
    assert services["app"]["command"][1:3] == ["serve", "--host"]
    assert services["worker"]["command"] == ["medbanana", "pipeline", "worker"]
    assert services["app"]["environment"]["MEDBANANA_WORKER"] == "false"
    for name in ("app", "worker"):
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert "pg_isready" in " ".join(services["db"]["healthcheck"]["test"])
    # No secret is written in the file: each comes from the environment or .env.
    text = (ROOT / "compose.yaml").read_text()
    assert not re.search(r"^\s*[A-Z_]*(PASSWORD|SECRET_KEY|API_KEY):\s*[^$\s]", text, re.MULTILINE)


def has_compose() -> bool:
    docker = shutil.which("docker")
    return docker is not None and subprocess.run(
        [docker, "compose", "version"], capture_output=True).returncode == 0


@pytest.mark.skipif(not has_compose(), reason="no docker compose here")
def test_compose_config_is_valid_for_docker(tmp_path: Path) -> None:
    import os

    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "POSTGRES_PASSWORD": "x" * 20,
           "MEDBANANA_SECRET_KEY": "y" * 40, "MEDBANANA_DATA": str(tmp_path)}
    done = subprocess.run([str(shutil.which("docker")), "compose", "-f", str(ROOT / "compose.yaml"),
                           "config"], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
