"""The streaming readers."""

from pathlib import Path

from app.importer import streams


def test_small_object_reads_whole(tmp_path: Path) -> None:
    # Regression: ijson probes with read(0); answering with a whole chunk lost the data.
    path = tmp_path / "progress.json"
    path.write_text('{"a-1-X": "success", "b-2-Y": "api_failed"}')
    assert list(streams.iter_object(path, streams.Progress(0, None))) == [
        ("a-1-X", "success"), ("b-2-Y", "api_failed")]


def test_progress_reaches_the_file_size(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text("[" + ",".join(['{"k": "' + "x" * 100 + '"}'] * 2000) + "]")
    seen: list[tuple[int, int]] = []
    progress = streams.Progress(path.stat().st_size, lambda d, t: seen.append((d, t)))
    assert len(list(streams.iter_array(path, progress))) == 2000
    assert seen[-1][0] == path.stat().st_size


def test_sniff_tells_shapes_apart(tmp_path: Path) -> None:
    cases = {"a.json": "[1]", "b.json": '{\n "a": 1\n}', "c.jsonl": '{"a": 1}\n{"a": 2}\n',
             "d.json": "hello"}
    for name, body in cases.items():
        (tmp_path / name).write_text(body)
    assert [streams.sniff(tmp_path / n) for n in cases] == ["array", "object", "lines", ""]
