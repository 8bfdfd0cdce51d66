"""Which server is behind a base URL, from what it answers about itself (never from its port).

Local servers share ports (llama-cpp-python and vLLM both default to 8000) and each speaks a
slightly different dialect of structured output, so the port says little. What they answer
says more:

* ``GET /v1/models``: each model's ``owned_by`` is ``vllm`` on vLLM, ``llamacpp`` on llama.cpp's
  ``llama-server`` and ``me`` on llama-cpp-python;
* ``GET /api/version`` answers ``{"version": ...}`` only on Ollama;
* ``GET /props`` answers llama-server's settings (``default_generation_settings``).

:func:`identify` is the pure decision over those answers; :func:`probe_server` asks them.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from supportagent.llm.profiles import LOCAL_TIMEOUT, Detection, is_local_url

if TYPE_CHECKING:
    import httpx

#: Seconds to connect: a server that is up accepts at once.
CONNECT_TIMEOUT = 3.0
#: Seconds to wait for an answer. An idle server answers in milliseconds, but llama-cpp-python
#: answers nothing, not even /v1/models, while it computes a completion (one at a time, and it
#: finishes one its client gave up on), so a server on this machine gets as long as a request.
LOCAL_READ_TIMEOUT = LOCAL_TIMEOUT
REMOTE_READ_TIMEOUT = 10.0

_OWNED_BY = {"vllm": "vllm", "llamacpp": "llamacpp", "me": "llamacpp-python"}


def identify(models: Any, ollama_version: Any, props: Any) -> Detection:
    """The profile that the three answers point at (each a parsed JSON body, or None when the
    path failed or was not asked), and the answer that decided it."""
    owners = _owners(models)
    if isinstance(ollama_version, dict) and isinstance(ollama_version.get("version"), str):
        return Detection("ollama", f"/api/version answers Ollama {ollama_version['version']}")
    if isinstance(props, dict) and "default_generation_settings" in props:
        return Detection("llamacpp", "/props answers like llama.cpp's llama-server")
    for owner in owners:
        if owner in _OWNED_BY:
            name = _OWNED_BY[owner]
            return Detection(name, f"/v1/models says owned_by {owner!r} ({name})")
    if models is None:
        return Detection(None, "the server did not answer /v1/models")
    said = ", ".join(repr(o) for o in owners) or "no owner"
    return Detection(None, f"/v1/models says owned_by {said}, which no profile knows")


def context_window(models: Any, props: Any) -> int | None:
    """The context size a server reports, where it does (vLLM, llama-server)."""
    if isinstance(props, dict):
        settings = props.get("default_generation_settings")
        n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
        if isinstance(n_ctx, int) and n_ctx > 0:
            return n_ctx
    for model in _models(models):
        for key in ("max_model_len", "context_length"):
            value = model.get(key)
            if isinstance(value, int) and value > 0:
                return value
    return None


_FOUND: dict[str, Detection] = {}
_LOCK = threading.Lock()


def probe_server(base_url: str) -> Detection:
    """Ask the server at ``base_url`` what it is: ``/v1/models`` first, then, where its answer
    does not settle it, Ollama's ``/api/version`` and llama-server's ``/props``.

    A server recognised is remembered per base URL for the life of the process (one web app
    builds many engines); one that was not is asked again next time.
    """
    with _LOCK:
        if base_url in _FOUND:
            return _FOUND[base_url]
    found = _ask(base_url)
    if found.profile is not None:
        with _LOCK:
            _FOUND[base_url] = found
    return found


def _ask(base_url: str) -> Detection:
    import httpx  # only when a server is probed: the offline engine never needs it

    base = base_url.rstrip("/")
    root = base[: -len("/v1")] if base.endswith("/v1") else base
    version = props = None
    read = LOCAL_READ_TIMEOUT if is_local_url(base_url) else REMOTE_READ_TIMEOUT
    timeout = httpx.Timeout(read, connect=CONNECT_TIMEOUT)
    with httpx.Client(timeout=timeout, follow_redirects=False) as client:
        models = _get(client, f"{base}/models")
        found = identify(models, None, None)
        if found.profile not in {"vllm", "llamacpp"}:
            # owned_by "me" is llama-cpp-python's; make sure no other server answers these.
            version = _get(client, f"{root}/api/version")
            props = None if version is not None else _get(client, f"{root}/props")
            found = identify(models, version, props)
        elif found.profile == "llamacpp":
            props = _get(client, f"{root}/props")
    return replace(found, context_tokens=context_window(models, props))


def _get(client: httpx.Client, url: str) -> Any:
    import httpx

    try:
        response = client.get(url)
    except httpx.HTTPError:
        return None
    if response.status_code != 200:
        return None
    try:
        return response.json()
    except ValueError:
        return None


def _models(models: Any) -> list[dict[str, Any]]:
    data = models.get("data") if isinstance(models, dict) else None
    return [m for m in data if isinstance(m, dict)] if isinstance(data, list) else []


def _owners(models: Any) -> list[str]:
    return list(dict.fromkeys(str(m.get("owned_by", "")) for m in _models(models)))
