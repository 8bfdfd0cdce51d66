"""Reason codes in words: why the agent staged a ticket as it did, and what a person does next.

The table is data (``reasons.toml`` beside this module), shared by the web UI, the CLI and the
API. Routed codes say which team takes the ticket; the packaged routing table can be overridden
by a ``routing.toml`` in the data home, so a team names its own destinations without a code
change.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from supportagent import tomlcache
from supportagent.errors import UserError

ROUTING_FILE = "routing.toml"


@dataclass(frozen=True, slots=True)
class Reason:
    """One reason code explained."""

    code: str
    label: str
    sentence: str
    next_step: str
    #: Stays at the top of the escalation queue until someone takes the ticket.
    pinned: bool = False
    #: The team a routed ticket goes to, when the routing table names one.
    destination: str | None = None

    @property
    def known(self) -> bool:
        return bool(self.sentence)

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "label": self.label,
            "sentence": self.sentence,
            "next_step": self.next_step,
            "pinned": self.pinned,
            "destination": self.destination,
        }


@dataclass(frozen=True, slots=True)
class StatusText:
    status: str
    label: str
    sentence: str


@dataclass(frozen=True, slots=True)
class ReasonTable:
    reasons: Mapping[str, Mapping[str, Any]]
    statuses: Mapping[str, Mapping[str, Any]]
    routing: Mapping[str, str]


def _parse(text: str, source: str) -> ReasonTable:
    try:
        data = tomlcache.loads(text, source)  # tomllib.loads, kept between processes
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{source}: not valid TOML ({exc}).") from None
    reasons = data.get("reasons", {})
    for code, row in reasons.items():
        missing = [k for k in ("label", "sentence", "next_step") if not row.get(k)]
        if missing:
            raise UserError(f"{source}: reason {code!r} has no {', '.join(missing)}.")
    return ReasonTable(reasons, data.get("statuses", {}), _routing(data, source))


def _routing(data: Mapping[str, Any], source: str) -> dict[str, str]:
    routing = data.get("routing", {})
    if not isinstance(routing, dict) or not all(
        isinstance(v, str) and v.strip() for v in routing.values()
    ):
        raise UserError(f"{source}: [routing] maps reason codes to team names (strings).")
    return {str(k): v.strip() for k, v in routing.items()}


@functools.cache
def table() -> ReasonTable:
    """The packaged table (read once)."""
    text = (resources.files("supportagent") / "reasons.toml").read_text(encoding="utf-8")
    return _parse(text, "reasons.toml")


def load_routing(home: Path | None) -> dict[str, str]:
    """The routing table: the packaged one, updated by ``HOME/routing.toml`` when it exists."""
    routing = dict(table().routing)
    if home is None:
        return routing
    path = home / ROUTING_FILE
    if path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise UserError(f"Cannot read {path}: {exc.strerror}.") from None
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise UserError(f"{path}: not valid TOML ({exc}).") from None
        routing.update(_routing(data, str(path)))
    return routing


def explain(code: str | None, routing: Mapping[str, str] | None = None) -> Reason:
    """``code`` in words; an unknown code is shown as itself, never an error."""
    code = code or ""
    row = table().reasons.get(code)
    destinations = table().routing if routing is None else routing
    if row is None:
        return Reason(code, code.replace("_", " "), "", "", destination=destinations.get(code))
    return Reason(
        code=code,
        label=str(row["label"]),
        sentence=str(row["sentence"]),
        next_step=str(row["next_step"]),
        pinned=bool(row.get("pin", False)),
        destination=destinations.get(code),
    )


def describe_status(status: str) -> StatusText:
    row = table().statuses.get(status, {})
    return StatusText(status, str(row.get("label", status)), str(row.get("sentence", "")))


def pinned_codes() -> frozenset[str]:
    """Codes whose tickets stand out at the top of the queue until someone takes them."""
    return frozenset(code for code, row in table().reasons.items() if row.get("pin"))


def known_codes() -> frozenset[str]:
    return frozenset(table().reasons)


def one_line(code: str | None, routing: Mapping[str, str] | None = None) -> str:
    """The sentence, where it goes, and the next step, as one line (for the CLI)."""
    reason = explain(code, routing)
    if not reason.known:
        return reason.code
    where = f" Routed to {reason.destination}." if reason.destination else ""
    return f"{reason.sentence}{where} Next: {reason.next_step}"
