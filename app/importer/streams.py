"""Reading JSON files in bounded memory, with progress and exact-enough error positions."""

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import ijson
import orjson

from app.importer.errors import ImportFileError

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


def file_digest(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        with path.open("rb") as stream:
            while chunk := stream.read(HASH_CHUNK):
                digest.update(chunk)
        digest.update(b"\x00")
    return digest.hexdigest()


def _parse_error(path: Path, reader: CountingReader, error: Exception) -> ImportFileError:
    first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return ImportFileError(
        path, f"not valid JSON near byte {reader.position} (line {reader.lines + 1}): {first_line}"
    )


def iter_object(path: Path, progress: Progress) -> Iterator[tuple[str, Any]]:
    """Key-value pairs of a top-level JSON object, one at a time."""
    with path.open("rb") as stream:
        reader = CountingReader(stream, progress)
        try:
            yield from ijson.kvitems(reader, "", use_float=True, buf_size=READ_CHUNK)
            _expect_top_level(path, reader, stream, b"{")
        except ijson.JSONError as error:
            raise _parse_error(path, reader, error) from None


def iter_array(path: Path, progress: Progress) -> Iterator[Any]:
    """Items of a top-level JSON array, one at a time."""
    with path.open("rb") as stream:
        reader = CountingReader(stream, progress)
        try:
            yield from ijson.items(reader, "item", use_float=True, buf_size=READ_CHUNK)
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


def iter_lines(path: Path, progress: Progress) -> Iterator[Any]:
    """JSON Lines: one value per non-blank line."""
    with path.open("rb") as stream:
        for number, line in enumerate(stream, start=1):
            progress.advance(len(line))
            if not line.strip():
                continue
            try:
                yield orjson.loads(line)
            except orjson.JSONDecodeError as error:
                raise ImportFileError(path, f"not valid JSON on line {number}: {error}") from None


def sniff(path: Path) -> str:
    """'array', 'object' or 'lines' by the first bytes; '' when it is not JSON at all."""
    with path.open("rb") as stream:
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
