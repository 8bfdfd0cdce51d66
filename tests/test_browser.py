"""End to end in a real browser: Debian's chromium driven by Playwright against a live server.

The server runs in-process (uvicorn on a free loopback port, in a thread) over a copy of the
staged demo store, with the agent working in the background. Each test saves a screenshot of
the page it checks under test-artifacts/.
"""

from __future__ import annotations

import re

from playwright.sync_api import Browser, Page, expect
from pydantic import SecretStr

from browser_support import (  # noqa: F401 (fixtures)
    TOKEN,
    WAIT_MS,
    add_ticket,
    base_url,
    browser,
    page,
    serve,
    shot,
    unload_prompts,
)
from supportagent.config import Settings
from supportagent.store.store import Store
from supportagent.web.app import create_app


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
    expect(page.locator("#notice")).to_contain_text(f"{first} approved: added to the knowledge")
    second = review.get_attribute("data-ticket")
    assert second and second != first

    page.keyboard.press("e")
    expect(page.locator("#amend-text")).to_be_focused()
    page.keyboard.type("Install it with pip install kestrel.")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#notice")).to_contain_text(f"{second} amended: ")
    third = review.get_attribute("data-ticket")
    assert third and third not in {first, second}

    page.keyboard.press("r")
    expect(page.locator("#reject-reason")).to_be_focused()
    page.keyboard.type("Cites the wrong plan.")
    page.keyboard.press("Enter")
    expect(page.locator("#notice")).to_contain_text(f"{third} rejected")

    decided = {t: demo_store.reviews(t)[0] for t in (first, second, third)}
    assert [decided[t]["decision"] for t in (first, second, third)] == [
        "approve",
        "amend",
        "reject",
    ]
    assert decided[first]["reviewer"] == "Browser Bob"
    # e puts the cursor at the end: typing adds to the draft, it never wipes it
    final = decided[second]["final_text"]
    assert final.endswith("Install it with pip install kestrel.") and len(final) > 60
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
