"""A live server on a free port and Debian's Chromium driven by Playwright.

The browser cannot be downloaded here; it comes from apt (`make test` installs it).
Under CI=true a missing browser fails the run instead of skipping it.
"""

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from sqlalchemy.engine import Engine

from app.settings import Settings
from app.web.main import create_app
from tests.accounts import PASSWORD, add_user

CHROMIUM = "/usr/bin/chromium"
# Chromium's own background traffic is refused on this closed network; these flags stop it.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def live_server(demo_engine: Engine, settings: Settings) -> Iterator[str]:
    add_user(demo_engine, "browser-admin")
    port = _free_port()
    config = uvicorn.Config(create_app(settings, demo_engine), host="127.0.0.1", port=port,
                            log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not (os.path.exists(CHROMIUM) and shutil.which(CHROMIUM)):
        message = f"{CHROMIUM} is missing: apt-get install chromium (make test does)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.fixture
def page(browser, live_server: str) -> Iterator[object]:  # type: ignore[no-untyped-def]
    """A tab logged in through the login form, as a person would."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    tab = context.new_page()
    tab.goto(f"{live_server}/cases")
    tab.fill("#name", "browser-admin")
    tab.fill("#password", PASSWORD)
    tab.keyboard.press("Enter")
    tab.wait_for_url(f"{live_server}/cases")
    yield tab
    context.close()
