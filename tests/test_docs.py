"""The documentation says what the app is: every link and anchor leads somewhere, every
command is documented, and every address it names is one the app serves."""

import re
from pathlib import Path

import pytest
import typer
from fastapi import FastAPI
from sqlalchemy.engine import Engine
from starlette.routing import Match

from app.cli.root import cli
from app.web.main import create_app
from tests.config import server_settings

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")  # images too
# Backticked paths that are not the app's addresses: files on a server, and the proxy
# prefix and short forms the operator's page gives as examples.
NOT_ROUTES = re.compile(r"^/(etc|var|usr|tmp|opt|srv|home|run)/|^/medbanana$|^/edit$")


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text, lower case, without punctuation, with
    hyphens for spaces."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link reads as its text
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    in_code = False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and (match := re.match(r"#{1,6} (.+)", line)):
            base = slug(match.group(1))
            name, n = base, 0
            while name in found:  # GitHub numbers a repeated heading
                n += 1
                name = f"{base}-{n}"
            found.add(name)
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    broken = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"https?://|mailto:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading with this anchor")
    assert not broken, broken


def test_slugs_follow_github() -> None:
    assert slug("Real-or-edited studies (a visual Turing test)") == \
        "real-or-edited-studies-a-visual-turing-test"
    assert slug("Speed at 88K, as ratios") == "speed-at-88k-as-ratios"
    assert slug("`/quality`: the data set's quality") == "quality-the-data-sets-quality"


def commands() -> list[str]:
    root = typer.main.get_command(cli)
    context = typer.Context(root)
    found = []
    for name in root.list_commands(context):  # type: ignore[attr-defined]
        found.append(name)
        sub = root.get_command(context, name)  # type: ignore[attr-defined]
        if hasattr(sub, "list_commands"):
            found += [f"{name} {s}" for s in sub.list_commands(typer.Context(sub))]
    return found


def test_every_command_and_subcommand_is_documented() -> None:
    text = "\n".join(p.read_text() for p in PAGES)
    names = commands()
    assert "users add" in names or any(n.startswith("users ") for n in names)
    # A line may break inside a command.
    missing = [n for n in names
               if not re.search(r"medbanana\s+" + r"\s+".join(map(re.escape, n.split())) + r"\b", text)]
    assert not missing, f"not in README.md or docs/: {missing}"


def named_routes() -> set[str]:
    """Every backticked address in the docs, without its query, parameters as {}."""
    found = set()
    for page in PAGES:
        for path in re.findall(r"`(?:(?:GET|POST|PUT|DELETE) )?(/[^`\s]*)`", page.read_text()):
            path = path.split("?", 1)[0]
            if not NOT_ROUTES.search(path):
                found.add(re.sub(r"\{[^}]*\}", "{}", path))
    return found


def served(app: FastAPI, path: str) -> bool:
    """Some route of the app takes ``path`` (by any method), a parameter given as 1."""
    for form in (path, f"{path}/"):  # a mount (/static) takes what lies below it
        scope = {"type": "http", "method": "GET", "path": form.replace("{}", "1"), "root_path": ""}
        if any(route.matches(scope)[0] is not Match.NONE for route in app.router.routes):
            return True
    return False


def test_every_address_the_docs_name_is_served(engine: Engine, tmp_path: Path) -> None:
    app = create_app(server_settings(tmp_path / "var", worker=False), engine)
    named = named_routes()
    assert "/quality" in named and "/cases/{}" in named
    assert not served(app, "/no-such-page")
    missing = sorted(path for path in named if not served(app, path))
    assert not missing, f"named in the docs, not served: {missing}"


SCREENS = {"Rubric studies": "studies/reading/read.html",
           "Real or edited": "studies/reading/real_or_edited.html",
           "Pairwise": "studies/reading/pairwise.html",
           "Adjudication": "studies/adjudication/screen.html"}


@pytest.mark.parametrize(("screen", "template"), SCREENS.items())
def test_the_readers_page_lists_every_key_of_every_screen(screen: str, template: str) -> None:
    """docs/reader.md promised every key of every design, and listed the image tools' only."""
    page = (ROOT / "docs" / "reader.md").read_text()
    section = page.split(f"**{screen}**", 1)[1].split("\n**", 1)[0]
    keys_block = (ROOT / "templates" / template).read_text().split("{% block keys %}", 1)[-1]
    for term in re.findall(r"<dt>(.*?)</dt>", keys_block):
        for key in re.findall(r"<kbd>(.*?)</kbd>", term):
            assert f"`{key}`" in section or f"`{key}`" in page.split("## Every key", 1)[1][:900], (
                screen, key)


def test_the_coordinators_page_starts_with_the_steps_and_leaves_simulations_to_the_statistician() -> None:
    coordinator = (ROOT / "docs" / "coordinator.md").read_text()
    statistician = (ROOT / "docs" / "statistician.md").read_text()
    assert re.findall(r"^## (.+)$", coordinator, re.M)[0] == "Running a study, step by step"
    for table in ("Coverage under peeking", "Reads to ± 0.05 on agreement",
                  "Coverage of the area's interval"):
        assert table not in coordinator and table in statistician
