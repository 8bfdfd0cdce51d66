"""Logging in with the token: a form that sets an HttpOnly, SameSite=Strict cookie."""

from __future__ import annotations

import math
from typing import Annotated

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from supportagent.web.deps import State, render
from supportagent.web.ratelimit import client_of
from supportagent.web.security import AUTH_COOKIE, AUTH_MAX_AGE, require_csrf

router = APIRouter(include_in_schema=False, dependencies=[Depends(require_csrf)])

NextPath = Annotated[str, Query(max_length=2000)]


def safe_next(target: str) -> str:
    """Only a path on this site: never another host (``//evil``, ``/\\evil``, ``https:``)."""
    if not target.startswith("/") or target.startswith(("//", "/\\")) or "\n" in target:
        return "/"
    return target


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request, state: State, next: NextPath = "/") -> Response:
    if state.security.token is None:
        return RedirectResponse(safe_next(next), status_code=303)
    return render(request, "login.html", {"next": safe_next(next), "error": None})


@router.post("/login", response_model=None)
def login(
    request: Request,
    state: State,
    token: Annotated[str, Form(max_length=1000)] = "",
    next: Annotated[str, Form(max_length=2000)] = "/",
) -> Response:
    security = state.security
    if security.token is None:
        return RedirectResponse(safe_next(next), status_code=303)
    backoff = request.app.state.limits.login
    client = client_of(request)
    wait = backoff.retry_after(client)
    if wait is not None:
        seconds = max(1, math.ceil(wait))
        context = {
            "next": safe_next(next),
            "error": f"Too many wrong tokens from this address: try again in {seconds} s.",
        }
        refused = render(request, "login.html", context, status_code=429)
        refused.headers["retry-after"] = str(seconds)
        return refused
    if not security.token_ok(token):
        backoff.failed(client)
        context = {"next": safe_next(next), "error": "That is not the token. Try again."}
        return render(request, "login.html", context, status_code=401)
    backoff.succeeded(client)
    response = RedirectResponse(safe_next(next), status_code=303)
    response.set_cookie(
        AUTH_COOKIE,
        security.issue_login(),
        max_age=AUTH_MAX_AGE,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


@router.post("/logout")
def logout(request: Request, state: State) -> Response:
    """End the login: the cookie is revoked here, not only deleted in this browser."""
    state.security.revoke(request.cookies.get(AUTH_COOKIE))
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(AUTH_COOKIE, path="/", httponly=True, samesite="strict")
    return response
