"""What the browser tests share: chromium through Playwright, a live server, screenshots."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn
from fastapi import FastAPI
from playwright.sync_api import Browser, Dialog, Error, Page, expect, sync_playwright

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
def unload_prompts() -> list[str]:
    """ "Leave this page?" prompts the pages asked (each one dismissed: the page stays)."""
    return []


@pytest.fixture
def page(browser: Browser, unload_prompts: list[str]) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    tab = context.new_page()
    tab.set_default_timeout(WAIT_MS)
    dialogs: list[str] = []

    def on_dialog(dialog: Dialog) -> None:
        (unload_prompts if dialog.type == "beforeunload" else dialogs).append(dialog.message)
        dialog.dismiss()

    tab.on("dialog", on_dialog)
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
