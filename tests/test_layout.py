"""The README's map is the house as it is: one line per package, and no line for a folder
that is gone. And the README is a front door: every page it links to in docs/ exists, and
every docs/ page is linked from it."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tree() -> set[str]:
    text = (ROOT / "README.md").read_text()
    block = text.split("## Map\n\n```\n", 1)[1].split("```", 1)[0]
    return {m.group(1) for m in re.finditer(r"^(\S+/)", block, re.M)}


def test_the_readme_tree_names_every_package_and_nothing_else() -> None:
    named = _tree()
    packages = {f"{p.parent.relative_to(ROOT).as_posix()}/" for p in (ROOT / "app").glob("*/__init__.py")}
    packages -= {"app/web/routes/"}  # drawn inside app/web/'s line
    assert packages <= named, f"not in the README tree: {sorted(packages - named)}"
    assert all((ROOT / name).is_dir() for name in named), sorted(n for n in named if not (ROOT / n).is_dir())


def test_the_readme_links_every_docs_page_and_each_link_leads_somewhere() -> None:
    text = (ROOT / "README.md").read_text()
    linked = set(re.findall(r"\]\((docs/[^)#]+)", text))
    pages = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")}
    assert linked == pages, (sorted(linked - pages), sorted(pages - linked))
    assert len(text.splitlines()) < 250  # a front door: the reference lives in docs/
    for page in (ROOT / "docs").glob("*.md"):  # relative links from a page lead to files
        for target in re.findall(r"\]\((?!https?://|#)([^)#]+)", page.read_text()):
            assert (page.parent / target).exists(), (page.name, target)


def test_every_shared_module_is_kept_from_importing_a_design() -> None:
    # A new package or module of app/ is shared unless it is a door (web, CLI) or a design:
    # the import contract must list it, or it could name a design unseen.
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    [contract] = [c for c in config["contracts"] if c["name"] == "Shared code never imports a design"]
    shared = {f"app.{p.stem}" for p in (ROOT / "app").glob("*.py") if p.stem != "__init__"}
    shared |= {f"app.{p.parent.name}" for p in (ROOT / "app").glob("*/__init__.py")}
    shared -= {"app.web", "app.cli", "app.designs"}
    assert shared <= set(contract["source_modules"]), sorted(shared - set(contract["source_modules"]))
    assert contract["forbidden_modules"] == ["app.designs"]
