"""The wheel is the product a hospital installs: built, installed into a fresh venv outside the
checkout, and run from another directory, as an IT team would."""

import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest
from setuptools import find_packages

ROOT = Path(__file__).resolve().parents[1]
# What a source distribution holds: the build must not depend on anything else in the checkout.
SOURCES = ("app", "pipeline", "templates", "static", "migrations", "prompts",
           "pyproject.toml", "README.md")
RESOURCE_PACKAGES = {"app.templates", "app.static", "app.migrations", "pipeline.prompt_templates"}


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def resource_subfolders(tool: dict) -> set[str]:
    """Every folder below a resource package, as a package name: listed, or the build warns
    once for each (17 warnings in every install)."""
    found = set()
    for package, folder in tool["package-dir"].items():
        for path in (ROOT / folder).rglob("*"):
            # A folder whose name is no identifier (swagger-ui) is data to setuptools anyway.
            if path.is_dir() and "__pycache__" not in path.parts and all(
                    part.isidentifier() for part in path.relative_to(ROOT / folder).parts):
                found.add(".".join([package, *path.relative_to(ROOT / folder).parts]))
    return found


def test_every_package_is_listed_and_every_resource_mapped() -> None:
    tool = _pyproject()["tool"]["setuptools"]
    code = set(find_packages(where=str(ROOT), include=["app*", "pipeline*"]))
    assert set(tool["packages"]) == code | RESOURCE_PACKAGES | resource_subfolders(tool)
    assert set(tool["package-dir"]) == RESOURCE_PACKAGES
    for folder in tool["package-dir"].values():
        assert (ROOT / folder / "__init__.py").is_file(), folder


def test_resources_are_found_through_the_package() -> None:
    from app.resources import MIGRATIONS_DIR, STATIC_DIR, TEMPLATES_DIR
    from pipeline.prompts import PROMPTS_DIR

    assert (TEMPLATES_DIR / "base.html").is_file()
    assert (STATIC_DIR / "vendor" / "htmx").is_dir()
    assert (MIGRATIONS_DIR / "env.py").is_file()
    assert (PROMPTS_DIR / "judge.j2").is_file()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _wait_for(url: str, server: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"the server exited with {server.returncode}:\n{log.read_text()}")
        try:
            _get(url)
            return
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"the server never answered:\n{log.read_text()}")


@pytest.mark.slow
def test_the_wheel_installs_into_a_fresh_venv_and_serves_from_any_directory(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for name in SOURCES:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy
        copy(ROOT / name, source / name)
    dist = tmp_path / "dist"
    # Without isolation: the test venv's setuptools builds it, so no download is needed here.
    built = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir",
                            str(dist), str(source)], check=True, capture_output=True, text=True)
    assert "absent from the `packages` configuration" not in built.stdout + built.stderr
    wheel = next(dist.glob("medbanana_review-*.whl"))

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # The wheel alone, its dependencies taken from this environment (installing them again
    # took a minute of the suite): a path file puts this environment's packages after the
    # venv's own, so the wheel's app, not the checkout's, is the one imported. That every
    # import is declared is test_every_third_party_import_is_declared's business.
    subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--no-deps", str(wheel)],
                   check=True, capture_output=True)
    site = next((venv / "lib").glob("python3.*/site-packages"))
    outer = [p for p in sys.path if p.endswith("site-packages")]
    (site / "test-environment.pth").write_text("\n".join(outer) + "\n")
    medbanana = str(venv / "bin" / "medbanana")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path),
           "MEDBANANA_VAR_DIR": str(elsewhere / "var"),
           "MEDBANANA_SECRET_KEY": secrets.token_urlsafe(48),
           "MEDBANANA_SECURE_COOKIES": "false"}

    done = subprocess.run([medbanana, "--help"], cwd=elsewhere, env=env, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    assert "serve" in done.stdout
    done = subprocess.run([medbanana, "migrate"], cwd=elsewhere, env=env, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr

    port = _free_port()
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        server = subprocess.Popen([medbanana, "serve", "--port", str(port)], cwd=elsewhere,
                                  env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        _wait_for(f"{base}/healthz", server, log)
        status, body = _get(f"{base}/login")
        assert status == 200 and b"<form" in body
        assert _get(f"{base}/static/app.css")[0] == 200
        assert _get(f"{base}/healthz")[0] == 200
    finally:
        server.terminate()
        server.wait(timeout=30)


def _third_party_imports() -> set[str]:
    """The top-level modules app/ and pipeline/ import that are neither theirs nor Python's."""
    import ast

    found: set[str] = set()
    for folder in ("app", "pipeline"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    found.update(a.name.split(".")[0] for a in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    found.add(node.module.split(".")[0])
    return {m for m in found if m not in sys.stdlib_module_names and m not in ("app", "pipeline")}


def test_every_third_party_import_is_declared() -> None:
    """An import whose distribution the project does not declare works here (the dev extras
    bring it) and fails at a site that installed the wheel alone."""
    import re
    from importlib.metadata import packages_distributions

    project = _pyproject()["project"]
    declared = {re.split(r"[\[<>=!~; ]", d, maxsplit=1)[0].lower().replace("_", "-")
                for d in [*project["dependencies"], *project["optional-dependencies"]["s3"]]}
    owners = packages_distributions()
    missing = {}
    for module in sorted(_third_party_imports()):
        dists = {d.lower().replace("_", "-") for d in owners.get(module, [])}
        if not dists & declared:
            missing[module] = sorted(dists) or "not installed"
    assert not missing, f"imported but not declared in [project] dependencies: {missing}"
