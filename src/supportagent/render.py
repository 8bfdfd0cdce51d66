"""Rich renderings shared by CLI commands: trace timelines, outcome tables, ingest problems."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from supportagent.domain import NEAR_RISK
from supportagent.reasons import explain, one_line

if TYPE_CHECKING:
    from rich.table import Table

_STATUS_STYLE = {
    "pass": "green",
    "ok": "green",
    "sufficient": "green",
    "allowed": "dim",
    "pending_review": "bold green",
    "fail": "red",
    "weak": "yellow",
    "denied": "bold red",
    "escalate": "bold red",
    "escalated": "bold red",
    "routed": "cyan",
}


def trace_timeline(console: Console, ticket_id: str, events: Sequence[dict[str, Any]]) -> None:
    """Print a trace as one line per step, with the detail that explains the step."""
    console.print(f"[bold]Trace for {escape(ticket_id)}[/bold]")
    elapsed = 0.0
    for event in events:
        elapsed += float(event["duration_ms"])
        stage, status, detail = event["stage"], event["status"], event["detail"]
        style = _STATUS_STYLE.get(status, "white")
        label = f"[{style}]{escape(status)}[/{style}]"
        if stage == "tool" and status == "denied":
            label = "[bold red]GATE DENIED[/bold red]"
        console.print(f"  {elapsed:8.1f} ms  {stage:<11} {label}  {_summary(stage, detail)}")


def _summary(stage: str, d: dict[str, Any]) -> str:
    if stage == "tool":
        return escape(f"{d.get('tool')} ({d.get('reason')})")
    if stage == "safety":
        if d.get("reason_code") == NEAR_RISK:
            # Nothing fired, but a sentence came near a risk: the ticket is not answered.
            return escape(f"near a risk, not escalated by itself: {d.get('explanation', '')}")
        if not d.get("auto_escalate") and d.get("category") != "service_outage":
            return "no safety concern"
        rule = f" (rule {d['matched_rule']})" if d.get("matched_rule") else ""
        return escape(f"{explain(d.get('reason_code')).sentence or d['category']}{rule}")
    if stage == "classify":
        return escape(f"{explain(d['reason_code']).label}: {d['reason']}")
    if stage == "retrieve":
        top = ", ".join(f"{h['id']}" for h in d.get("hits", [])[:3])
        return escape(f"{len(d.get('hits', []))} hits; top: {top or '-'}")
    if stage in {"evidence", "reformulate", "revise", "gate"}:
        return escape(str(d.get("reason") or d.get("query") or ""))
    if stage == "draft":
        return escape(f"{len(d['sentences'])} sentences, cites {', '.join(d['citations']) or '-'}")
    if stage == "check":
        problems = d.get("problems", [])
        if not problems:
            return escape(f"{d.get('checker')}: all claims supported")
        return escape(f"{d.get('checker')}: " + "; ".join(p["message"] for p in problems[:3]))
    if stage == "stage":
        return escape(one_line(d.get("reason_code")))
    if stage == "model":
        return escape(one_line(model_call_summary(d)))
    if stage == "model_error":
        return escape(one_line(d.get("message")))
    return ""


def model_call_summary(d: dict[str, Any]) -> str:
    """One model call as a timeline line: stage, prompt, tokens, time, cache, retries, error.

    ``draft (draft@2) 1,412 + 188 tokens, 97.1 s, 2 requests (1 retry): <error>``
    """
    parts = [f"{d.get('call') or 'call'} ({d.get('prompt') or '?'})"]
    if d.get("cache_hit"):
        parts.append("cache hit, no tokens spent")
    else:
        tokens = f"{int(d.get('prompt_tokens') or 0):,} + {int(d.get('completion_tokens') or 0):,}"
        parts.append(f"{tokens} tokens, {float(d.get('latency_ms') or 0) / 1000:.1f} s")
    retries = int(d.get("retries") or 0)
    if retries:
        parts.append(f"{d.get('requests') or retries + 1} requests ({retries} retries)")
    line = ", ".join(parts)
    if d.get("error"):
        line += f": {d['error']}"
    return line


def outcome_table(rows: Iterable[tuple[str, str]], title: str = "Outcomes") -> Table:
    """Counts of (status, reason) pairs, most common first, each reason in words."""
    from rich.table import Table

    counts = Counter(rows)
    table = Table(title=title)
    table.add_column("status")
    table.add_column("reason")
    table.add_column("tickets", justify="right")
    table.add_column("what it means")
    for (status, reason), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        words = explain(reason)
        where = f" Routed to {words.destination}." if words.destination else ""
        table.add_row(status, reason, str(n), escape(f"{words.sentence}{where}"))
    return table


def print_problems(console: Console, problems: Sequence[object], limit: int = 50) -> None:
    for problem in problems[:limit]:
        console.print(f"[red]rejected[/red] {escape(str(problem))}")
    if len(problems) > limit:
        console.print(f"[red]... and {len(problems) - limit} more problems[/red]")
