"""The tool gate: exactly four tools, everything else denied and recorded."""

from __future__ import annotations

from typing import Any

import pytest

from supportagent.agent import tools
from supportagent.agent.tools import ALLOWED_TOOLS, GateDecision, ToolDenied, ToolGate


def test_allowlist_is_exactly_the_four_tools() -> None:
    assert {"get_ticket", "search_docs", "search_resolved", "stage_draft"} == ALLOWED_TOOLS


def test_allowed_tool_runs_and_is_recorded() -> None:
    seen: list[GateDecision] = []
    gate = ToolGate({"get_ticket": lambda ticket_id: f"ticket {ticket_id}"}, seen.append)
    assert gate.call("get_ticket", ticket_id="T-1") == "ticket T-1"
    assert seen == [GateDecision("get_ticket", True, "allowlisted", {"ticket_id": "T-1"})]


@pytest.mark.parametrize("name", ["post_to_customer", "send_email", "GET_TICKET", "", "shell"])
def test_unlisted_tools_are_denied_even_when_registered(name: str) -> None:
    ran: list[str] = []
    registered = {name: lambda **_: ran.append(name)}
    gate = ToolGate(registered)
    with pytest.raises(ToolDenied) as denied:
        gate.call(name, text="hello")
    assert denied.value.reason == "not on the allowlist"
    assert ran == []
    assert gate.decisions[-1].allowed is False


def test_allowlisted_but_unregistered_tool_is_denied() -> None:
    gate = ToolGate({})
    with pytest.raises(ToolDenied, match="not registered"):
        gate.call("search_docs", query="x", k=3)


def test_a_caller_can_narrow_but_never_widen_the_allowlist() -> None:
    widened = frozenset({*ALLOWED_TOOLS, "post_to_customer"})
    gate = ToolGate({"post_to_customer": tools.decoy_post_to_customer}, allowlist=widened)
    with pytest.raises(ToolDenied):
        gate.call("post_to_customer", text="hi")
    narrowed = ToolGate({"search_docs": lambda **_: []}, allowlist=frozenset({"get_ticket"}))
    with pytest.raises(ToolDenied):
        narrowed.call("search_docs", query="q", k=1)


def test_no_tool_in_the_package_can_post_to_a_customer() -> None:
    """The decoy is the only such name in the code, and it cannot do anything."""
    with pytest.raises(AssertionError, match="must never run"):
        tools.decoy_post_to_customer(text="x")
    public: dict[str, Any] = {n: getattr(tools, n) for n in dir(tools) if not n.startswith("_")}
    posting = [n for n in public if "post" in n.lower() or "send" in n.lower()]
    assert posting == ["decoy_post_to_customer"]


def test_long_arguments_are_cut_in_the_record() -> None:
    gate = ToolGate({"search_docs": lambda **_: []})
    gate.call("search_docs", query="x" * 1000, k=3)
    recorded = gate.decisions[0].arguments["query"]
    assert len(recorded) == 201 and recorded.endswith("…")
