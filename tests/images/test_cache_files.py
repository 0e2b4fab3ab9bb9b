"""The image cache's writer: a file appears whole or not at all."""

from pathlib import Path
from typing import BinaryIO

import pytest

from app.images.files import write_cached


def test_a_cache_file_is_written_whole_and_a_failed_write_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "cache" / "ab" / "x.jpeg"
    assert write_cached(target, lambda out: out.write(b"whole")) == target
    assert target.read_bytes() == b"whole"

    def half(out: BinaryIO) -> None:
        out.write(b"half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_cached(target, half)
    assert target.read_bytes() == b"whole"  # the earlier file stands
    assert sorted(p.name for p in target.parent.iterdir()) == ["x.jpeg"]  # no temporary left
