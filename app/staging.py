"""A folder written beside its destination and moved there whole at the end.

The staging folder is made fresh under a unique name by the call that creates it
(``tempfile.mkdtemp``: one ``mkdir``, which fails rather than follow or reuse anything at that
name), so no link or folder planted beforehand is ever written through, reused or deleted.
A failure removes only the folder this process made. One a killed process left behind keeps
its name (``.TARGET.<random>.partial``) for a person to remove; no later run deletes it.
"""

import logging
import os
import shutil
import tempfile
from pathlib import Path

logger = logging.getLogger(__name__)


class ExportError(Exception):
    """An export refused before anything was written (its folder exists, or its parent does
    not): one refusal for every export."""


def stage_export(target: Path) -> Path:
    """The staged folder of an export to ``target``, refused (ExportError) when ``target``
    exists already or its parent is no folder: every export's first step."""
    if target.exists():
        raise ExportError(f"{target} already exists; choose a new folder")
    if not target.parent.is_dir():
        raise ExportError(f"{target.parent} is not a folder")
    return stage_folder(target)


class LeftOut(list[dict[str, str]]):
    """What an export left out and why, as its manifest names them; each one logged."""

    def note(self, export: str, what: str, why: object) -> None:
        logger.warning("%s export: %s left out: %s", export, what, why)
        self.append({"what": what, "why": str(why)})


def stage_folder(target: Path) -> Path:
    """A new, empty, private folder beside ``target``."""
    return Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent))


def place_folder(staged: Path, target: Path) -> None:
    """Move the finished folder to ``target``. When something took that name meanwhile (a
    rename would silently replace an empty folder there), the staged folder is removed and
    FileExistsError raised: nothing was written there."""
    if os.path.lexists(target):
        discard_folder(staged)
        raise FileExistsError(f"{target} appeared while the export was written; nothing was "
                              "written there")
    staged.chmod(0o755)  # private while it was written; an export is meant to be read
    os.rename(staged, target)


def discard_folder(staged: Path) -> None:
    """Remove a folder this process staged (never one it did not make)."""
    shutil.rmtree(staged, ignore_errors=True)
