"""What a scheduler run is held to and what it reports: caps, the summary, a live snapshot."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from supportagent.domain import Outcome

#: Why a run stopped, as the summary says it (the caps name themselves: ``max_tickets``,
#: ``max_api_calls``, ``max_tokens``).
INBOX_EMPTY = "inbox empty"
STOPPED = "stopped"
ERRORS = "errors"
CAPS = frozenset({"max_tickets", "max_api_calls", "max_tokens"})

#: Exit codes of the commands that run the inbox (`schedule`, `worker`, `inbox`): done (or
#: stopped on request), tickets failed, stopped by a cap with tickets still waiting.
EXIT_DONE, EXIT_ERRORS, EXIT_CAPPED = 0, 1, 3


def exit_code(stopped_by: str, *, failed: bool = False) -> int:
    """The exit code of a run that stopped for ``stopped_by``; ``failed``: a ticket failed on
    the way (README, CLI reference). Failures win over a cap."""
    if stopped_by == ERRORS or failed:
        return EXIT_ERRORS
    return EXIT_CAPPED if stopped_by in CAPS else EXIT_DONE


@dataclass(frozen=True, slots=True)
class Caps:
    """Hard limits for one run (None = no limit).

    Calls and tokens are enforced by the engine's Budget, which refuses a call before it is
    sent; these two fields say what the caps are, for the live view and the summary.
    """

    max_tickets: int | None = None
    max_api_calls: int | None = None
    max_tokens: int | None = None


@dataclass
class RunSummary:
    processed: int = 0
    outcomes: list[Outcome] = field(default_factory=list)
    stopped_by: str = INBOX_EMPTY
    by_status: Counter[str] = field(default_factory=Counter)
    #: Tickets given back unfinished (a cap or a shutdown stopped them); the next run redoes them.
    handed_back: list[str] = field(default_factory=list)
    #: Tickets whose lease expired and that another worker took over.
    lost: list[str] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)
    #: Model requests sent, retries included (what ``--max-api-calls`` caps), and the retries.
    api_calls: int = 0
    retries: int = 0
    #: Tokens as sent: prompt and completion, a timed-out request's prompt estimated.
    tokens: int = 0
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class InFlight:
    ticket_id: str
    attempt: int
    stage: str
    seconds: float


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A consistent copy of a run's state, for a live view."""

    in_flight: tuple[InFlight, ...]
    processed: int
    by_status: dict[str, int]
    handed_back: int
    lost: int
    errors: int
    caps: Caps
    #: Model requests sent so far, retries included.
    api_calls: int
    tokens: int
    held_elsewhere: int
    stopping: str | None
    seconds: float
