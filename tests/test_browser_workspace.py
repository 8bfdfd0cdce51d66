"""The review workspace in a real browser: the escalation queue, edits that are never lost,
phones (390 px, no horizontal scroll on any page), /docs with every other origin blocked, and
the Content-Security-Policy on every page. Screenshots of each page, desktop and phone."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, Route, expect

from browser_support import (  # noqa: F401 (fixtures)
    ARTIFACTS,
    WAIT_MS,
    base_url,
    browser,
    page,
    unload_prompts,
)
from supportagent.domain import Status
from supportagent.store.store import Store

#: Every page of the app: its name (for the screenshot) and its path.
PAGES = (
    ("monitor", "/"),
    ("review", "/review"),
    ("escalations", "/escalations"),
    ("ticket", "/tickets/T-2001"),
    ("ticket-escalated", "/tickets/T-2008"),
    ("stats", "/stats"),
    ("docs", "/docs"),
    ("error", "/tickets/T-NOPE"),
)
PHONE = {"width": 390, "height": 844}


def shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


@pytest.fixture
def phone(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    tab = context.new_page()
    tab.set_default_timeout(WAIT_MS)
    yield tab
    context.close()


def test_the_queue_shows_every_escalation_across_its_pages(
    page: Page, base_url: str, demo_store: Store
) -> None:
    expected = {
        r.ticket.id
        for r in demo_store.staged()
        if r.status in {Status.ESCALATED, Status.ROUTED, Status.HANDED_OFF}
    }
    page.goto(f"{base_url}/")
    page.click('[data-count="escalated"]')  # the counter is a link to the queue
    expect(page).to_have_url(f"{base_url}/escalations?status=escalated")
    page.goto(f"{base_url}/escalations?limit=10")
    expect(page.locator(".queue-item.pinned").first).to_contain_text("take it now")
    assert page.locator(".queue-item").first.get_attribute("data-ticket") == "T-2008"
    shot(page, "escalations-desktop")
    seen: list[str] = []
    pages = 0
    while True:
        pages += 1
        seen += [i.get_attribute("data-ticket") or "" for i in page.locator(".queue-item").all()]
        following = page.locator("#queue-next")
        if following.count() == 0:
            break
        following.click()
        page.wait_for_load_state()
    assert pages >= 3 and len(seen) == len(set(seen)) and set(seen) == expected


def test_an_edit_is_never_lost(
    page: Page, base_url: str, demo_store: Store, unload_prompts: list[str]
) -> None:
    page.goto(f"{base_url}/review")
    review = page.locator("#review")
    ticket = review.get_attribute("data-ticket")
    assert ticket
    answer = page.locator("#amend-text")
    draft = answer.input_value()
    page.keyboard.press("e")
    expect(answer).to_be_focused()
    assert (
        page.evaluate(
            "() => { const a = document.getElementById('amend-text');"
            " return [a.selectionStart, a.selectionEnd, a.value.length]; }"
        )
        == [len(draft)] * 3
    )  # the cursor at the end, nothing selected
    page.keyboard.type(" Also: restart the worker.")
    page.keyboard.press("Escape")
    page.keyboard.press("a")  # approve with an edit in the box: refused, the edit stays
    expect(page.locator("#edit-warning")).to_be_visible()
    assert answer.input_value() == draft + " Also: restart the worker."
    assert demo_store.ticket_status(ticket) is Status.PENDING_REVIEW
    page.click("#approve-button")  # the button too
    expect(page.locator("#edit-warning")).to_be_visible()
    assert demo_store.ticket_status(ticket) is Status.PENDING_REVIEW
    shot(page, "review-edit-kept")

    page.keyboard.press("Escape")
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("j")  # leaving with an unsaved edit asks first
    page.wait_for_timeout(500)
    assert unload_prompts, "leaving with an unsaved edit did not ask"
    expect(review).to_have_attribute("data-ticket", ticket)  # dismissed: still here
    assert answer.input_value().endswith("restart the worker.")

    answer.focus()
    page.keyboard.press("Control+Enter")  # saving it is no reason to ask
    expect(page.locator("#notice")).to_contain_text(f"{ticket} amended")
    assert len(unload_prompts) == 1
    final = demo_store.reviews(ticket)[0]["final_text"]
    assert final.endswith("Also: restart the worker.")


def test_the_server_refuses_an_approval_that_would_drop_an_edit(
    page: Page, base_url: str, demo_store: Store
) -> None:
    page.goto(f"{base_url}/review")
    ticket = page.locator("#review").get_attribute("data-ticket")
    assert ticket
    # past the page's own check: submit the form with the approve button, as a browser
    # without the script would
    page.locator("#amend-text").fill("A different answer entirely.")
    page.evaluate(
        "document.getElementById('answer-form')"
        ".requestSubmit(document.getElementById('approve-button'))"
    )
    expect(page.locator("#review-error")).to_contain_text("amend instead")
    expect(page.locator("#amend-text")).to_have_value("A different answer entirely.")
    assert demo_store.ticket_status(ticket) is Status.PENDING_REVIEW


@pytest.mark.parametrize(("name", "path"), PAGES)
def test_every_page_fits_a_phone_and_carries_the_csp(
    phone: Page, page: Page, base_url: str, name: str, path: str
) -> None:
    for tab, size in ((page, "desktop"), (phone, "phone")):
        response = tab.goto(f"{base_url}{path}")
        assert response is not None
        csp = response.headers.get("content-security-policy", "")
        assert "default-src 'self'" in csp and "script-src 'self'" in csp, path
        if name == "docs":
            expect(tab.locator(".swagger-ui .opblock").first).to_be_visible()
        else:
            expect(tab.locator("main")).to_be_visible()
        shot(tab, f"{name}-{size}")
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"{path} is {width} px wide on a {PHONE['width']} px phone"


def test_docs_render_with_every_other_origin_blocked(page: Page, base_url: str) -> None:
    blocked: list[str] = []
    refused: list[str] = []

    def only_here(route: Route) -> None:
        if route.request.url.startswith(base_url):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    page.context.route("**/*", only_here)
    page.on("console", lambda m: refused.append(m.text) if "Content Security" in m.text else None)
    page.goto(f"{base_url}/docs")
    expect(page.locator(".swagger-ui .opblock-tag").first).to_be_visible()
    expect(page.locator(".swagger-ui")).to_contain_text("/api/tickets/{ticket_id}/assign")
    page.locator(".opblock-summary-path", has_text="/api/tickets").first.click()
    expect(page.locator(".opblock-body").first).to_be_visible()
    assert blocked == [], f"/docs tried to reach another origin: {blocked}"
    assert refused == [], f"the CSP refused something on /docs: {refused}"
