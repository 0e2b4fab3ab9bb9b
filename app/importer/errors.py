"""Errors that stop an import: a whole file is unreadable, so nothing of it is written."""

from pathlib import Path


class ImportFileError(Exception):
    """A file that is not valid JSON (or cannot be read). Names the file and the position."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


class RowError(ValueError):
    """One task entry is malformed; it is reported and skipped, the rest is imported."""
