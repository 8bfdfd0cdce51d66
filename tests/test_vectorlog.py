"""The sentence-vector file next to the index: round trip, damage skipped, compaction, reuse."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from embedding_fakes import hashed_vector
from supportagent.agent.knowledge import SENTENCE_VECTORS, Knowledge
from supportagent.domain import DocKind, Document
from supportagent.retrieval.dense import MINILM_DIMENSION, OnnxMiniLM, content_key
from supportagent.retrieval.vectorlog import VectorLog

MODEL = "test-model"
DIM = 8


def _blob(text: str) -> bytes:
    return hashed_vector(text, DIM).astype(np.float32).tobytes()


def _put(log: VectorLog, texts: list[str]) -> None:
    log.put_many(MODEL, {content_key(t): _blob(t) for t in texts})


def _found(path: Path, texts: list[str]) -> set[str]:
    got = VectorLog(path, DIM).get_many(MODEL, [content_key(t) for t in texts])
    assert all(got[content_key(t)] == _blob(t) for t in texts if content_key(t) in got)
    return {t for t in texts if content_key(t) in got}


def test_vectors_come_back_in_a_new_process_and_only_for_their_model(tmp_path: Path) -> None:
    path = tmp_path / "vectors.bin"
    log = VectorLog(path, DIM)
    _put(log, ["alpha", "beta"])
    assert log.get_many(MODEL, [content_key("alpha")]) == {content_key("alpha"): _blob("alpha")}
    _put(log, ["gamma"])
    assert _found(path, ["alpha", "beta", "gamma", "delta"]) == {"alpha", "beta", "gamma"}
    assert VectorLog(path, DIM).get_many("other-model", [content_key("alpha")]) == {}


def test_a_torn_tail_and_a_damaged_record_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "vectors.bin"
    _put(VectorLog(path, DIM), ["alpha", "beta", "gamma"])
    data = bytearray(path.read_bytes())
    record = len(data) // 3
    data[record + 40] ^= 0xFF  # a bit of beta's vector flipped
    path.write_bytes(bytes(data) + b"\0" * (record // 2))  # and half a record of zeros
    assert _found(path, ["alpha", "beta", "gamma"]) == {"alpha", "gamma"}
    # The next write does not append after the torn row: the file is rewritten sound first.
    _put(VectorLog(path, DIM), ["delta"])
    assert _found(path, ["alpha", "beta", "gamma", "delta"]) == {"alpha", "gamma", "delta"}
    assert path.stat().st_size == 3 * record


def test_past_the_limit_the_file_keeps_the_newest_half(tmp_path: Path) -> None:
    path = tmp_path / "vectors.bin"
    log = VectorLog(path, DIM, max_records=10)
    texts = [f"text {n}" for n in range(14)]
    for text in texts:
        _put(log, [text])
    kept = _found(path, texts)
    # The 11th put rewrote the file with the newest five; three more were appended since.
    assert kept == set(texts[6:])


def test_an_unwritable_folder_costs_nothing_but_speed(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    log = VectorLog(blocker / "vectors.bin", DIM)
    _put(log, ["alpha"])
    assert log.get_many(MODEL, [content_key("alpha")]) == {content_key("alpha"): _blob("alpha")}


def test_a_second_process_embeds_only_the_texts_no_run_saw(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = Document("kb-keys", DocKind.KB, "Keys", "Roll the key. Both keys work for a day.")
    sentences = ["Roll the key.", "Both keys work for a day."]

    embedded: list[str] = []

    class Counting(OnnxMiniLM):
        def embed(self, texts: list[str]) -> np.ndarray:  # type: ignore[override]
            embedded.extend(texts)
            return super().embed(texts)

    def knowledge() -> Knowledge:
        from supportagent.retrieval.dense import CachedEmbedder

        cache = VectorLog(tmp_path / "store-cache.bin", MINILM_DIMENSION)
        embedder = CachedEmbedder(Counting(), cache)
        return Knowledge([doc], embedder=embedder, index_dir=tmp_path / "index")

    first = knowledge().sentence_embedder()
    assert first is not None
    before = first(sentences)
    assert (tmp_path / "index" / SENTENCE_VECTORS).is_file()
    embedded.clear()
    second = knowledge().sentence_embedder()
    assert second is not None
    after = second([*sentences, "How long do both keys work?"])
    assert embedded == ["How long do both keys work?"]
    assert np.array_equal(after[:2], before)


def _append_many(path: str, prefix: str) -> None:
    log = VectorLog(Path(path), DIM)
    for n in range(40):
        _put(log, [f"{prefix} {n}", f"{prefix} {n} again"])


def test_processes_appending_at_once_lose_no_record(tmp_path: Path) -> None:
    import multiprocessing

    path = tmp_path / "vectors.bin"
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_append_many, args=(str(path), p)) for p in "abc"]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    texts = [f"{p} {n}{tail}" for p in "abc" for n in range(40) for tail in ("", " again")]
    assert _found(path, texts) == set(texts)
