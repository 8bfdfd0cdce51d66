"""Talking to models: endpoint profiles, the OpenAI-compatible client, budget, retries, replies.

The names below are loaded from their modules on first use (PEP 562), so that importing one
small module of this package (``llm.budget``, say) does not import the others and the openai
SDK with them: the offline engine needs none of it.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "Budget": "budget",
    "RunBudgetExhausted": "budget",
    "TicketBudgetExhausted": "budget",
    "Usage": "budget",
    "ChatModel": "chat",
    "ChatReply": "chat",
    "ChatRequest": "chat",
    "ModelUnavailable": "chat",
    "OpenAIChatModel": "chat",
    "ToolCall": "chat",
    "ToolSpec": "chat",
    "PROFILES": "profiles",
    "Endpoint": "profiles",
    "Profile": "profiles",
    "key_configured": "profiles",
    "resolve_endpoint": "profiles",
    "RetryPolicy": "retry",
    "CallRecord": "structured",
    "ResponseCache": "structured",
    "StructuredCaller": "structured",
}


def __getattr__(name: str) -> Any:
    module = _HOMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


__all__ = [
    "PROFILES",
    "Budget",
    "CallRecord",
    "ChatModel",
    "ChatReply",
    "ChatRequest",
    "Endpoint",
    "ModelUnavailable",
    "OpenAIChatModel",
    "Profile",
    "ResponseCache",
    "RetryPolicy",
    "RunBudgetExhausted",
    "StructuredCaller",
    "TicketBudgetExhausted",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "key_configured",
    "resolve_endpoint",
]
