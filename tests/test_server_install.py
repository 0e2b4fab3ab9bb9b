"""The server's install stays light: nothing in [project.dependencies] pulls in what only the
tests use (crowd-kit brought nltk and transformers, 15 packages and 185 MB, for one EM)."""

from importlib.metadata import PackageNotFoundError, requires

from packaging.requirements import Requirement

TEST_ONLY = {"crowd-kit", "nltk", "transformers", "tokenizers", "torch", "hf-xet"}


def _name(text: str) -> str:
    return text.lower().replace("_", "-")


def test_no_runtime_dependency_pulls_in_a_test_only_package() -> None:
    todo = [Requirement(r).name for r in requires("medbanana-review") or []
            if "extra" not in str(Requirement(r).marker or "")]
    seen: set[str] = set()
    while todo:
        name = _name(todo.pop())
        if name in seen:
            continue
        seen.add(name)
        try:
            found = requires(name) or []
        except PackageNotFoundError:
            continue
        todo += [Requirement(r).name for r in found
                 if Requirement(r).marker is None or Requirement(r).marker.evaluate({"extra": ""})]
    assert len(seen) > 20 and "numpy" in seen  # the walk found the install
    assert not seen & TEST_ONLY, sorted(seen & TEST_ONLY)
