"""When to try a model call again: exponential backoff with jitter, honouring Retry-After.

Pure functions and a small policy object; the client decides what is retryable (429, 5xx,
timeouts) and calls :meth:`RetryPolicy.next_delay` to learn how long to wait, or that it must
give up because the count or the total time is spent.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """At most ``max_retries`` retries, and never past ``max_total_seconds`` since the first try."""

    max_retries: int = 4
    base_delay: float = 0.5
    max_delay: float = 20.0
    max_total_seconds: float = 90.0

    def backoff(self, retry: int, rng: random.Random | None = None) -> float:
        """Full-jitter exponential backoff for retry number ``retry`` (1-based)."""
        ceiling = min(self.max_delay, self.base_delay * 2 ** max(retry - 1, 0))
        return (rng or random).uniform(ceiling / 2, ceiling)

    def next_delay(
        self,
        retry: int,
        elapsed: float,
        retry_after: float | None = None,
        rng: random.Random | None = None,
    ) -> float | None:
        """Seconds to wait before retry ``retry``, or None when the policy says stop.

        A server's Retry-After wins over the backoff (it knows when it will accept us again),
        but a wait that would pass the total time budget means giving up now, not sleeping
        through it first.
        """
        if retry > self.max_retries:
            return None
        delay = self.backoff(retry, rng)
        if retry_after is not None:
            delay = max(retry_after, 0.0) + delay * 0.1  # a little jitter so clients spread out
        if elapsed + delay > self.max_total_seconds:
            return None
        return delay


def retry_after_seconds(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """Seconds the server asks us to wait: ``retry-after-ms``, or ``Retry-After`` as seconds or
    as an HTTP date. None when absent or unreadable."""
    lowered = {k.lower(): v for k, v in headers.items()}
    if (ms := lowered.get("retry-after-ms")) is not None:
        try:
            return max(float(ms) / 1000, 0.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)
