"""Counts model requests and tokens per ticket and per run; refuses the one that would pass a cap.

A *call* is one question to the model (classify this ticket); a *request* is one HTTP request
sent for it. Retries make a call send more than one request, and each request counts against
the run's caps, because each one may be billed (a timed-out request is usually computed all
the same). The caps hold every request sent, retries included, on every path.

A call is *reserved* before its first request is sent: the request is counted and its tokens
are estimated (prompt characters / 3, which over-counts English, plus the call's completion
limit). Each retry reserves one more request. If a reservation would pass a cap, nothing is
sent. When the reply arrives the estimate is replaced by the usage the server reports; a
request that timed out is counted with its estimated prompt tokens, since the server was
probably working on it. Reservations make the caps hold when several tickets run at once.

What a refusal means for the ticket:

* a **per-ticket** cap: this ticket costs more than it should; it is escalated with the reason
  ``budget_exhausted`` (a :class:`TicketBudgetExhausted`, which is a ``ModelError``); retries
  do not count here (a flaky endpoint is not the ticket's fault);
* the **run** cap: nothing is wrong with the ticket; the run stops and the ticket stays in the
  inbox for the next run (a :class:`RunBudgetExhausted`, which is a ``UserError``: one line on
  the command line, exit code 1).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

from supportagent.errors import ModelError, UserError

#: Default cap on model calls for one ticket: classify, two reformulations, three drafts and
#: three checks, each with its repair retry, would be 18; a ticket that needs 12 needs a human.
DEFAULT_TICKET_CALLS = 12
#: Characters per token assumed when estimating a prompt before it is sent (deliberately low).
CHARS_PER_TOKEN = 3


class TicketBudgetExhausted(ModelError):
    """The ticket's own cap would be passed; the pipeline escalates it (``budget_exhausted``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, reason_code="budget_exhausted")


class RunBudgetExhausted(UserError):
    """The run's cap would be passed; the run stops and the ticket waits for the next one."""

    reason_code = "budget_exhausted"


@dataclass(slots=True)
class Usage:
    """What was spent: calls asked, requests sent (retries included), tokens as sent."""

    calls: int = 0
    requests: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: Prompt tokens counted for requests that timed out, estimated from their length.
    estimated_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def copy(self) -> Usage:
        return Usage(
            self.calls,
            self.requests,
            self.retries,
            self.prompt_tokens,
            self.completion_tokens,
            self.estimated_tokens,
        )

    def describe(self) -> str:
        """``12 requests (3 retries) for 9 calls; tokens: 8,100 prompt + 420 completion``."""
        retries = f" ({self.retries} retr{'y' if self.retries == 1 else 'ies'})"
        guess = (
            f", of which about {self.estimated_tokens:,} for requests that timed out"
            if self.estimated_tokens
            else ""
        )
        return (
            f"model requests: {self.requests}{retries if self.retries else ''} for "
            f"{self.calls} calls; tokens: {self.prompt_tokens:,} prompt + "
            f"{self.completion_tokens:,} completion{guess}"
        )


@dataclass(slots=True)
class Reservation:
    """One call's claim on the budget: the requests it sent and the tokens still estimated."""

    ticket_id: str
    estimate: int
    prompt_estimate: int = 0
    requests: int = 1


def estimate_tokens(text_chars: int, messages: int = 1) -> int:
    """A generous estimate of a prompt's tokens from its length, before any tokenizer runs."""
    return math.ceil(text_chars / CHARS_PER_TOKEN) + 4 * messages


class Budget:
    """Caps (None = no cap) and counters for one run, shared by every ticket of the run.

    ``max_calls`` caps the run's *requests* (``--max-api-calls``): every one sent counts.
    """

    def __init__(
        self,
        max_calls: int | None = None,
        max_tokens: int | None = None,
        *,
        ticket_max_calls: int | None = DEFAULT_TICKET_CALLS,
        ticket_max_tokens: int | None = None,
    ) -> None:
        self.max_calls, self.max_tokens = max_calls, max_tokens
        self.ticket_max_calls, self.ticket_max_tokens = ticket_max_calls, ticket_max_tokens
        self.run = Usage()
        self._tickets: dict[str, Usage] = {}
        self._reserved = 0
        self._ticket_reserved: dict[str, int] = {}
        self._lock = threading.Lock()

    def ticket(self, ticket_id: str) -> Usage:
        """What ``ticket_id`` has spent in this run (a copy)."""
        with self._lock:
            return self._tickets.get(ticket_id, Usage()).copy()

    def used(self) -> Usage:
        """What the run has spent so far (a consistent copy)."""
        with self._lock:
            return self.run.copy()

    @property
    def exhausted(self) -> bool:
        """True once the run's request or token cap is reached: a scheduler should stop."""
        with self._lock:
            return self._cap_reached() is not None

    def cap_reached(self) -> str | None:
        """``max_api_calls`` or ``max_tokens`` once that cap is reached, else None."""
        with self._lock:
            return self._cap_reached()

    def _cap_reached(self) -> str | None:
        if self.max_calls is not None and self.run.requests >= self.max_calls:
            return "max_api_calls"
        if self.max_tokens is not None and self.run.tokens >= self.max_tokens:
            return "max_tokens"
        return None

    def reserve(self, ticket_id: str, prompt_tokens: int, completion_limit: int) -> Reservation:
        """Count one call, and its first request, for ``ticket_id`` before it is sent."""
        estimate = prompt_tokens + completion_limit
        with self._lock:
            mine = self._tickets.setdefault(ticket_id, Usage())
            mine_reserved = self._ticket_reserved.get(ticket_id, 0)
            self._check_run(ticket_id, estimate)
            if self.ticket_max_calls is not None and mine.calls + 1 > self.ticket_max_calls:
                raise TicketBudgetExhausted(
                    f"Ticket {ticket_id} has used its {self.ticket_max_calls} model calls."
                )
            if self.ticket_max_tokens is not None and (
                mine.tokens + mine_reserved + estimate > self.ticket_max_tokens
            ):
                raise TicketBudgetExhausted(
                    f"The next call (about {estimate} tokens) would pass ticket {ticket_id}'s "
                    f"cap of {self.ticket_max_tokens} tokens."
                )
            for usage in (self.run, mine):
                usage.calls += 1
                usage.requests += 1
            self._reserved += estimate
            self._ticket_reserved[ticket_id] = mine_reserved + estimate
        return Reservation(ticket_id, estimate, prompt_tokens)

    def retry(self, reservation: Reservation) -> None:
        """Count one more request for a reserved call, or refuse it (RunBudgetExhausted).

        The tokens already reserved cover the new request: only one of them can succeed, and
        one that timed out is settled on the spot by :meth:`timed_out`.
        """
        with self._lock:
            self._check_run(reservation.ticket_id, 0, retry=True)
            mine = self._tickets.setdefault(reservation.ticket_id, Usage())
            for usage in (self.run, mine):
                usage.requests += 1
                usage.retries += 1
            reservation.requests += 1

    def timed_out(self, reservation: Reservation) -> None:
        """A request of this call timed out: count its prompt, which was likely computed."""
        with self._lock:
            mine = self._tickets.setdefault(reservation.ticket_id, Usage())
            for usage in (self.run, mine):
                usage.prompt_tokens += reservation.prompt_estimate
                usage.estimated_tokens += reservation.prompt_estimate

    def settle(self, reservation: Reservation, prompt_tokens: int, completion_tokens: int) -> None:
        """Replace a reservation's estimate with what the call really used (0, 0 if it failed)."""
        with self._lock:
            self._reserved -= reservation.estimate
            self._ticket_reserved[reservation.ticket_id] -= reservation.estimate
            mine = self._tickets.setdefault(reservation.ticket_id, Usage())
            for usage in (self.run, mine):
                usage.prompt_tokens += prompt_tokens
                usage.completion_tokens += completion_tokens

    def _check_run(self, ticket_id: str, estimate: int, *, retry: bool = False) -> None:
        what = "retry" if retry else "call"
        if self.max_calls is not None and self.run.requests + 1 > self.max_calls:
            raise RunBudgetExhausted(
                f"The run's cap of {self.max_calls} model requests (retries included) is spent "
                f"before the next {what}; ticket {ticket_id} stays in the inbox for the next "
                "run (raise --max-api-calls to go on)."
            )
        if self.max_tokens is not None and (
            self.run.tokens + self._reserved + estimate > self.max_tokens
        ):
            raise RunBudgetExhausted(
                f"The next {what} (about {estimate} tokens) would pass the run's cap of "
                f"{self.max_tokens} tokens ({self.run.tokens} spent); ticket {ticket_id} "
                "stays in the inbox for the next run (raise --max-tokens to go on)."
            )
