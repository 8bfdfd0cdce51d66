"""What every route shares: the app's state, the templates, id checks, error pages."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import jinja2
from fastapi import Depends, HTTPException, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from supportagent.agent.knowledge import Knowledge
from supportagent.config import Settings
from supportagent.domain import NEAR_RISK, is_valid_id
from supportagent.llm.budget import Budget
from supportagent.reasons import explain
from supportagent.store.store import Store
from supportagent.web.security import Security
from supportagent.web.worker import AgentWorker

_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
    # Every template is HTML and every value is escaped unless a template says otherwise;
    # none does: ticket text and documents are never trusted.
    autoescape=True,
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENV.globals["explain"] = explain  # reason codes in words, in every template
_ENV.globals["NEAR_RISK"] = NEAR_RISK  # the one reason code a template tests for by name
TEMPLATES = Jinja2Templates(env=_ENV)
_ACTOR = re.compile(r"^[\w .@-]{1,64}$")


@dataclass
class AppState:
    settings: Settings
    store: Store
    knowledge: Knowledge
    worker: AgentWorker | None
    security: Security
    #: Reason code → the team a routed ticket goes to (``reasons.load_routing``).
    routing: dict[str, str] = field(default_factory=dict)
    #: The run's model budget, shared by the worker and /triage: one cap for the process.
    budget: Budget | None = None


def get_state(request: Request) -> AppState:
    state = request.app.state.supportagent
    assert isinstance(state, AppState)
    return state


State = Annotated[AppState, Depends(get_state)]


def actor_name(name: str, fallback: str = "web") -> str:
    """The name a form sent as "working as", or ``fallback`` when it is empty or odd."""
    who = name.strip()
    return who if _ACTOR.fullmatch(who) else fallback


def check_id(ticket_id: str) -> str:
    """A ticket id from a URL, or 422 before it reaches the store."""
    if not is_valid_id(ticket_id):
        raise HTTPException(422, "Not a valid ticket id.")
    return ticket_id


def render(
    request: Request, name: str, context: dict[str, Any], status_code: int = 200
) -> HTMLResponse:
    """A page, with what the layout needs: the CSRF token, whether a login is in use."""
    state = get_state(request)
    session = request.scope.get("supportagent.session", "")
    page = {
        "csrf_token": state.security.csrf_token(session),
        "logged_in": request.scope.get("supportagent.auth") == "cookie",
        "path": request.url.path,
        **context,
    }
    response = TEMPLATES.TemplateResponse(request, name, page, status_code=status_code)
    response.headers["cache-control"] = "no-store"
    return response
