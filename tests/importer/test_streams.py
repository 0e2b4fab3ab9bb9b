"""The streaming readers."""

from pathlib import Path

import pytest

from app.importer import streams
from app.importer.streams import Progress


def test_small_object_reads_whole(tmp_path: Path) -> None:
    # Regression: ijson probes with read(0); answering with a whole chunk lost the data.
    path = tmp_path / "progress.json"
    path.write_text('{"a-1-X": "success", "b-2-Y": "api_failed"}')
    assert list(streams.iter_object(tmp_path, path, streams.Progress(0, None))) == [
        ("a-1-X", "success"), ("b-2-Y", "api_failed")]


def test_progress_reaches_the_file_size(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text("[" + ",".join(['{"k": "' + "x" * 100 + '"}'] * 2000) + "]")
    seen: list[tuple[int, int]] = []
    progress = streams.Progress(path.stat().st_size, lambda d, t: seen.append((d, t)))
    assert len(list(streams.iter_array(tmp_path, path, progress))) == 2000
    assert seen[-1][0] == path.stat().st_size


def test_sniff_tells_shapes_apart(tmp_path: Path) -> None:
    cases = {"a.json": "[1]", "b.json": '{\n "a": 1\n}', "c.jsonl": '{"a": 1}\n{"a": 2}\n',
             "d.json": "hello"}
    for name, body in cases.items():
        (tmp_path / name).write_text(body)
    assert [streams.sniff(tmp_path, tmp_path / n) for n in cases] == ["array", "object", "lines", ""]


def test_lines_are_bounded_like_records(tmp_path: Path) -> None:
    from app.importer import ImportFileError
    from app.importer.streams import MAX_RECORD_BYTES, iter_lines

    path = tmp_path / "entries.jsonl"
    path.write_text('{"a": 1}\n{"big": 100000000000000000000000000000, "x": 0.5}\n'
                    + "[" * 70 + "]" * 70 + "\n")
    values = iter_lines(tmp_path, path, Progress(0, None))
    assert next(values) == {"a": 1}
    assert next(values) == {"big": 10**29, "x": 0.5}
    with pytest.raises(ImportFileError, match="line 3: nested more than 64 levels"):
        next(values)
    assert MAX_RECORD_BYTES >= 16 * 1024 * 1024


def test_a_record_larger_than_the_bound_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from app.importer import ImportFileError, streams

    monkeypatch.setattr(streams, "MAX_RECORD_BYTES", 100_000)
    path = tmp_path / "big.json"
    path.write_text('{"a": {"t": [' + ", ".join(['"' + "x" * 100 + '"'] * 5000) + "]}}")
    with pytest.raises(ImportFileError, match="larger than"):
        list(streams.iter_object(tmp_path, path, Progress(0, None)))
