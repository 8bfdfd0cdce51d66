"""The web app factory: state, the security guard, the routers, and errors as 4xx answers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from supportagent.agent.knowledge import Knowledge
from supportagent.config import Settings
from supportagent.errors import ConflictError, NotFoundError, UserError
from supportagent.reasons import load_routing
from supportagent.runtime import run_budget
from supportagent.store.store import Store
from supportagent.web import api, auth, docs, escalation_api, escalation_pages, pages
from supportagent.web.deps import AppState, render
from supportagent.web.ratelimit import Limits
from supportagent.web.security import MAX_BODY_BYTES, Guard, Security
from supportagent.web.worker import AgentWorker

#: Paths that answer in JSON; everything else is a page and gets an HTML error page.
JSON_PREFIXES = ("/api/", "/triage", "/health", "/openapi.json")


def create_app(
    settings: Settings,
    store: Store,
    *,
    work: bool = True,
    max_tickets: int | None = None,
    allowed_hosts: Iterable[str] | None = None,
    max_body: int = MAX_BODY_BYTES,
    limits: Limits | None = None,
) -> FastAPI:
    """The app over ``store``; with ``work`` the agent works through the inbox meanwhile.

    Without a token only loopback Host names are answered (``allowed_hosts`` overrides).
    """
    knowledge = Knowledge.from_store(store, settings)
    budget = run_budget(settings)  # the worker and /triage share the run's caps
    worker = (
        AgentWorker(settings, store, knowledge, max_tickets=max_tickets, budget=budget)
        if work
        else None
    )
    security = Security.from_settings(settings.token, allowed_hosts)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if worker is not None:
            worker.start()
        yield
        if worker is not None:
            worker.shutdown()

    app = FastAPI(
        title="SupportAgent",
        version="0.1.0",
        description=(
            "Drafts grounded answers to support tickets for a human to review; never sends "
            "them. With SUPPORTAGENT_TOKEN set, send `Authorization: Bearer <token>`."
        ),
        lifespan=lifespan,
        # /docs is served from assets installed with the package (web/docs.py), never a CDN.
        docs_url=None,
        redoc_url=None,
    )
    routing = load_routing(settings.home)
    app.state.supportagent = AppState(settings, store, knowledge, worker, security, routing, budget)
    app.state.security = security
    app.state.limits = limits or Limits()
    app.add_middleware(Guard, security=security, max_body=max_body)
    app.mount("/static", StaticFiles(directory=Path(__file__).parent / "static"), name="static")
    app.mount(docs.ASSETS_PATH, StaticFiles(directory=docs.assets_dir()), name="docs-assets")
    app.include_router(api.router)
    app.include_router(escalation_api.router)
    app.include_router(pages.router)
    app.include_router(escalation_pages.router)
    app.include_router(docs.router)
    app.include_router(auth.router)
    _add_error_handlers(app)
    return app


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith(JSON_PREFIXES)


def _error(request: Request, status: int, detail: object) -> Response:
    if _wants_json(request):
        return JSONResponse({"detail": detail}, status_code=status)
    message = detail if isinstance(detail, str) else "The request was not valid."
    return render(request, "error.html", {"status": status, "message": message}, status)


def _add_error_handlers(app: FastAPI) -> None:
    """The user's mistakes become 4xx answers with the message; never a traceback."""

    @app.exception_handler(UserError)
    async def user_error(request: Request, exc: UserError) -> Response:
        status = (
            404
            if isinstance(exc, NotFoundError)
            else 409
            if isinstance(exc, ConflictError)
            else 400
        )
        return _error(request, status, str(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        response = _error(request, exc.status_code, exc.detail)
        for name, value in (exc.headers or {}).items():
            response.headers[name] = value
        return response

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        errors = [
            {"loc": list(e.get("loc", ())), "msg": str(e.get("msg")), "type": str(e.get("type"))}
            for e in exc.errors()
        ]
        if _wants_json(request):
            return JSONResponse({"detail": errors}, status_code=422)
        first = errors[0] if errors else {"loc": [], "msg": "invalid request"}
        where = ".".join(str(part) for part in first["loc"])
        return _error(request, 422, f"Invalid {where}: {first['msg']}")
