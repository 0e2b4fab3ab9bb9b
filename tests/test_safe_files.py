"""Opening under a data root: links inside work, links out are refused, and a link swapped
in while files are being opened never lets an outside file through."""

import os
import threading
from pathlib import Path

import pytest

from app.safe_files import NotInside, open_inside, read_inside


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "a" / "b").mkdir(parents=True)
    outside.mkdir()
    (root / "a" / "b" / "image.jpeg").write_bytes(b"INSIDE")
    (outside / "image.jpeg").write_bytes(b"OUTSIDE")
    (outside / "b").mkdir()
    (outside / "b" / "image.jpeg").write_bytes(b"OUTSIDE")
    return root, outside


def test_a_file_inside_and_links_that_stay_inside(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    assert read_inside(root, root / "a" / "b" / "image.jpeg") == b"INSIDE"
    (root / "rel.jpeg").symlink_to("a/b/image.jpeg")
    (root / "abs.jpeg").symlink_to(root / "a" / "b" / "image.jpeg")
    (root / "dirlink").symlink_to("a")
    (root / "a" / "up.jpeg").symlink_to("../rel.jpeg")
    for name in ("rel.jpeg", "abs.jpeg", "dirlink/b/image.jpeg", "a/up.jpeg"):
        assert read_inside(root, root / name) == b"INSIDE", name


@pytest.mark.parametrize("make", [
    lambda root, out: (root / "x.jpeg").symlink_to(out / "image.jpeg"),
    lambda root, out: (root / "x.jpeg").symlink_to("../outside/image.jpeg"),
    lambda root, out: (root / "a" / "x.jpeg").symlink_to("../../outside/image.jpeg"),
    lambda root, out: (root / "x").symlink_to(out),
    lambda root, out: (root / "a" / "x").symlink_to("../.."),
])
def test_links_leading_out_are_refused(tree: tuple[Path, Path], make) -> None:  # type: ignore[no-untyped-def]
    root, outside = tree
    make(root, outside)
    for candidate in (root / "x.jpeg", root / "a" / "x.jpeg", root / "x" / "image.jpeg",
                      root / "a" / "x" / "outside" / "image.jpeg"):
        if os.path.lexists(candidate) or os.path.lexists(candidate.parent):
            with pytest.raises(NotInside):
                read_inside(root, candidate)


def test_dot_dot_missing_folders_fifos_and_loops(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    with pytest.raises(NotInside):
        read_inside(root, root / ".." / "outside" / "image.jpeg")
    with pytest.raises(NotInside):
        read_inside(root, root / "nope" / "image.jpeg")
    with pytest.raises(NotInside):
        read_inside(root, root / "a")
    os.mkfifo(root / "pipe.jpeg")
    with pytest.raises(NotInside):  # refused at once, never left waiting for a writer
        read_inside(root, root / "pipe.jpeg")
    (root / "loop1").symlink_to("loop2")
    (root / "loop2").symlink_to("loop1")
    with pytest.raises(NotInside):
        read_inside(root, root / "loop1")


def test_a_link_swapped_in_while_opening_never_escapes(tree: tuple[Path, Path]) -> None:
    """The folder ``a/b`` flips between the real folder and a link to an outside folder
    holding a file of the same name, as fast as it can, while the file is opened."""
    root, outside = tree
    real, link = root / "a" / "b.real", root / "a" / "b.link"
    link.symlink_to(outside / "b")
    stop = threading.Event()

    def flip() -> None:
        while not stop.is_set():
            os.rename(root / "a" / "b", real)
            os.rename(link, root / "a" / "b")
            os.rename(root / "a" / "b", link)
            os.rename(real, root / "a" / "b")

    flipper = threading.Thread(target=flip)
    flipper.start()
    seen: dict[bytes, int] = {}
    try:
        for _ in range(4000):
            try:
                data = read_inside(root, root / "a" / "b" / "image.jpeg")
            except NotInside:
                data = b"refused"
            seen[data] = seen.get(data, 0) + 1
    finally:
        stop.set()
        flipper.join()
    assert b"OUTSIDE" not in seen
    assert seen.get(b"INSIDE", 0) > 0


def test_the_handle_is_a_blocking_binary_file(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    with open_inside(root, root / "a" / "b" / "image.jpeg") as handle:
        assert os.get_blocking(handle.fileno()) and handle.read(2) == b"IN"
