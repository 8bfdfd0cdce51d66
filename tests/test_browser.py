"""End to end in a real browser: Debian's chromium driven by Playwright against a live server.

The server runs in-process (uvicorn on a free loopback port, in a thread) over a copy of the
staged demo store, with the agent working in the background. Each test saves a screenshot of
the page it checks under test-artifacts/.
"""

from __future__ import annotations

import json
import os
import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn
from fastapi import FastAPI
from playwright.sync_api import Browser, Error, Page, expect, sync_playwright
from pydantic import SecretStr

from supportagent.config import Settings
from supportagent.store.store import Store
from supportagent.web.app import create_app

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
TOKEN = "Xk3vQ9-browser-test-token-7RfT2mLw8Zp"
WAIT_MS = 30_000
expect.set_options(timeout=WAIT_MS)


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}: the browser tests must run in CI (`make test` installs chromium)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
    with sync_playwright() as playwright:
        try:
            launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        except Error as exc:
            _unavailable(f"chromium would not start: {exc.message.splitlines()[0]}")
            raise
        yield launched
        launched.close()


@contextmanager
def serve(app: FastAPI) -> Iterator[str]:
    """Run ``app`` on a free loopback port until the block ends; yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


@pytest.fixture
def base_url(settings: Settings, demo_store: Store) -> Iterator[str]:
    with serve(create_app(settings, demo_store, work=True)) as url:
        yield url


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    tab = context.new_page()
    tab.set_default_timeout(WAIT_MS)
    dialogs: list[str] = []
    tab.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    yield tab
    context.close()
    assert dialogs == [], f"a page opened a dialog: {dialogs}"


def shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def add_ticket(page: Page, base_url: str, ticket: dict[str, str]) -> None:
    response = page.request.post(
        f"{base_url}/api/tickets",
        data=json.dumps(ticket),
        headers={"content-type": "application/json"},
    )
    assert response.status == 201, response.text()


def test_monitor_updates_live_as_a_ticket_reaches_review(page: Page, base_url: str) -> None:
    page.goto(f"{base_url}/")
    expect(page.locator("#agent-state")).to_have_text(re.compile("idle"))
    in_review = page.locator('[data-count="pending_review"] b')
    before = int(in_review.inner_text())
    page.evaluate("window.stillTheSamePage = true")

    add_ticket(
        page,
        base_url,
        {"id": "T-WEB-1", "subject": "SDK install", "body": "What is the pip install command?"},
    )
    row = page.locator("#row-T-WEB-1")
    expect(row).to_have_attribute("data-status", "pending_review")
    expect(in_review).to_have_text(str(before + 1))
    assert page.evaluate("window.stillTheSamePage === true"), "the page reloaded"
    expect(page.locator("#live-state")).to_contain_text("updated")
    shot(page, "monitor")


def test_review_with_the_keyboard_approve_amend_reject(
    page: Page, base_url: str, demo_store: Store
) -> None:
    page.goto(f"{base_url}/review")
    review = page.locator("#review")
    first = review.get_attribute("data-ticket")
    assert first
    expect(page.locator(".claim.supported").first).to_be_visible()
    expect(page.locator(".passage mark").first).to_be_visible()
    shot(page, "review")

    page.keyboard.press("j")
    expect(review).not_to_have_attribute("data-ticket", first)
    page.keyboard.press("k")
    expect(review).to_have_attribute("data-ticket", first)

    page.fill("#reviewer", "Browser Bob")
    page.keyboard.press("Escape")  # leave the field: keys are shortcuts again
    page.keyboard.press("a")
    expect(page.locator("#notice")).to_have_text(f"{first} approved.")
    second = review.get_attribute("data-ticket")
    assert second and second != first

    page.keyboard.press("e")
    expect(page.locator("#amend-text")).to_be_focused()
    page.keyboard.type("Install it with pip install kestrel.")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#notice")).to_have_text(f"{second} amended.")
    third = review.get_attribute("data-ticket")
    assert third and third not in {first, second}

    page.keyboard.press("r")
    expect(page.locator("#reject-reason")).to_be_focused()
    page.keyboard.type("Cites the wrong plan.")
    page.keyboard.press("Enter")
    expect(page.locator("#notice")).to_have_text(f"{third} rejected.")

    decided = {t: demo_store.reviews(t)[0] for t in (first, second, third)}
    assert [decided[t]["decision"] for t in (first, second, third)] == [
        "approve",
        "amend",
        "reject",
    ]
    assert decided[first]["reviewer"] == "Browser Bob"
    assert decided[second]["final_text"] == "Install it with pip install kestrel."
    assert decided[third]["reason"] == "Cites the wrong plan."


def test_the_xss_ticket_is_inert_everywhere(page: Page, base_url: str) -> None:
    probe = '<img src=x onerror="alert(2)"><script>alert(3)</script>'
    add_ticket(page, base_url, {"id": "T-WEB-XSS", "subject": probe, "body": f"Hi {probe}"})
    page.goto(f"{base_url}/tickets/T-2020")
    expect(page.locator("#ticket-body")).to_contain_text("<script>alert(1)</script>")
    shot(page, "ticket-xss")
    page.goto(f"{base_url}/review?ticket=T-2020")
    expect(page.locator("#ticket-body")).to_contain_text("<script>alert(1)</script>")
    page.goto(f"{base_url}/")
    expect(page.locator("#row-T-WEB-XSS .subject")).to_have_text(probe)
    page.goto(f"{base_url}/tickets/T-WEB-XSS")
    expect(page.locator("#ticket-subject")).to_have_text(probe)
    for path in ("/", "/tickets/T-WEB-XSS", "/review?ticket=T-2020"):
        page.goto(f"{base_url}{path}")
        assert page.locator("img[src=x]").count() == 0, path
        scripts = page.eval_on_selector_all("script", "els => els.map(e => e.src + e.text)")
        assert all("alert" not in s for s in scripts), path
    # the page fixture fails the test if any alert() ever opened a dialog


def test_ticket_timeline_and_stats_charts(page: Page, base_url: str) -> None:
    page.goto(f"{base_url}/tickets/T-2001")
    stages = page.eval_on_selector_all("#timeline > li", "els => els.map(e => e.dataset.stage)")
    assert stages[1] == "safety" and stages[-1] == "stage" and "retrieve" in stages
    expect(page.locator("table.hits").first).to_be_visible()
    shot(page, "ticket")
    page.goto(f"{base_url}/stats")
    expect(page.locator("figure.chart svg").first).to_be_visible()
    assert page.locator("figure.chart svg rect").count() >= 3
    shot(page, "stats")


def test_login_with_the_token_sets_an_httponly_cookie(
    browser: Browser, settings: Settings, demo_store: Store
) -> None:
    guarded = settings.model_copy(update={"token": SecretStr(TOKEN)})
    with serve(create_app(guarded, demo_store, work=False)) as url:
        context = browser.new_context()
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(f"{url}/stats")
        expect(page).to_have_url(re.compile(r"/login\?next=%2Fstats$"))
        shot(page, "login")
        page.fill("#token", "wrong-token-wrong-token")
        page.click("button[type=submit]")
        expect(page.locator(".error")).to_contain_text("not the token")
        page.fill("#token", TOKEN)
        page.click("button[type=submit]")
        expect(page).to_have_url(f"{url}/stats")
        cookie = next(c for c in context.cookies() if c["name"] == "sa_auth")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert "sa_auth" not in page.evaluate("document.cookie")
        context.close()
