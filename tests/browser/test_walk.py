"""Every page, walked in Chromium at 1024, 1280, 1366 and 1920 wide as an admin and as a
reader: no request to another host, no sideways scroll, no console error (nor a pattern
attribute Chromium cannot compile, whatever level it is logged at), and the navigation bar
everywhere."""

import re

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Request, expect
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.models import Task
from tests.browser.conftest import ARTIFACTS
from tests.browser.helpers import log_in
from tests.studies.conftest import make_study

pytestmark = pytest.mark.browser
SMALL = {"width": 1024, "height": 768}
WIDTHS = (1024, 1280, 1366, 1920)
# Logged by Chromium for a pattern attribute it cannot compile (the browser's own check of
# the field then does nothing), at a level that is not always "error".
BAD_PATTERN = "is not a valid regular expression"


class Watch:
    def __init__(self, page: Page, base: str) -> None:
        self.elsewhere: list[str] = []
        self.console: list[str] = []
        self.base = base
        page.on("request", self.on_request)
        page.on("console", self.on_console)
        page.on("pageerror", lambda error: self.console.append(f"{page.url}: {error}"))
        self.page = page

    def on_request(self, request: Request) -> None:
        if not request.url.startswith((self.base, "data:", "blob:")):
            self.elsewhere.append(request.url)

    def on_console(self, message: ConsoleMessage) -> None:
        if message.type in ("error", "warning") or BAD_PATTERN in message.text:
            self.console.append(f"{self.page.url}: {message.text}")

    def visit(self, path: str, status: int = 200, nav: bool = True) -> None:
        """Load the page once, then lay it out at every width (a resize reflows it as a
        fresh load at that width would)."""
        response = self.page.goto(f"{self.base}{path}")
        assert response is not None and response.status == status, (path, response and response.status)
        self.page.wait_for_load_state("networkidle")
        for width in WIDTHS:
            self.page.set_viewport_size({"width": width, "height": 768})
            self.fits(path)
        # Chromium compiles a pattern attribute (and logs it when it cannot) only when a
        # value is checked against it: every pattern of the page is checked once.
        self.page.evaluate("""() => document.querySelectorAll("input[pattern]").forEach(e => {
            const kept = e.value; e.value = "a"; void e.validity.patternMismatch; e.value = kept; })""")
        if nav:
            expect(self.page.locator("header.topbar .brand")).to_be_visible()

    def fits(self, path: str) -> None:
        width = self.page.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert width[0] <= width[1], f"{path} scrolls sideways: {width}"
        # Nothing runs past the right edge either, clipped or not (a banner, a table cell),
        # except inside a box that scrolls sideways on its own, or an image viewer's pan and
        # zoom canvas (which its viewport clips by design, and refits after a resize).
        past = self.page.evaluate("""() => {
            const edge = document.documentElement.clientWidth;
            const scrolls = e => {
                for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
                    if (["auto", "scroll"].includes(getComputedStyle(a).overflowX)) return true;
                }
                return false;
            };
            return [...document.querySelectorAll("body *")].filter(e => {
                const box = e.getBoundingClientRect();
                return box.width > 0 && box.right > edge + 1 && getComputedStyle(e).position !== "fixed"
                    && !e.closest(".swagger-ui, dialog:not([open]), .viewport") && !scrolls(e);
            }).slice(0, 5).map(e => e.tagName + (e.id ? "#" + e.id : "") + "." + e.className);
        }""")
        assert past == [], f"{path} at {width[1]} px runs past the edge: {past}"


def test_every_admin_page_fits_and_stays_on_this_host(page: Page, live_server: str,
                                                     demo_engine: Engine) -> None:
    setup = make_study(demo_engine)
    sid = setup.study.id
    with Session(demo_engine) as s:
        task_id = s.exec(select(Task.id)).first()
    watch = Watch(page, live_server)
    for path in ("/cases", f"/cases/{task_id}", "/cases?modality=CT_SCAN&sort=bogus", "/studies",
                 "/studies/new", f"/studies/{sid}", f"/studies/{sid}/agreement",
                 f"/studies/{sid}/disagreements", f"/jobs/new?task={task_id}", "/jobs", "/imports",
                 "/overview", "/quality", "/accounts", "/accounts/audit", "/read", "/adjudicate"):
        watch.visit(path)
    watch.visit("/docs", nav=False)  # Swagger UI's own page
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("MedBanana Review")
    page.goto(f"{live_server}/studies/{sid}/report.html")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 768})
        assert page.evaluate(
            "document.documentElement.scrollWidth <= document.documentElement.clientWidth"), width

    # An unknown address keeps the navigation; its own 404 is the one console line expected.
    watch.visit("/no-such-page", status=404)
    expect(page.locator("nav[aria-label=Main] a", has_text="Studies")).to_be_visible()
    expect(page.locator("#back-link")).to_have_attribute("href", re.compile(r"/cases$"))
    expected = [m for m in watch.console if "/no-such-page" in m and "404" in m]
    assert [m for m in watch.console if m not in expected] == []
    assert watch.elsewhere == []
    ARTIFACTS.mkdir(exist_ok=True)
    page.goto(f"{live_server}/cases")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 768})
        page.screenshot(path=str(ARTIFACTS / f"case-list-{width}-walk.png"))


def test_a_reader_walks_their_pages_and_never_meets_a_dead_end(browser: Browser, live_server: str,
                                                               demo_engine: Engine) -> None:
    setup = make_study(demo_engine)
    sid = setup.study.id
    page = browser.new_context(viewport=SMALL).new_page()
    watch = Watch(page, live_server)
    log_in(page, live_server, "reader-0", "/read")
    for path in ("/read", f"/read/{sid}/1", f"/read/{sid}/2"):
        watch.visit(path)
    # The logo and an admin page's way out both lead somewhere a reader may go.
    expect(page.locator(".brand")).to_have_attribute("href", re.compile(r"/read$"))
    watch.visit("/cases", status=403)
    page.click("#back-link")
    expect(page).to_have_url(re.compile(r"/read$"))
    expected = [m for m in watch.console if "/cases" in m and "403" in m]
    assert [m for m in watch.console if m not in expected] == []
    assert watch.elsewhere == []
