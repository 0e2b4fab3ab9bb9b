"""The content security policy in Chromium: no page breaks it (no inline script, no other
host), the API docs run from vendored files, and the "are you sure?" prompts still ask."""

import pytest
from playwright.sync_api import ConsoleMessage, Dialog, Page, Request, expect
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.models import Task
from app.studies.models import Study, StudyStatus
from tests.studies.conftest import make_study

pytestmark = pytest.mark.browser


def watch(page: Page, base: str) -> tuple[list[str], list[str]]:
    violations: list[str] = []
    elsewhere: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text or "Refused to" in message.text:
            violations.append(message.text)

    def on_request(request: Request) -> None:
        if not request.url.startswith((base, "data:", "blob:")):
            elsewhere.append(request.url)

    page.on("console", on_console)
    page.on("request", on_request)
    return violations, elsewhere


def test_no_page_breaks_the_policy(page: Page, live_server: str, demo_engine: Engine) -> None:
    setup = make_study(demo_engine)
    with Session(demo_engine) as s:
        task_id = s.exec(select(Task.id)).first()
    violations, elsewhere = watch(page, live_server)
    for path in ("/cases", f"/cases/{task_id}", "/studies", "/studies/new", f"/studies/{setup.study.id}",
                 f"/studies/{setup.study.id}/agreement", f"/jobs/new?task={task_id}", "/jobs",
                 "/imports", "/overview"):
        response = page.goto(f"{live_server}{path}")
        assert response is not None and response.ok, path
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
        page.wait_for_load_state("networkidle")
    page.goto(f"{live_server}/docs")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("MedBanana Review")
    expect(page.locator(".opblock").first).to_be_visible()
    assert violations == [] and elsewhere == []


def test_confirmations_still_ask(page: Page, live_server: str, demo_engine: Engine) -> None:
    setup = make_study(demo_engine)
    asked: list[str] = []

    def decline(dialog: Dialog) -> None:
        asked.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", decline)
    page.goto(f"{live_server}/studies/{setup.study.id}")
    page.click("#lock-form button[type=submit]")
    page.wait_for_timeout(300)
    assert asked == ["Lock this study? No answer can change afterwards."]
    with Session(demo_engine) as s:
        study = s.get(Study, setup.study.id)
        assert study is not None and study.status != StudyStatus.locked
    page.remove_listener("dialog", decline)
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#lock-form button[type=submit]")
    page.wait_for_load_state("networkidle")
    with Session(demo_engine) as s:
        study = s.get(Study, setup.study.id)
        assert study is not None and study.status == StudyStatus.locked
