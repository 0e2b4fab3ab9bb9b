"""A long command's progress: a bar on a terminal, and where there is none (make's output
piped to a log, CI) a line at every tenth of the way, so the command is never silent for
minutes."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, TaskProgressColumn, TimeRemainingColumn

Update = Callable[[int, int | None], None]
STEPS = 10  # lines written without a terminal: one at every tenth


@contextmanager
def progress(console: Console, description: str,
             *columns: ProgressColumn, unit: str = "") -> Iterator[Update]:
    """``update(done, total)`` moves it on; ``unit`` names what is counted where there is no
    bar ("0 of 718673" said nothing of bytes or files)."""
    if console.is_terminal:
        shown = columns or (BarColumn(), TaskProgressColumn(), TimeRemainingColumn())
        with Progress("[progress.description]{task.description}", *shown, console=console) as bar:
            task = bar.add_task(description, total=None)
            yield lambda done, total: bar.update(task, completed=done, total=total)
        return
    said = {"step": -1}

    def line(done: int, total: int | None) -> None:
        step = STEPS * done // total if total else -1
        if total and step > said["step"]:
            said["step"] = step
            counted = f" {unit}" if unit else ""
            console.print(f"{description}: {done:,} of {total:,}{counted} ({100 * done // total} %)",
                          markup=False, highlight=False)

    yield line
