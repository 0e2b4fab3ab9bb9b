"""The command modules are imported when their commands run, and the root lists them all."""

import subprocess
import sys
from collections import defaultdict

from app.cli.lazy import LAZY, registered


def test_each_lazy_command_is_the_one_its_module_registers() -> None:
    named: dict[tuple[str, str, bool], set[str]] = defaultdict(set)
    for command, where in LAZY.items():
        named[where].add(command)
    for where, commands in named.items():
        assert set(registered(*where).commands) == commands, where


def test_the_root_imports_no_statistics_no_exports_and_no_gemini_client() -> None:
    heavy = ("scipy", "statsmodels", "matplotlib", "google.genai", "app.exports", "app.agreement")
    listing = "import sys, app.cli; print(' '.join(sorted(sys.modules)))"
    found = subprocess.run([sys.executable, "-c", listing], capture_output=True, text=True,
                           check=True).stdout.split()
    assert not [m for m in found if m.startswith(heavy)]
