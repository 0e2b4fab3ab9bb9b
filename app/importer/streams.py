"""Reading JSON files in bounded memory, with progress and exact-enough error positions."""

import hashlib
import io
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import IO, Any, BinaryIO

import ijson
import orjson

from app.importer.errors import ImportFileError
from app.safe_files import open_inside

READ_CHUNK = 64 * 1024
HASH_CHUNK = 1024 * 1024


class Progress:
    """Bytes done out of bytes planned, reported to an optional callback."""

    def __init__(self, total: int, callback: Callable[[int, int], None] | None) -> None:
        self.total, self.done, self.callback = total, 0, callback

    def advance(self, n: int) -> None:
        self.done += n
        if self.callback:
            self.callback(self.done, self.total)


class CountingReader:
    """Wraps a binary file for ijson, counting bytes and lines to place parse errors."""

    def __init__(self, stream: IO[bytes], progress: Progress) -> None:
        self.stream, self.progress = stream, progress
        self.position = 0
        self.lines = 0

    def read(self, size: int = -1) -> bytes:
        # Pass the size through: ijson probes with read(0) to learn bytes from text.
        data = self.stream.read(size)
        self.position += len(data)
        self.lines += data.count(b"\n")
        self.progress.advance(len(data))
        return data


def open_json(root: Path, path: Path) -> BinaryIO:
    """A file of the run, opened so that nothing outside the run root is read, even if a
    link is swapped in between the listing and the open (app/safe_files.py)."""
    try:
        return open_inside(root, path)
    except OSError as error:
        raise ImportFileError(path, f"cannot be opened inside the run root: {error.strerror}") from None


def file_digest(root: Path, paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        with open_json(root, path) as stream:
            while chunk := stream.read(HASH_CHUNK):
                digest.update(chunk)
        digest.update(b"\x00")
    return digest.hexdigest()


def _parse_error(path: Path, reader: CountingReader, error: Exception) -> ImportFileError:
    first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return ImportFileError(
        path, f"not valid JSON near byte {reader.position} (line {reader.lines + 1}): {first_line}"
    )


# A task entry of a real run nests about eight levels and is a few hundred KB at most (text
# only; images are files). The bounds are far above that, and far below what exhausts memory:
# a 200 KB file nested 100,000 levels deep once drove an import past 20 GB.
MAX_DEPTH = 64
MAX_RECORD_BYTES = 64 * 1024 * 1024
_OPEN = {"start_map": dict, "start_array": list}


class _Records:
    """Values one level below the top of a JSON document, built from ijson's events (parsed
    in C) with the nesting depth and each value's size checked as they stream.

    ijson's own item builders would build a value whatever its depth. Numbers are read
    exactly (ijson's float mode overflows on integers past 64 bits); decimals become floats.
    """

    def __init__(self, path: Path, reader: CountingReader, top: type) -> None:
        self.path, self.reader, self.top = path, reader, top
        self.started = 0

    def __iter__(self) -> Iterator[tuple[str | None, Any]]:
        events = ijson.basic_parse(self.reader, buf_size=READ_CHUNK)
        first = next(events, None)
        if first is None or first[0] not in _OPEN:
            return  # empty or a bare value: the caller says what the top level should be
        if _OPEN[first[0]] is not self.top:
            kind = "an object" if self.top is dict else "an array"
            raise ImportFileError(self.path, f"the top level should be {kind}")
        key: str | None = None
        self.started = self.reader.position
        for event, value in events:
            if event == "map_key":
                key = value
                continue
            if event == "end_map" or event == "end_array":
                return
            if event == "start_map" or event == "start_array":
                value = self._build(events, event, 2)
            elif event == "number" and type(value) is Decimal:
                value = float(value)
            self._check_size()
            yield key, value
            self.started = self.reader.position

    def _build(self, events: Iterator[tuple[str, Any]], opened: str, depth: int) -> Any:
        # Recursion is bounded by MAX_DEPTH, and is faster than an explicit stack here.
        if depth > MAX_DEPTH:
            raise ImportFileError(self.path, f"nested more than {MAX_DEPTH} levels deep near "
                                  f"byte {self.reader.position} (line {self.reader.lines + 1})")
        if opened == "start_map":
            found: dict[str, Any] = {}
            key = ""
            for event, value in events:
                if event == "map_key":
                    key = value
                elif event == "end_map":
                    self._check_size()
                    return found
                elif event == "start_map" or event == "start_array":
                    found[key] = self._build(events, event, depth + 1)
                elif event == "number" and type(value) is Decimal:
                    found[key] = float(value)
                else:
                    found[key] = value
        else:
            items: list[Any] = []
            for event, value in events:
                if event == "end_array":
                    self._check_size()
                    return items
                if event == "start_map" or event == "start_array":
                    items.append(self._build(events, event, depth + 1))
                elif event == "number" and type(value) is Decimal:
                    items.append(float(value))
                else:
                    items.append(value)
        raise ImportFileError(self.path, "the file ends inside a value")

    def _check_size(self) -> None:
        if self.reader.position - self.started > MAX_RECORD_BYTES:
            raise ImportFileError(self.path, f"an entry near byte {self.started} is larger than "
                                  f"{MAX_RECORD_BYTES // (1024 * 1024)} MB")


def iter_object(root: Path, path: Path, progress: Progress) -> Iterator[tuple[str, Any]]:
    """Key-value pairs of a top-level JSON object, one at a time (a repeated key included)."""
    with open_json(root, path) as stream:
        reader = CountingReader(stream, progress)
        try:
            for key, value in _Records(path, reader, dict):
                yield str(key), value
            _expect_top_level(path, reader, stream, b"{")
        except ijson.JSONError as error:
            raise _parse_error(path, reader, error) from None


def iter_array(root: Path, path: Path, progress: Progress) -> Iterator[Any]:
    """Items of a top-level JSON array, one at a time."""
    with open_json(root, path) as stream:
        reader = CountingReader(stream, progress)
        try:
            for _key, value in _Records(path, reader, list):
                yield value
            _expect_top_level(path, reader, stream, b"[")
        except ijson.JSONError as error:
            raise _parse_error(path, reader, error) from None


def _expect_top_level(path: Path, reader: CountingReader, stream: IO[bytes], opener: bytes) -> None:
    """ijson yields nothing, silently, when the top level is of another type."""
    stream.seek(0)
    head = stream.read(READ_CHUNK).lstrip()
    if not head.startswith(opener):
        kind = "an object" if opener == b"{" else "an array"
        raise ImportFileError(path, f"the top level should be {kind}")


def iter_lines(root: Path, path: Path, progress: Progress) -> Iterator[Any]:
    """JSON Lines: one value per non-blank line, each read with the same bounds as a record
    of an array (its depth and size)."""
    with open_json(root, path) as stream:
        for number, line in enumerate(stream, start=1):
            progress.advance(len(line))
            if not line.strip():
                continue
            reader = CountingReader(io.BytesIO(b"[" + line + b"]"), Progress(0, None))
            try:
                values = [value for _key, value in _Records(path, reader, list)]
            except ImportFileError as error:
                raise ImportFileError(path, f"line {number}: {error.problem}") from None
            except ijson.JSONError as error:
                first = str(error).strip().splitlines()[0] if str(error).strip() else "unreadable"
                raise ImportFileError(path, f"not valid JSON on line {number}: {first}") from None
            if len(values) != 1:
                raise ImportFileError(path, f"not valid JSON on line {number}: "
                                      f"{len(values)} values, not one")
            yield values[0]


def sniff(root: Path, path: Path) -> str:
    """'array', 'object' or 'lines' by the first bytes; '' when it is not JSON at all."""
    with open_json(root, path) as stream:
        head = stream.read(READ_CHUNK).lstrip()
    if head.startswith(b"["):
        return "array"
    if head.startswith(b"{"):
        first_line = head.split(b"\n", 1)[0]
        try:
            orjson.loads(first_line)
        except orjson.JSONDecodeError:
            return "object"
        return "lines" if b"\n" in head.strip() else "object"
    return ""
