"""Command modules imported only when one of their commands runs.

The statistics, the exports and the judges bring scipy, statsmodels, matplotlib and the
Gemini client: importing them all took 4.5 s of every command, `medbanana import` of an
88K-task run included. The root group knows each lazy command's name and where it is
registered; it imports that module when the command is run, or when the help lists it.
"""

import importlib
from collections.abc import Callable
from typing import Any

import typer
from typer.core import TyperGroup

# command name -> (module, its register function, whether it takes the engine factory)
LAZY: dict[str, tuple[str, str, bool]] = {
    "stats": ("app.cli.stats", "register", True),
    "quality": ("app.cli.quality", "register", True),
    "judges": ("app.cli.judges", "register", True),
    "plan": ("app.cli.plan", "register", False),
    "mrmc": ("app.cli.mrmc", "register", False),
    "pipeline": ("app.cli.pipeline", "register", True),
    "export-run": ("app.cli.pipeline", "register_export", True),
    "metrics": ("app.cli.pipeline", "register_metrics", True),
    "export-pairwise": ("app.cli.exports", "register", True),
    "export-pairs": ("app.cli.exports", "register", True),
    "export-curated": ("app.cli.exports", "register", True),
    "audit": ("app.cli.audit", "register", True),
    "export-dicom": ("app.cli.exports", "register_dicom", True),
    "check-mark": ("app.cli.exports", "register_check_mark", False),
}

_engine_factory: list[Callable[[], Any]] = []


def engine_factory(factory: Callable[[], Any]) -> None:
    """The root's ``_engine``, handed to the commands that open the database."""
    _engine_factory[:] = [factory]


def registered(module: str, register: str, takes_engine: bool) -> Any:
    """The commands ``module``'s ``register`` adds, as a group of Typer's click."""
    found = typer.Typer()
    function = getattr(importlib.import_module(module), register)
    if takes_engine:
        function(found, _engine_factory[0])
    else:
        function(found)
    return typer.main.get_group(found)


class LazyGroup(TyperGroup):
    # Typer carries its own copy of click: its context and command types are Typer's.
    def list_commands(self, ctx: Any) -> list[str]:
        return [*super().list_commands(ctx), *(n for n in LAZY if n not in self.commands)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        found = super().get_command(ctx, cmd_name)
        if found is None and cmd_name in LAZY:
            found = registered(*LAZY[cmd_name]).get_command(ctx, cmd_name)
            if found is not None:
                self.add_command(found, cmd_name)
        return found
