"""The web app: staged results, a small JSON API, and the agent at work in the background."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from supportagent.agent.knowledge import Knowledge
from supportagent.config import Settings
from supportagent.domain import Status, is_valid_id
from supportagent.errors import NotFoundError
from supportagent.runtime import build_engine, build_pipeline
from supportagent.scheduler import run_inbox
from supportagent.store.store import StagedRecord, Store

TEMPLATES = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))
#: Seconds between looks at the inbox for newly arrived tickets.
POLL_SECONDS = 2.0


class AgentWorker:
    """Works through the inbox on a background thread until stopped."""

    def __init__(self, settings: Settings, store: Store, knowledge: Knowledge) -> None:
        self.pipeline = build_pipeline(settings, store, build_engine(settings), knowledge)
        self.stop = threading.Event()
        self.current: str | None = None
        self.processed = 0
        self.error: str | None = None
        self._thread = threading.Thread(target=self._loop, name="agent-worker", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def shutdown(self) -> None:
        self.stop.set()
        self._thread.join(timeout=30)

    def _loop(self) -> None:
        while not self.stop.is_set():
            try:
                summary = run_inbox(
                    self.pipeline, on_start=self._started, on_done=self._done, stop=self.stop
                )
            except Exception as exc:  # keep serving the UI; show the failure on the page
                self.error = f"{type(exc).__name__}: {exc}"
                self.current = None
                summary = None
            if summary is None or summary.processed == 0:
                self.stop.wait(POLL_SECONDS)

    def _started(self, ticket_id: str) -> None:
        self.current = ticket_id

    def _done(self, _outcome: object) -> None:
        self.current = None
        self.processed += 1


def create_app(settings: Settings, store: Store, *, work: bool = True) -> FastAPI:
    """The FastAPI application over ``store``; with ``work`` the agent runs in the background."""
    knowledge = Knowledge.from_store(store)
    worker = AgentWorker(settings, store, knowledge) if work else None

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if worker is not None:
            worker.start()
        yield
        if worker is not None:
            worker.shutdown()

    app = FastAPI(title="SupportAgent", version="0.1.0", lifespan=lifespan)

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/api/agent/status")
    def agent_status() -> dict[str, Any]:
        return {
            "working": worker is not None and not worker.stop.is_set(),
            "current_ticket": worker.current if worker else None,
            "processed": worker.processed if worker else 0,
            "error": worker.error if worker else None,
            "counts": store.status_counts(),
        }

    @app.get("/api/queue")
    def queue() -> list[dict[str, Any]]:
        return [_record_json(r) for r in store.staged(Status.PENDING_REVIEW)]

    @app.get("/api/tickets/{ticket_id}/trace")
    def ticket_trace(ticket_id: str) -> dict[str, Any]:
        _check_id(ticket_id)
        try:
            return {"ticket_id": ticket_id, "events": store.trace(ticket_id)}
        except NotFoundError as exc:
            raise HTTPException(404, str(exc)) from None

    @app.get("/", response_class=HTMLResponse)
    def monitor(request: Request) -> HTMLResponse:
        return TEMPLATES.TemplateResponse(
            request,
            "index.html",
            {
                "records": store.staged(limit=200),
                "counts": store.status_counts(),
                "current": worker.current if worker else None,
                "error": worker.error if worker else None,
            },
        )

    return app


def _check_id(ticket_id: str) -> None:
    if not is_valid_id(ticket_id):
        raise HTTPException(422, "Not a valid ticket id.")


def _record_json(r: StagedRecord) -> dict[str, Any]:
    return {
        "ticket_id": r.ticket.id,
        "subject": r.ticket.subject,
        "status": r.status.value,
        "reason_code": r.reason_code,
        "bucket": r.bucket,
        "draft": r.draft,
        "staged_at": r.staged_at.isoformat(),
    }
