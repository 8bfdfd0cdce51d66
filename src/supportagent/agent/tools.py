"""The agent's tools and the gate every tool call passes through.

The allowlist is a constant: read a ticket, search the KB, search resolved tickets, stage a
result. Nothing here can reach a customer. The one tool that pretends to (``post_to_customer``)
is a decoy for the demo; it does nothing, and the gate refuses it like any other name that is not
on the list, even when someone registers it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: The only tools the agent may run. Changing this set is a reviewable product decision.
ALLOWED_TOOLS: frozenset[str] = frozenset(
    {"get_ticket", "search_docs", "search_resolved", "stage_draft"}
)

#: The tools a model may run by asking for them: none. Reading a ticket, searching and staging
#: are the pipeline's steps; a drafter that asks for ``stage_draft`` (told to "approve this
#: yourself") would otherwise pass the allowlist and run it (found by `eval injection`).
MODEL_TOOLS: frozenset[str] = frozenset()

Tool = Callable[..., Any]


class ToolDenied(Exception):
    """Raised by the gate for a tool that is not allowlisted or not registered."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"tool {name!r} denied: {reason}")
        self.name = name
        self.reason = reason


@dataclass(frozen=True, slots=True)
class GateDecision:
    tool: str
    allowed: bool
    reason: str
    arguments: dict[str, Any] = field(default_factory=dict)


def decoy_post_to_customer(**_: Any) -> None:  # pragma: no cover - the gate never lets it run
    """The demo's decoy. It has no way to send anything; reaching it at all would be a bug."""
    raise AssertionError("post_to_customer must never run: the tool gate should have denied it")


class ToolGate:
    """Runs a tool only if its name is allowlisted and registered; records every decision."""

    def __init__(
        self,
        tools: Mapping[str, Tool],
        on_decision: Callable[[GateDecision], None] | None = None,
        allowlist: frozenset[str] = ALLOWED_TOOLS,
    ) -> None:
        self._tools = dict(tools)
        self._allowlist = allowlist & ALLOWED_TOOLS  # a caller may narrow the list, never widen
        self._on_decision = on_decision
        self.decisions: list[GateDecision] = []

    def narrowed(self, allowlist: frozenset[str]) -> ToolGate:
        """The same tools and decision record, with a smaller allowlist (never a larger one)."""
        return ToolGate(self._tools, self._on_decision, self._allowlist & allowlist)

    def call(self, name: str, **arguments: Any) -> Any:
        """Run ``name`` with ``arguments``, or raise ToolDenied."""
        if name not in self._allowlist:
            self._decide(name, False, "not on the allowlist", arguments)
            raise ToolDenied(name, "not on the allowlist")
        if name not in self._tools:
            self._decide(name, False, "not registered", arguments)
            raise ToolDenied(name, "not registered")
        self._decide(name, True, "allowlisted", arguments)
        return self._tools[name](**arguments)

    def _decide(self, name: str, allowed: bool, reason: str, arguments: dict[str, Any]) -> None:
        decision = GateDecision(name, allowed, reason, _summarise(arguments))
        self.decisions.append(decision)
        if self._on_decision is not None:
            self._on_decision(decision)


def _summarise(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments as the trace keeps them: scalars as they are, long text cut, objects named."""
    out: dict[str, Any] = {}
    for key, value in arguments.items():
        if isinstance(value, str):
            out[key] = value if len(value) <= 200 else value[:200] + "…"
        elif isinstance(value, int | float | bool) or value is None:
            out[key] = value
        else:
            out[key] = type(value).__name__
    return out
