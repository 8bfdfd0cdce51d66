"""Counts model calls and tokens per ticket and per run; refuses the call that would pass a cap.

A call is *reserved* before it is sent: the call is counted and its tokens are estimated
(prompt characters / 3, which over-counts English, plus the call's completion limit). If the
reservation would pass a cap, the call is refused and nothing is sent. When the reply arrives
the estimate is replaced by the usage the server reports. Reservations make the caps hold
when several tickets run at once.

What a refusal means for the ticket:

* a **per-ticket** cap: this ticket costs more than it should; it is escalated with the reason
  ``budget_exhausted`` (a :class:`TicketBudgetExhausted`, which is a ``ModelError``);
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
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True)
class Reservation:
    ticket_id: str
    estimate: int


def estimate_tokens(text_chars: int, messages: int = 1) -> int:
    """A generous estimate of a prompt's tokens from its length, before any tokenizer runs."""
    return math.ceil(text_chars / CHARS_PER_TOKEN) + 4 * messages


class Budget:
    """Caps (None = no cap) and counters for one run, shared by every ticket of the run."""

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
            u = self._tickets.get(ticket_id, Usage())
            return Usage(u.calls, u.prompt_tokens, u.completion_tokens)

    @property
    def exhausted(self) -> bool:
        """True once the run's call or token cap is reached: a scheduler should stop claiming."""
        with self._lock:
            return (self.max_calls is not None and self.run.calls >= self.max_calls) or (
                self.max_tokens is not None and self.run.tokens >= self.max_tokens
            )

    def reserve(self, ticket_id: str, prompt_tokens: int, completion_limit: int) -> Reservation:
        """Count one call for ``ticket_id`` before it is sent, or refuse it."""
        estimate = prompt_tokens + completion_limit
        with self._lock:
            mine = self._tickets.setdefault(ticket_id, Usage())
            mine_reserved = self._ticket_reserved.get(ticket_id, 0)
            if self.max_calls is not None and self.run.calls + 1 > self.max_calls:
                raise RunBudgetExhausted(
                    f"The run's cap of {self.max_calls} model calls is spent; ticket {ticket_id} "
                    "stays in the inbox for the next run (raise --max-api-calls to go on)."
                )
            if self.max_tokens is not None and (
                self.run.tokens + self._reserved + estimate > self.max_tokens
            ):
                raise RunBudgetExhausted(
                    f"The next call (about {estimate} tokens) would pass the run's cap of "
                    f"{self.max_tokens} tokens ({self.run.tokens} spent); ticket {ticket_id} "
                    "stays in the inbox for the next run (raise --max-tokens to go on)."
                )
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
            self.run.calls += 1
            mine.calls += 1
            self._reserved += estimate
            self._ticket_reserved[ticket_id] = mine_reserved + estimate
        return Reservation(ticket_id, estimate)

    def settle(self, reservation: Reservation, prompt_tokens: int, completion_tokens: int) -> None:
        """Replace a reservation's estimate with what the call really used (0, 0 if it failed)."""
        with self._lock:
            self._reserved -= reservation.estimate
            self._ticket_reserved[reservation.ticket_id] -= reservation.estimate
            mine = self._tickets.setdefault(reservation.ticket_id, Usage())
            for usage in (self.run, mine):
                usage.prompt_tokens += prompt_tokens
                usage.completion_tokens += completion_tokens
