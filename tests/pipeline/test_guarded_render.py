"""The render process of candidate judges' templates: warm, small, and charged only for the
render's own work, so that a busy server can still add and score a judge."""

import os
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.guarded_render import MOST_REPLY, GuardedRenderer, RenderFailed
from pipeline.judge_spec import default_template

CONTEXT = {"modality": "chest_xray", "disease": "Edema", "direction": "add",
           "instruction": "Add edema.", "modality_words": "chest X-ray",
           "disease_words": "edema", "edited_first": True}


@pytest.fixture
def renderer() -> Iterator[GuardedRenderer]:
    made = GuardedRenderer(seconds=0.5)
    yield made
    made._stop()


def test_the_render_process_imports_only_what_rendering_needs() -> None:
    """Its start re-imported the whole CLI (3-5 s on a busy machine)."""
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, pipeline.render_process, pipeline.template_sandbox, "
         "pipeline.rubric; print(sorted({m.split('.')[0] for m in sys.modules}))"],
        capture_output=True, text=True, check=True, cwd=Path(__file__).parents[2]).stdout
    for heavy in ("app", "fastapi", "sqlalchemy", "sqlmodel", "google", "numpy", "PIL"):
        assert f"'{heavy}'" not in loaded


def test_a_slow_start_is_not_counted_against_the_render(
        renderer: GuardedRenderer, tmp_path: Path) -> None:
    slow = tmp_path / "slow-python"
    slow.write_text(f"#!/bin/sh\nsleep 2\nexec {sys.executable} \"$@\"\n")
    slow.chmod(slow.stat().st_mode | stat.S_IEXEC)
    renderer.python = str(slow)
    assert "chest X-ray" in renderer.render(default_template(), CONTEXT)


def test_a_render_that_waits_for_a_core_is_not_charged_for_the_wait(
        renderer: GuardedRenderer) -> None:
    """A busy machine, made certain: the render process is stopped for 2 s (no CPU at all)
    while its render is asked; only its own CPU time counts against the 0.5 s."""
    renderer.render("{{ instruction }}", CONTEXT)  # started and ready
    pid = renderer._process.pid if renderer._process is not None else 0
    os.kill(pid, signal.SIGSTOP)
    threading.Timer(2.0, os.kill, (pid, signal.SIGCONT)).start()
    assert "chest X-ray" in renderer.render(default_template(), CONTEXT)
    assert renderer.started == 1


def test_a_render_past_its_own_time_fails_alone_and_the_process_is_warm_again(
        renderer: GuardedRenderer) -> None:
    looping = "{% for a in instruction %}" * 6 + "{% endfor %}" * 6
    with pytest.raises(RenderFailed, match=r"did not render within 0\.5 s of computing"):
        renderer.render(looping, {**CONTEXT, "instruction": "x" * 200})
    assert renderer.render("{{ instruction }}", CONTEXT) == "Add edema."
    assert renderer.started == 1  # stopped by its own clock: the process goes on


def test_a_render_process_that_answers_too_much_is_stopped_unread(
        renderer: GuardedRenderer, tmp_path: Path) -> None:
    """Whatever escaped the sandbox, the server takes in at most MOST_REPLY bytes."""
    liar = tmp_path / "liar"
    liar.write_text(
        f"#!{sys.executable}\nimport struct, sys, json\n"
        "out = sys.stdout.buffer\n"
        "ready = json.dumps({'ready': True}).encode()\n"
        "out.write(struct.pack('>I', len(ready)) + ready); out.flush()\n"
        "sys.stdin.buffer.read(4)\n"
        f"out.write(struct.pack('>I', {MOST_REPLY + 1})); out.write(b'x' * 65536); out.flush()\n"
        "import time; time.sleep(60)\n")
    liar.chmod(liar.stat().st_mode | stat.S_IEXEC)
    renderer.python = str(liar)
    with pytest.raises(RenderFailed, match="did not render within"):
        renderer.render("{{ instruction }}", CONTEXT)
    assert renderer._process is not None  # a new one already starting
