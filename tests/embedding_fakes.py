"""Test doubles for embeddings: a hashing embedder and a local OpenAI-compatible /embeddings.

``HashingEmbedder`` implements the real ``Embedder`` protocol with a deterministic bag of hashed
search tokens, and records every batch it is asked for. ``EmbeddingsServer`` answers
``POST /v1/embeddings`` over real HTTP on 127.0.0.1 with the same vectors (unnormalised, as a
real endpoint may send them), so the official SDK is exercised end to end.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import numpy.typing as npt

from supportagent.retrieval.text import tokenize

DIMENSION = 64


def hashed_vector(text: str, dimension: int = DIMENSION) -> npt.NDArray[np.float32]:
    """Each search token adds +-1 at a position chosen by its hash (not normalised)."""
    vector = np.zeros(dimension, dtype=np.float32)
    for token in tokenize(text):
        digest = hashlib.sha256(token.encode()).digest()
        vector[digest[0] % dimension] += 1.0 if digest[1] % 2 else -1.0
    return vector


@dataclass
class HashingEmbedder:
    """A deterministic embedder: texts sharing search tokens get similar vectors."""

    model_id: str = "test-hashing-64"
    calls: list[list[str]] = field(default_factory=list)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.calls.append(list(texts))
        rows = np.array([hashed_vector(t) for t in texts], dtype=np.float32).reshape(-1, DIMENSION)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return np.asarray(rows / np.maximum(norms, 1e-12), dtype=np.float32)

    @property
    def embedded(self) -> int:
        return sum(len(batch) for batch in self.calls)


@dataclass
class Request:
    path: str
    has_bearer: bool
    body: dict[str, Any]


class EmbeddingsServer:
    """``with EmbeddingsServer() as server:`` then point the SDK at ``server.base_url``."""

    def __init__(self, fail_with: int | None = None) -> None:
        self.requests: list[Request] = []
        self.fail_with = fail_with
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                bearer = self.headers.get("Authorization", "").startswith("Bearer ")
                outer.requests.append(Request(self.path, bearer, body))
                if outer.fail_with is not None:
                    self._send(outer.fail_with, {"error": {"message": "scripted failure"}})
                    return
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                data = [
                    {"object": "embedding", "index": i, "embedding": hashed_vector(t).tolist()}
                    for i, t in enumerate(texts)
                ]
                data.reverse()  # the SDK must restore the order by index
                usage = {"prompt_tokens": len(texts), "total_tokens": len(texts)}
                self._send(
                    200, {"object": "list", "data": data, "model": body["model"], "usage": usage}
                )

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> EmbeddingsServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
