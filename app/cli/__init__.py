"""The command line, `medbanana`: one module per command group, the root in root.py."""

from app.cli.root import cli, main

__all__ = ["cli", "main"]
