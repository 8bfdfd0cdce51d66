"""Jira-style ticket fields mapped onto ours, so an issue export loads without editing.

A Jira issue names its fields ``key``, ``summary``, ``description``, ``priority`` (a name, or
an object with one), ``reporter`` and ``created``, flat or nested under ``fields`` as the REST
API returns them; a Cloud description may be an Atlassian document (nested ``content`` nodes)
rather than text. Our own field names win whenever both are present. Pure functions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Jira's priority names on our scale (0 is the default and the lowest, 3 the highest).
PRIORITY_NAMES = {
    "lowest": 0,
    "low": 0,
    "trivial": 0,
    "minor": 0,
    "medium": 1,
    "normal": 1,
    "major": 2,
    "high": 2,
    "highest": 3,
    "urgent": 3,
    "critical": 3,
    "blocker": 3,
}

#: Our field, then the Jira fields that stand for it, in order of preference.
_ALIASES = (
    ("subject", ("summary", "title")),
    ("body", ("description",)),
    ("customer", ("reporter", "requester")),
    ("created_at", ("created",)),
)
#: Fields only a Jira issue has; a row without any of them is read as our format.
_JIRA_MARKS = ("fields", "key", "summary", "description")
#: Keys of a Jira user object that name the person, best first.
_USER_KEYS = ("emailAddress", "displayName", "name")


def jira_ticket_fields(fields: Mapping[str, object]) -> dict[str, object]:
    """``fields`` with Jira's names filled in as ours; a non-Jira row comes back unchanged."""
    out: dict[str, object] = dict(fields)
    if not any(name in out for name in _JIRA_MARKS):
        return out  # our own format: "priority": "high" stays an error there, as before
    nested = out.get("fields")
    if isinstance(nested, dict):
        del out["fields"]
        out = {**{k: v for k, v in nested.items() if isinstance(k, str)}, **out}
        if "key" in out:  # a REST issue: "id" is Jira's internal number, "key" the ticket's
            out["id"] = out["key"]
    if out.get("id") is None and out.get("key") is not None:
        out["id"] = out["key"]
    for ours, theirs in _ALIASES:
        if out.get(ours) is not None:
            continue
        for name in theirs:
            if out.get(name) is not None:
                out[ours] = out[name]
                break
    if isinstance(out.get("body"), dict):
        out["body"] = document_text(out["body"])
    customer = out.get("customer")
    if isinstance(customer, dict):
        out["customer"] = _user(customer)
    out["priority"] = _priority(out.get("priority"))
    return out


def document_text(node: Any) -> str:
    """The text of an Atlassian document: its text nodes, a line break after each block."""
    if isinstance(node, str):
        return node
    if not isinstance(node, dict):
        return ""
    if node.get("type") == "text":
        return str(node.get("text", ""))
    if node.get("type") == "hardBreak":
        return "\n"
    inner = "".join(document_text(child) for child in node.get("content") or [])
    if node.get("type") in {"paragraph", "heading", "listItem", "codeBlock", "blockquote"}:
        return inner.rstrip("\n") + "\n"
    return inner


def _user(user: Mapping[str, object]) -> object:
    for key in _USER_KEYS:
        if isinstance(user.get(key), str) and user[key]:
            return user[key]
    return None


def _priority(value: object) -> object:
    if isinstance(value, dict):
        value = value.get("name")
    if isinstance(value, str) and value.strip().lower() in PRIORITY_NAMES:
        return PRIORITY_NAMES[value.strip().lower()]
    return value
