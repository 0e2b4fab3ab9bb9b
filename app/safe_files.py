"""Opening a file under a data root so that nothing outside the root can be read, even when
links are swapped in while the file is being opened.

A check-then-open (resolve the path, test that it lies inside, open it by name) leaves a
window in which a component can be replaced by a link leading out. Here no name is ever
followed by the kernel: each component is opened relative to its parent's descriptor with
``O_NOFOLLOW``. A link found on the way is read and its target walked the same way, so links
that stay inside the root still work and one that leads out is refused. The opened file's
real path and device/inode are checked once more before it is handed out.
"""

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

# As many links as the kernel follows in one path (Linux's MAXSYMLINKS).
MAX_LINKS = 40
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO planted under the root must not hang the opener.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


class NotInside(OSError):
    """The path is missing, is not a regular file, or leads outside its root."""


def open_inside(root: Path, path: Path) -> BinaryIO:
    """The regular file at ``path``, which must lie inside ``root``, open for reading."""
    root_real = os.path.realpath(root)
    parts = _parts_below(Path(os.path.abspath(root)), Path(os.path.abspath(path)))
    if parts is None:
        parts = _parts_below(Path(root_real), Path(os.path.abspath(path)))
    if parts is None or not parts:
        raise NotInside(errno.EACCES, "not inside its data root", str(path))
    fd = _walk(root_real, parts, str(path))
    try:
        _check_opened(fd, root_real, str(path))
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    os.set_blocking(handle.fileno(), True)
    return handle


def read_inside(root: Path, path: Path) -> bytes:
    with open_inside(root, path) as handle:
        return handle.read()


def _parts_below(root: Path, path: Path) -> list[str] | None:
    """The path's components below the root, taken as written (no link followed here)."""
    if not path.is_relative_to(root):
        return None
    return list(path.relative_to(root).parts)


def _walk(root_real: str, parts: list[str], shown: str) -> int:
    """Open each component relative to its parent's descriptor; returns the file's fd."""
    dirs = [os.open(root_real, _DIR_FLAGS)]
    pending = list(reversed(parts))  # a stack: the next component is at the end
    links = 0
    try:
        while pending:
            name = pending.pop()
            if name in ("", "."):
                continue
            if name == "..":
                if len(dirs) == 1:
                    raise NotInside(errno.EACCES, "leads outside its data root", shown)
                os.close(dirs.pop())
                continue
            last = not pending
            try:
                fd = os.open(name, _FILE_FLAGS if last else _DIR_FLAGS, dir_fd=dirs[-1])
            except OSError as error:
                if error.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    raise NotInside(error.errno, error.strerror, shown) from None
                target = _link_target(name, dirs[-1], shown)
                links += 1
                if links > MAX_LINKS:
                    raise NotInside(errno.ELOOP, "too many links", shown) from None
                if os.path.isabs(target):
                    below = _parts_below(Path(root_real), Path(target))
                    if below is None:
                        raise NotInside(errno.EACCES, "a link leads outside its data root",
                                        shown) from None
                    for extra in dirs[1:]:
                        os.close(extra)
                    del dirs[1:]
                    pending.extend(reversed(below))
                else:
                    pending.extend(reversed(Path(target).parts))
                continue
            if last:
                return fd
            dirs.append(fd)
        raise NotInside(errno.EISDIR, "not a file", shown)
    finally:
        for fd in dirs:
            os.close(fd)


def _link_target(name: str, dir_fd: int, shown: str) -> str:
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError as error:
        raise NotInside(error.errno, error.strerror, shown) from None
    if not stat.S_ISLNK(info.st_mode):
        raise NotInside(errno.ENOTDIR, "not a folder", shown)
    try:
        return os.readlink(name, dir_fd=dir_fd)
    except OSError as error:  # replaced since the stat above
        raise NotInside(error.errno, error.strerror, shown) from None


def _check_opened(fd: int, root_real: str, shown: str) -> None:
    """A regular file, whose real path is inside the root and names this very file."""
    opened = os.fstat(fd)
    if not stat.S_ISREG(opened.st_mode):
        raise NotInside(errno.EACCES, "not a regular file", shown)
    proc = f"/proc/self/fd/{fd}"
    if not os.path.exists("/proc/self/fd"):
        return  # no /proc (not Linux): the walk above is the guarantee
    real = os.readlink(proc)
    if not Path(real).is_relative_to(root_real):
        raise NotInside(errno.EACCES, "the opened file lies outside its data root", shown)
    try:
        named = os.stat(real, follow_symlinks=False)
    except OSError:
        raise NotInside(errno.ENOENT, "the file was moved while it was opened", shown) from None
    if (named.st_dev, named.st_ino) != (opened.st_dev, opened.st_ino):
        raise NotInside(errno.EACCES, "the file was replaced while it was opened", shown)
