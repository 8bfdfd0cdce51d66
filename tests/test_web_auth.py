"""Who may use the web app: bind address, token, login cookie, CSRF on forms."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from typer.testing import CliRunner

from supportagent.cli import app as cli
from supportagent.config import Settings
from supportagent.errors import UserError
from supportagent.store.store import Store
from supportagent.web.app import create_app
from supportagent.web.auth import safe_next
from supportagent.web.ratelimit import Limits, LoginBackoff, RateLimiter
from supportagent.web.security import AUTH_COOKIE, AUTH_MAX_AGE, Security, check_bind

TOKEN = "correct-horse-battery-staple-42-Qv7Xk"
BASE = "http://127.0.0.1"
HTML = {"accept": "text/html"}


@pytest.fixture
def guarded(settings: Settings, demo_store: Store) -> Iterator[TestClient]:
    with_token = settings.model_copy(update={"token": SecretStr(TOKEN)})
    app = create_app(with_token, demo_store, work=False)
    with TestClient(app, base_url=BASE, follow_redirects=False) as client:
        yield client


@pytest.fixture
def open_client(settings: Settings, demo_store: Store) -> Iterator[TestClient]:
    with TestClient(create_app(settings, demo_store, work=False), base_url=BASE) as client:
        yield client


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf_token" value="([0-9a-f]+)"', page)
    assert found, "the page has no CSRF token"
    return found.group(1)


def log_in(client: TestClient) -> None:
    token = csrf_of(client.get("/login", headers=HTML).text)
    response = client.post("/login", data={"token": TOKEN, "next": "/", "csrf_token": token})
    assert response.status_code == 303


# --- binding --------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2"])
def test_loopback_needs_no_token(host: str) -> None:
    check_bind(host, None)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.com"])
def test_beyond_loopback_a_token_is_required(host: str) -> None:
    with pytest.raises(UserError, match="SUPPORTAGENT_TOKEN"):
        check_bind(host, None)
    check_bind(host, SecretStr(TOKEN))


@pytest.mark.parametrize(
    "weak",
    [
        "1234",
        " " * 16,
        "a" * 16,
        "a" * 64,
        "abababababababababababababababab",
        "abcdefghijklmnopqrstuvwxyz012345",
        "qwertyuiop" * 4,
        "correct-horse-battery-staple-42",  # 31 characters
    ],
)
def test_a_weak_token_is_refused_with_what_to_use(weak: str, settings: Settings) -> None:
    with pytest.raises(UserError, match="too weak") as refused:
        check_bind("127.0.0.1", SecretStr(weak))
    assert "token_urlsafe" in str(refused.value)
    # whoever starts the app: create_app refuses it too
    with pytest.raises(UserError, match="too weak"):
        Security.from_settings(SecretStr(weak))


def test_random_tokens_pass() -> None:
    import secrets

    for _ in range(50):
        check_bind("0.0.0.0", SecretStr(secrets.token_urlsafe()))
        check_bind("0.0.0.0", SecretStr(secrets.token_hex(16)))


def test_cli_refuses_to_serve_beyond_loopback_without_a_token() -> None:
    result = CliRunner().invoke(cli, ["ui", "--host", "0.0.0.0", "--port", "5999"])
    assert result.exit_code == 1
    assert "Refusing to serve on 0.0.0.0 without a token" in result.output
    assert "Traceback" not in result.output


# --- the token ------------------------------------------------------------------------


def test_without_the_token_every_api_call_is_401(guarded: TestClient) -> None:
    for path in ("/api/queue", "/api/agent/status", "/openapi.json", "/docs", "/stats"):
        response = guarded.get(path)
        assert response.status_code == 401, path
        assert response.headers["www-authenticate"] == "Bearer"
    assert guarded.post("/triage", json={"ticket_text": "hi"}).status_code == 401
    assert guarded.post("/api/tickets", json={"id": "T-9", "body": "x"}).status_code == 401
    wrong = {"authorization": "Bearer not-the-token"}
    assert guarded.get("/api/queue", headers=wrong).status_code == 401
    assert guarded.get("/api/queue", headers={"authorization": TOKEN}).status_code == 401


def test_pages_send_a_browser_to_the_login_form(guarded: TestClient) -> None:
    response = guarded.get("/review?ticket=T-2001", headers=HTML)
    assert response.status_code == 303
    assert response.headers["location"] == "/login?next=%2Freview%3Fticket%3DT-2001"
    assert guarded.get("/tickets/T-2001", headers=HTML).status_code == 303
    assert guarded.get("/monitor/live").status_code == 401  # a script's fetch, not a page


def test_health_and_login_stay_open(guarded: TestClient) -> None:
    assert guarded.get("/health").json() == {"status": "ok"}
    login = guarded.get("/login", headers=HTML)
    assert login.status_code == 200 and 'type="password"' in login.text
    assert guarded.get("/static/app.css").status_code == 200


def test_the_bearer_header_opens_everything(guarded: TestClient) -> None:
    bearer = {"authorization": f"Bearer {TOKEN}"}
    assert guarded.get("/api/queue", headers=bearer).status_code == 200
    assert guarded.get("/", headers=bearer).status_code == 200
    queue = guarded.get("/api/queue", headers=bearer).json()
    ticket = queue[0]["ticket_id"]
    # a bearer client needs no CSRF token, even posting a form
    response = guarded.post(f"/api/review/{ticket}/approve", headers=bearer)
    assert response.status_code == 200 and response.json()["status"] == "approved"


def test_login_sets_an_httponly_samesite_cookie_that_is_not_the_token(
    guarded: TestClient,
) -> None:
    page = guarded.get("/login?next=/stats", headers=HTML).text
    token = csrf_of(page)
    bad = guarded.post("/login", data={"token": "nope", "next": "/stats", "csrf_token": token})
    assert bad.status_code == 401 and "not the token" in bad.text
    no_csrf = guarded.post("/login", data={"token": TOKEN, "next": "/stats"})
    assert no_csrf.status_code == 403
    good = guarded.post("/login", data={"token": TOKEN, "next": "/stats", "csrf_token": token})
    assert good.status_code == 303 and good.headers["location"] == "/stats"
    cookie = good.headers["set-cookie"]
    assert cookie.startswith(f"{AUTH_COOKIE}=")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
    assert TOKEN not in cookie
    assert guarded.get("/stats", headers=HTML).status_code == 200
    assert guarded.get("/api/queue").status_code == 200
    logged_in = guarded.get("/", headers=HTML).text
    copied = guarded.cookies.get(AUTH_COOKIE)
    assert copied
    out = guarded.post("/logout", data={"csrf_token": csrf_of(logged_in)})
    assert out.status_code == 303
    assert guarded.get("/api/queue").status_code == 401
    # the cookie is revoked on the server, not only deleted: a copy of it opens nothing
    replay = guarded.get("/api/queue", headers={"cookie": f"{AUTH_COOKIE}={copied}"})
    assert replay.status_code == 401


def test_wrong_tokens_are_slowed_down_per_client(guarded: TestClient) -> None:
    token = csrf_of(guarded.get("/login", headers=HTML).text)
    statuses = []
    for _ in range(300):
        response = guarded.post("/login", data={"token": "x" * 40, "csrf_token": token})
        statuses.append(response.status_code)
    # a few honest mistakes are answered (the sixth starts a lock-out); then it waits
    assert statuses[:6] == [401] * 6 and statuses[6] == 429
    assert statuses.count(401) <= 9 and statuses.count(429) >= 291
    refused = guarded.post("/login", data={"token": TOKEN, "csrf_token": token})
    assert refused.status_code == 429  # even the right token waits out the lock-out
    assert int(refused.headers["retry-after"]) >= 1 and "try again in" in refused.text


def test_login_backoff_doubles_and_a_success_forgets() -> None:
    now = [1000.0]
    backoff = LoginBackoff(free=2, base=1.0, clock=lambda: now[0])
    for _ in range(2):
        backoff.failed("c")
    assert backoff.retry_after("c") is None
    waits = []
    for _ in range(4):
        backoff.failed("c")
        waits.append(backoff.retry_after("c"))
        now[0] += 100
    assert waits == [1.0, 2.0, 4.0, 8.0]
    assert backoff.retry_after("other") is None
    backoff.succeeded("c")
    assert backoff.retry_after("c") is None


def test_triage_is_rate_limited_with_retry_after(settings: Settings, demo_store: Store) -> None:
    limits = Limits(triage=RateLimiter(per_minute=6, burst=2))
    app = create_app(settings, demo_store, work=False, limits=limits)
    with TestClient(app, base_url=BASE) as client:
        body = {"ticket_text": "What is the rate limit on the Growth plan?"}
        assert [client.post("/triage", json=body).status_code for _ in range(2)] == [200, 200]
        refused = client.post("/triage", json=body)
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
        assert "Too many triage requests" in refused.json()["detail"]


def test_rate_limiter_refills_and_backs_off() -> None:
    now = [0.0]
    limiter = RateLimiter(per_minute=60, burst=2, clock=lambda: now[0])
    assert limiter.check("c") is None and limiter.check("c") is None
    first = limiter.check("c")
    assert first == pytest.approx(1.0)
    second = limiter.check("c")  # asking again while refused doubles the wait
    assert second is not None and second > first
    assert limiter.check("other") is None
    now[0] += 60
    assert limiter.check("c") is None


def test_login_cookies_expire_and_cannot_be_forged() -> None:
    security = Security.from_settings(SecretStr(TOKEN))
    now = time.time()
    cookie = security.issue_login(now)
    assert security.login_ok(cookie, now)
    assert not security.login_ok(cookie, now + AUTH_MAX_AGE + 1)
    expires, login_id, signature = cookie.split(".")
    assert not security.login_ok(f"{int(expires) + 3600}.{login_id}.{signature}", now)
    assert not security.login_ok(f"{expires}.{login_id}.{'0' * len(signature)}", now)
    assert not security.login_ok(f"{expires}.{'1' * len(login_id)}.{signature}", now)
    assert not security.login_ok("garbage", now)
    other = Security.from_settings(SecretStr(TOKEN + "-other"))
    assert not other.login_ok(cookie, now)


def test_with_a_token_any_host_name_is_served(guarded: TestClient) -> None:
    bearer = {"authorization": f"Bearer {TOKEN}", "host": "support.example.com"}
    assert guarded.get("/api/queue", headers=bearer).status_code == 200


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("/review?ticket=T-1", "/review?ticket=T-1"),
        ("//evil.example/x", "/"),
        ("/\\evil.example", "/"),
        ("https://evil.example", "/"),
        ("javascript:alert(1)", "/"),
    ],
)
def test_login_only_sends_you_back_to_this_site(target: str, expected: str) -> None:
    assert safe_next(target) == expected


# --- CSRF on the review forms ---------------------------------------------------------


def test_review_form_with_a_bad_csrf_token_is_403_and_changes_nothing(
    open_client: TestClient, demo_store: Store
) -> None:
    page = open_client.get("/review").text
    ticket = re.search(r'data-ticket="([^"]+)"', page)
    assert ticket
    tid = ticket.group(1)
    for token in ("", "0" * 64, csrf_of(page)[:-1] + "x"):
        response = open_client.post(f"/review/{tid}/approve", data={"csrf_token": token})
        assert response.status_code == 403
    assert demo_store.ticket_status(tid).value == "pending_review"


def test_review_forms_approve_amend_reject_and_bring_up_the_next_draft(
    open_client: TestClient, demo_store: Store
) -> None:
    page = open_client.get("/review").text
    token = csrf_of(page)
    queue = re.findall(
        r'<li(?: class="selected" aria-current="true")?>\s*<a href="/review\?ticket=([^"]+)"', page
    )
    first, second, third = queue[:3]
    approved = open_client.post(
        f"/review/{first}/approve",
        data={"csrf_token": token, "reviewer": "sam"},
        follow_redirects=False,
    )
    assert approved.status_code == 303
    assert approved.headers["location"] == f"/review?done={first}&decision=approve&ticket={second}"
    landing = open_client.get(approved.headers["location"]).text
    assert f'data-ticket="{second}"' in landing
    assert f"{first} approved: added to the knowledge base as AR-{first}" in landing

    amended = open_client.post(
        f"/review/{second}/amend", data={"csrf_token": token, "text": "Final words."}
    )
    assert amended.status_code == 200 and f"{second} amended: added to" in amended.text
    empty = open_client.post(f"/review/{third}/reject", data={"csrf_token": token, "reason": " "})
    assert empty.status_code == 400 and "needs a reason" in empty.text
    rejected = open_client.post(
        f"/review/{third}/reject", data={"csrf_token": token, "reason": "off topic"}
    )
    assert rejected.status_code == 200
    again = open_client.post(f"/review/{third}/reject", data={"csrf_token": token, "reason": "x"})
    assert again.status_code == 409

    statuses = {t: demo_store.ticket_status(t).value for t in (first, second, third)}
    assert statuses == {first: "approved", second: "amended", third: "handed_off"}
    assert demo_store.reviews(first)[0]["reviewer"] == "sam"
    assert demo_store.reviews(second)[0]["reviewer"] == "web"
    assert demo_store.reviews(second)[0]["final_text"] == "Final words."
