"""Talking to models: endpoint profiles, the OpenAI-compatible client, budget, retries, replies."""

from __future__ import annotations

from supportagent.llm.budget import Budget, RunBudgetExhausted, TicketBudgetExhausted, Usage
from supportagent.llm.chat import (
    ChatModel,
    ChatReply,
    ChatRequest,
    ModelUnavailable,
    OpenAIChatModel,
    ToolCall,
    ToolSpec,
)
from supportagent.llm.profiles import PROFILES, Endpoint, Profile, key_configured, resolve_endpoint
from supportagent.llm.retry import RetryPolicy
from supportagent.llm.structured import CallRecord, ResponseCache, StructuredCaller

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
