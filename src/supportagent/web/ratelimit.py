"""Per-client rate limits with backoff: on logging in, and on the costly ``POST /triage``.

Pure bookkeeping over a clock, so the arithmetic is tested without waiting. A client is its
address as the server sees it (behind a reverse proxy, that is the proxy: limit there too).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi import HTTPException, Request

#: Clients remembered at most; the least recently seen are forgotten first.
MAX_CLIENTS = 10_000


@dataclass
class _Bucket:
    tokens: float
    seen: float
    strikes: int = 0
    blocked_until: float = 0.0


@dataclass
class RateLimiter:
    """A token bucket per client: ``burst`` requests at once, then ``per_minute``.

    A refused request doubles the client's wait (``2**strikes`` times the time to the next
    token, at most ``max_wait`` seconds), so a client that keeps hammering waits longer; one
    allowed request after the wait clears the strikes.
    """

    per_minute: float
    burst: int
    max_wait: float = 900.0
    clock: Callable[[], float] = time.monotonic
    _clients: dict[str, _Bucket] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def check(self, client: str) -> float | None:
        """None when ``client`` may go on (it spends a token), else seconds to wait."""
        now = self.clock()
        with self._lock:
            bucket = self._clients.pop(client, None) or _Bucket(float(self.burst), now)
            self._clients[client] = bucket  # most recently seen last
            _forget_oldest(self._clients)
            rate = self.per_minute / 60.0
            bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.seen) * rate)
            bucket.seen = now
            if now >= bucket.blocked_until and bucket.tokens >= 1.0:
                bucket.tokens -= 1.0
                bucket.strikes = 0
                return None
            bucket.strikes += 1
            until_token = (1.0 - bucket.tokens) / rate if bucket.tokens < 1.0 else 0.0
            wait = min(self.max_wait, max(until_token, 1.0) * 2 ** (bucket.strikes - 1))
            bucket.blocked_until = max(bucket.blocked_until, now + wait)
            return bucket.blocked_until - now


@dataclass
class _Failures:
    count: int
    last: float
    blocked_until: float = 0.0


@dataclass
class LoginBackoff:
    """Wrong tokens per client: ``free`` are answered, then each one doubles a lock-out.

    The lock-out after failure ``n > free`` is ``base * 2**(n - free - 1)`` seconds, at most
    ``max_wait``. A correct token, or ``window`` seconds without a failure, forgets them.
    """

    free: int = 5
    base: float = 1.0
    max_wait: float = 900.0
    window: float = 900.0
    clock: Callable[[], float] = time.monotonic
    _clients: dict[str, _Failures] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def retry_after(self, client: str) -> float | None:
        now = self.clock()
        with self._lock:
            entry = self._clients.get(client)
            if entry is None:
                return None
            if now - entry.last > self.window and now >= entry.blocked_until:
                del self._clients[client]
                return None
            return entry.blocked_until - now if now < entry.blocked_until else None

    def failed(self, client: str) -> None:
        now = self.clock()
        with self._lock:
            entry = self._clients.pop(client, None) or _Failures(0, now)
            if now - entry.last > self.window and now >= entry.blocked_until:
                entry = _Failures(0, now)
            entry.count += 1
            entry.last = now
            if entry.count > self.free:
                wait = min(self.max_wait, self.base * 2 ** (entry.count - self.free - 1))
                entry.blocked_until = now + wait
            self._clients[client] = entry
            _forget_oldest(self._clients)

    def succeeded(self, client: str) -> None:
        with self._lock:
            self._clients.pop(client, None)


def _forget_oldest(clients: dict[str, Any]) -> None:
    while len(clients) > MAX_CLIENTS:
        del clients[next(iter(clients))]


@dataclass(frozen=True)
class Limits:
    """The app's limits; tests may loosen or tighten them."""

    triage: RateLimiter = field(default_factory=lambda: RateLimiter(per_minute=30, burst=10))
    login: LoginBackoff = field(default_factory=LoginBackoff)


def client_of(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def too_many(seconds: float, what: str) -> HTTPException:
    wait = max(1, math.ceil(seconds))
    return HTTPException(
        429,
        f"Too many {what} from this address: try again in {wait} s.",
        headers={"retry-after": str(wait)},
    )


def limit_triage(request: Request) -> None:
    """Dependency of ``POST /triage``: 429 with Retry-After when the client is over its rate."""
    limits: Limits = request.app.state.limits
    wait = limits.triage.check(client_of(request))
    if wait is not None:
        raise too_many(wait, "triage requests")
