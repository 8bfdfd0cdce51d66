"""Who may use the web app, and how: bind address, token, cookies, CSRF, hosts and body size.

One pure ASGI middleware (:class:`Guard`) sees every request before the routes do. It checks
the Host header, the token (bearer header or login cookie), the origin of state-changing
requests and the size of the body, and it adds the security headers to every response. The
CSRF token of a form is checked by :func:`require_csrf`, a dependency of every state-changing
route, because only a route has the parsed form.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import itertools
import json
import math
import secrets
import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import quote, urlsplit

from fastapi import HTTPException, Request
from pydantic import SecretStr
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from supportagent.errors import UserError

AUTH_COOKIE = "sa_auth"
SESSION_COOKIE = "sa_session"
#: Largest request body accepted, in bytes; a ticket is text, never this long.
MAX_BODY_BYTES = 256 * 1024
#: How long a login lasts, in seconds.
AUTH_MAX_AGE = 12 * 3600
MIN_TOKEN_LENGTH = 32
#: Least estimated entropy of a token, in bits (its length times the Shannon entropy of its
#: characters); 32 random hex digits carry about 115 by this estimate, 43 from
#: ``secrets.token_urlsafe()`` about 200.
MIN_TOKEN_BITS = 96
#: Logins remembered at most (each is a few dozen bytes); the oldest are dropped first.
MAX_SESSIONS = 10_000
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: Reachable without the token: the liveness probe, the login form and its static files.
OPEN_PATHS = frozenset({"/health", "/login", "/static/app.css", "/static/app.js"})
LOOPBACK_HOST_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and any loopback address (127.0.0.0/8, ::1)."""
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


_MAKE_ONE = "for example from `python -c 'import secrets; print(secrets.token_urlsafe())'`"


def token_problem(value: str) -> str | None:
    """Why ``value`` is too weak to guard the app, or None when it will do."""
    if len(value) < MIN_TOKEN_LENGTH:
        return f"it is {len(value)} characters; use at least {MIN_TOKEN_LENGTH}"
    counts = Counter(value)
    per_char = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    if per_char * len(value) < MIN_TOKEN_BITS or len(counts) < 8:
        return "its characters repeat too much to be random"
    if any(value == (value[:p] * (len(value) // p + 1))[: len(value)] for p in range(1, 17)):
        return "it repeats a short pattern"
    steps = sum(1 for a, b in itertools.pairwise(value) if abs(ord(a) - ord(b)) <= 1)
    if steps > len(value) // 2:
        return "it runs along the keyboard or the alphabet"
    return None


def check_token(token: SecretStr | None) -> None:
    """Refuse a token that is short or guessable, with what to use instead."""
    if token is None:
        return
    problem = token_problem(token.get_secret_value())
    if problem:
        raise UserError(
            f"SUPPORTAGENT_TOKEN is too weak ({problem}): use at least {MIN_TOKEN_LENGTH} "
            f"random characters, {_MAKE_ONE}."
        )


def check_bind(host: str, token: SecretStr | None) -> None:
    """Refuse to serve beyond loopback without a token, and refuse a weak token."""
    check_token(token)
    if not is_loopback(host) and token is None:
        raise UserError(
            f"Refusing to serve on {host} without a token: anyone who can reach it could read "
            "tickets and approve drafts. Set SUPPORTAGENT_TOKEN, or bind to 127.0.0.1."
        )


def _sign(key: bytes, message: str) -> str:
    return hmac.new(key, message.encode(), hashlib.sha256).hexdigest()


@dataclass
class Security:
    """The secrets of one running app: the token (if any), a per-process CSRF key, and the
    logins in force (a login is revoked by logging out; a restart logs everyone out)."""

    token: str | None
    allowed_hosts: frozenset[str] | None
    csrf_key: bytes = field(default_factory=lambda: secrets.token_bytes(32))
    #: Login id → expiry (seconds since the epoch).
    sessions: dict[str, float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def from_settings(
        cls, token: SecretStr | None, allowed_hosts: Iterable[str] | None = None
    ) -> Security:
        """Without a token only loopback host names are served (no DNS rebinding).

        A weak token is refused (UserError), whoever starts the app."""
        check_token(token)
        if allowed_hosts is not None:
            hosts: frozenset[str] | None = frozenset(h.lower() for h in allowed_hosts)
        else:
            hosts = LOOPBACK_HOST_NAMES if token is None else None
        return cls(token.get_secret_value() if token is not None else None, hosts)

    def bearer_ok(self, authorization: str | None) -> bool:
        if self.token is None or not authorization:
            return False
        scheme, _, given = authorization.partition(" ")
        if scheme.lower() != "bearer":
            return False
        return hmac.compare_digest(given.strip().encode(), self.token.encode())

    def issue_login(self, now: float | None = None) -> str:
        """A login cookie value: expiry, login id and their signature; never the token."""
        assert self.token is not None
        at = now if now is not None else time.time()
        expires = int(at + AUTH_MAX_AGE)
        login_id = secrets.token_hex(16)
        with self._lock:
            for old in [k for k, v in self.sessions.items() if v < at]:
                del self.sessions[old]
            while len(self.sessions) >= MAX_SESSIONS:
                del self.sessions[next(iter(self.sessions))]
            self.sessions[login_id] = expires
        signature = _sign(self.token.encode(), f"login:{expires}:{login_id}")
        return f"{expires}.{login_id}.{signature}"

    def _login_id(self, cookie: str | None, now: float | None = None) -> str | None:
        if self.token is None or not cookie:
            return None
        expires, login_id, signature = [*cookie.split("."), "", ""][:3]
        if not expires.isdigit() or int(expires) < (now if now is not None else time.time()):
            return None
        expected = _sign(self.token.encode(), f"login:{expires}:{login_id}")
        if not hmac.compare_digest(signature.encode(), expected.encode()):
            return None
        return login_id

    def login_ok(self, cookie: str | None, now: float | None = None) -> bool:
        """A cookie this process issued, signed, unexpired, and not logged out."""
        login_id = self._login_id(cookie, now)
        with self._lock:
            return login_id is not None and login_id in self.sessions

    def revoke(self, cookie: str | None) -> None:
        """Log out: the cookie no longer opens anything, even if it was copied."""
        login_id = self._login_id(cookie)
        if login_id is not None:
            with self._lock:
                self.sessions.pop(login_id, None)

    def token_ok(self, given: str) -> bool:
        return self.token is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def csrf_token(self, session_id: str) -> str:
        return _sign(self.csrf_key, f"csrf:{session_id}")

    def csrf_ok(self, session_id: str, given: str | None) -> bool:
        return bool(given) and hmac.compare_digest(
            str(given).encode(), self.csrf_token(session_id).encode()
        )

    def host_ok(self, host_header: str | None) -> bool:
        if self.allowed_hosts is None:
            return True
        if not host_header:
            return False
        host = urlsplit(f"//{host_header}").hostname or ""
        return host.lower() in self.allowed_hosts


async def require_csrf(request: Request) -> None:
    """Dependency for state-changing routes: a form must carry the session's CSRF token.

    Exempt: requests that authenticate with the bearer header (a browser never adds it on its
    own) and ``application/json`` requests (a browser cannot send one cross-site without a
    preflight, which this app never grants; the Guard also rejects a foreign Origin).
    """
    if request.method in SAFE_METHODS or request.scope.get("supportagent.auth") == "bearer":
        return
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type == "application/json":
        return
    given = request.headers.get("x-csrf-token")
    if given is None and media_type in {
        "application/x-www-form-urlencoded",
        "multipart/form-data",
    }:
        value = (await request.form()).get("csrf_token")
        given = value if isinstance(value, str) else None
    security: Security = request.app.state.security
    if not security.csrf_ok(request.scope["supportagent.session"], given):
        raise HTTPException(
            403,
            "Missing or stale CSRF token: reload the page and try again "
            "(API clients: send Content-Type: application/json).",
        )


class Guard:
    """ASGI middleware: host, token, origin and body-size checks, session cookie, headers."""

    def __init__(self, app: ASGIApp, security: Security, max_body: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.security = security
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        cookies = _cookies(headers.get("cookie"))
        session = cookies.get(SESSION_COOKIE, "")
        new_session = not (32 <= len(session) <= 64 and session.isalnum())
        if new_session:
            session = secrets.token_hex(16)
        scope["supportagent.session"] = session
        refusal = self._refusal(scope, headers, cookies)
        if refusal is not None:
            await _respond(send, *refusal)
            return
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > self.max_body:
            await _respond(send, 413, self._too_large())
            return

        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body:
                    raise HTTPException(413, self._too_large()["detail"])
            return message

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                out = MutableHeaders(scope=message)
                out.setdefault("x-content-type-options", "nosniff")
                out.setdefault("referrer-policy", "same-origin")
                out.setdefault("x-frame-options", "DENY")
                out.setdefault("content-security-policy", CSP)
                if new_session:
                    out.append(
                        "set-cookie",
                        f"{SESSION_COOKIE}={session}; Path=/; HttpOnly; SameSite=Strict",
                    )
            await send(message)

        await self.app(scope, limited_receive, send_with_headers)

    def _refusal(
        self, scope: Scope, headers: Headers, cookies: dict[str, str]
    ) -> tuple[int, dict[str, Any], dict[str, str]] | None:
        """Why this request may not go on (status, body, headers), or None."""
        if not self.security.host_ok(headers.get("host")):
            return 400, {"detail": "Unknown Host header."}, {}
        method, path = scope["method"], scope["path"]
        if method not in SAFE_METHODS:
            if headers.get("sec-fetch-site") == "cross-site":
                return 403, {"detail": "Cross-site requests may not change anything."}, {}
            origin = headers.get("origin")
            if origin is not None and urlsplit(origin).netloc != headers.get("host"):
                return 403, {"detail": "Cross-origin requests may not change anything."}, {}
        if self.security.token is None:
            return None
        if self.security.bearer_ok(headers.get("authorization")):
            scope["supportagent.auth"] = "bearer"
            return None
        if self.security.login_ok(cookies.get(AUTH_COOKIE)):
            scope["supportagent.auth"] = "cookie"
            return None
        if path in OPEN_PATHS:
            return None
        wants_page = method == "GET" and "text/html" in headers.get("accept", "")
        if wants_page and not path.startswith("/api/"):
            query = scope["query_string"].decode("latin-1")
            target = f"{path}?{query}" if query else path
            return 303, {}, {"location": f"/login?next={quote(target, safe='')}"}
        detail = "Authentication required: send 'Authorization: Bearer <SUPPORTAGENT_TOKEN>'."
        return 401, {"detail": detail}, {"www-authenticate": "Bearer"}

    def _too_large(self) -> dict[str, Any]:
        return {"detail": f"Request body too large: at most {self.max_body} bytes."}


def _cookies(header: str | None) -> dict[str, str]:
    if not header:
        return {}
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except CookieError:  # a malformed Cookie header is the client's problem; ignore it
        return {}
    return {name: morsel.value for name, morsel in jar.items()}


async def _respond(
    send: Send, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
) -> None:
    payload = json.dumps(body).encode() if body else b""
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    raw += [(k.encode(), v.encode("latin-1")) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": payload})
