"""Interactive API docs at /docs, from Swagger UI files installed with the package.

The Swagger UI build comes from the ``fastapi-offline`` wheel (MIT; Swagger UI itself is
Apache-2.0), so the page works without a network and loads nothing from another origin. Its
start-up code is a static file too, so the page runs under the same Content-Security-Policy
as every other page (no inline script).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from supportagent.web.deps import render

ASSETS_PATH = "/docs-assets"
router = APIRouter(include_in_schema=False)


def assets_dir() -> Path:
    """The folder of Swagger UI's files inside the installed ``fastapi_offline`` package."""
    return Path(str(resources.files("fastapi_offline") / "static"))


@router.get("/docs", response_class=HTMLResponse)
def docs_page(request: Request) -> HTMLResponse:
    return render(request, "docs.html", {"assets": ASSETS_PATH})
