"""The search index on disk (issue 17, item 4): round trip, reuse, two writers, damage.

Real files in a temporary folder, the real retriever, and the recording ``HashingEmbedder``
(tests/embedding_fakes.py) so that what reached the embedder can be counted.
"""

from __future__ import annotations

import json
import mmap
import multiprocessing
import os
from pathlib import Path

import numpy as np
import pytest

from embedding_fakes import HashingEmbedder
from supportagent.domain import DocKind, Document
from supportagent.retrieval import ondisk
from supportagent.retrieval.dense import file_sha256
from supportagent.retrieval.retriever import HybridRetriever

QUERIES = (
    "rotate the api key",
    "webhook signature does not verify",
    "refund for a failed payment",
    "sms segments and unicode",
    "why was my message rate limited",
)


def _documents() -> list[Document]:
    topics = {
        "keys": "Rotate an API key from the dashboard. The old key keeps working for one hour.",
        "hooks": "Every webhook carries a signature header. Verify it with your signing secret.",
        "refunds": "A failed payment is retried twice. Refunds for a failed payment take 5 days.",
        "sms": "A message with unicode characters uses 70 characters per segment, not 160.",
        "limits": "The API allows 100 requests a second; a message above the rate is limited.",
    }
    docs = [
        Document(
            id=f"kb-{name}",
            kind=DocKind.KB,
            title=name.title(),
            body=f"# {name.title()}\n\n{text}\n\n## Details\n\n{text} More about {name} here.",
        )
        for name, text in topics.items()
    ]
    docs.append(
        Document(
            id="res-1",
            kind=DocKind.RESOLVED,
            title="Key stopped working",
            body="We rotated the key; the old one expired after an hour.",
            meta={"question": "My API key stopped working after rotation"},
        )
    )
    return docs


def _rankings(retriever: HybridRetriever) -> list[list[tuple[str, float]]]:
    return [
        [(hit.passage.id, round(hit.score, 6)) for hit in retriever.search(q, k=5)] for q in QUERIES
    ]


def _is_mapped(array: object) -> bool:
    """Whether an array's memory is a file mapping: a memmap somewhere down its bases."""
    while array is not None:
        if isinstance(array, np.memmap | mmap.mmap):
            return True
        array = getattr(array, "base", None)
    return False


def test_the_index_on_disk_ranks_as_the_one_in_memory(tmp_path: Path) -> None:
    docs = _documents()
    in_memory = HybridRetriever(docs, embedder=HashingEmbedder())
    built = HybridRetriever(docs, embedder=HashingEmbedder(), index_dir=tmp_path)
    mapped = HybridRetriever(docs, embedder=HashingEmbedder(), index_dir=tmp_path)
    assert built.index_status.startswith("built")
    assert mapped.index_status == "mapped"
    expected = _rankings(in_memory)
    assert _rankings(built) == expected
    assert _rankings(mapped) == expected
    assert _is_mapped(mapped._snapshot.dense)  # mapped, not copied
    assert [h.signals for h in mapped.search("rotate the api key", k=3)] == [
        h.signals for h in in_memory.search("rotate the api key", k=3)
    ]


def test_a_mapped_index_grows_like_one_in_memory(tmp_path: Path) -> None:
    docs = _documents()
    HybridRetriever(docs[:-1], embedder=HashingEmbedder(), index_dir=tmp_path)
    mapped = HybridRetriever(docs[:-1], embedder=HashingEmbedder(), index_dir=tmp_path)
    in_memory = HybridRetriever(docs[:-1], embedder=HashingEmbedder())
    for retriever in (mapped, in_memory):
        retriever.add(docs[-1])  # an approved answer joins: appended to the mapped arrays
        retriever.add(  # a re-ingested article: a rebuild, which needs the tokens
            Document("kb-keys", DocKind.KB, "Keys", "Keys are rotated by the owner only.")
        )
    assert _rankings(mapped) == _rankings(in_memory)


def test_only_changed_passages_are_embedded_again(tmp_path: Path) -> None:
    docs = _documents()
    first = HashingEmbedder()
    HybridRetriever(docs, embedder=first, index_dir=tmp_path)
    passages = sum(len(batch) for batch in first.calls)
    assert passages >= len(docs)

    unchanged = HashingEmbedder()
    HybridRetriever(docs, embedder=unchanged, index_dir=tmp_path)
    assert unchanged.calls == []  # same corpus: mapped, nothing embedded

    edited = list(docs)
    edited[0] = Document("kb-keys", DocKind.KB, "Keys", "Keys are rotated by the owner only.")
    edited.append(Document("kb-new", DocKind.KB, "Sandbox", "Sandbox numbers never send."))
    recording = HashingEmbedder()
    rebuilt = HybridRetriever(edited, embedder=recording, index_dir=tmp_path)
    sent = [text for batch in recording.calls for text in batch]
    assert len(sent) == 2  # the edited article's one passage and the new one; nothing else
    assert any("owner only" in text for text in sent)
    assert any("Sandbox numbers" in text for text in sent)
    assert rebuilt.index_status == "built (the documents changed)"
    assert _rankings(rebuilt) == _rankings(HybridRetriever(edited, embedder=HashingEmbedder()))


def test_another_embedder_never_reuses_the_vectors(tmp_path: Path) -> None:
    docs = _documents()
    HybridRetriever(docs, embedder=HashingEmbedder(), index_dir=tmp_path)
    other = HashingEmbedder(model_id="test-hashing-other")
    HybridRetriever(docs, embedder=other, index_dir=tmp_path)
    assert other.embedded == sum(
        len(HybridRetriever([d], embedder=HashingEmbedder()).passages) for d in docs
    )


def _open_in_child(folder: str, barrier: object, out: object) -> None:
    barrier.wait()  # type: ignore[attr-defined]
    retriever = HybridRetriever(_documents(), embedder=HashingEmbedder(), index_dir=Path(folder))
    out.put((retriever.index_status, _rankings(retriever)))  # type: ignore[attr-defined]


def test_two_processes_starting_at_once_build_one_good_index(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    barrier, out = context.Barrier(2), context.Queue()
    children = [
        context.Process(target=_open_in_child, args=(str(tmp_path), barrier, out)) for _ in range(2)
    ]
    for child in children:
        child.start()
    results = [out.get(timeout=120) for _ in children]
    for child in children:
        child.join(timeout=60)
        assert child.exitcode == 0
    statuses = sorted(status for status, _ in results)
    # One built it; the other waited on the lock and then used what the first published.
    assert statuses == ["built (no index on disk)", "mapped (another process built it)"]
    expected = _rankings(HybridRetriever(_documents(), embedder=HashingEmbedder()))
    assert all(rankings == expected for _, rankings in results)
    generations = [p for p in tmp_path.iterdir() if p.name.startswith("gen-")]
    assert len(generations) == 1
    assert not list(tmp_path.glob(".tmp-*"))  # nothing half-written is left behind
    assert ondisk.read_generation(tmp_path) is not None


def _current(folder: Path) -> Path:
    name = ondisk.current_name(folder)
    assert name is not None
    return folder / name


@pytest.mark.parametrize("damage", ["truncate", "flip", "delete", "manifest"])
def test_a_damaged_index_is_refused_with_a_clear_message_and_rebuilt(
    tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    docs = _documents()
    HybridRetriever(docs, embedder=HashingEmbedder(), index_dir=tmp_path)
    where = _current(tmp_path)
    target = where / "dense.npy"
    if damage == "truncate":
        os.truncate(target, target.stat().st_size - 100)
    elif damage == "flip":
        data = bytearray(target.read_bytes())
        data[-5] ^= 0xFF
        target.write_bytes(bytes(data))
    elif damage == "delete":
        target.unlink()
    else:
        (where / "manifest.json").write_text("{not json", encoding="utf-8")

    with pytest.raises(ondisk.IndexDamaged) as refused:
        ondisk.read_generation(tmp_path)
    assert str(where) in str(refused.value)

    recording = HashingEmbedder()
    with caplog.at_level("WARNING"):
        rebuilt = HybridRetriever(docs, embedder=recording, index_dir=tmp_path)
    assert rebuilt.index_status.startswith("built (index refused: ")
    assert "rebuilding it" in caplog.text
    assert _rankings(rebuilt) == _rankings(HybridRetriever(docs, embedder=HashingEmbedder()))
    assert ondisk.read_generation(tmp_path) is not None  # the new generation checks out


def test_a_pickled_array_is_never_loaded(tmp_path: Path) -> None:
    HybridRetriever(_documents(), embedder=HashingEmbedder(), index_dir=tmp_path)
    where = _current(tmp_path)
    target = where / "kinds.npy" if (where / "kinds.npy").exists() else where / "dense.npy"
    np.save(target, np.array([{"x": 1}], dtype=object), allow_pickle=True)
    manifest = json.loads((where / "manifest.json").read_text(encoding="utf-8"))
    entry = manifest["arrays"][target.stem]
    entry["bytes"] = target.stat().st_size
    entry["sha256"] = file_sha256(target)
    entry["sample_sha256"] = ondisk.sample_sha256(target)
    (where / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(ondisk.IndexDamaged, match="not a plain numpy array"):
        ondisk.read_generation(tmp_path)


def test_an_object_array_cannot_be_written(tmp_path: Path) -> None:
    def build(_previous: ondisk.Generation | None) -> tuple[dict[str, object], dict[str, object]]:
        return {}, {"bad": np.array(["text"], dtype=object)}

    with pytest.raises(TypeError, match="cannot go in an index file"):
        ondisk.publish(tmp_path, "k", build, None)  # type: ignore[arg-type]
    assert ondisk.current_name(tmp_path) is None
    assert not list(tmp_path.glob(".tmp-*"))


def test_an_index_folder_that_cannot_be_written_falls_back_to_memory(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "index"
    blocked.write_text("a file where the folder should be", encoding="utf-8")
    docs = _documents()
    with caplog.at_level("WARNING"):
        retriever = HybridRetriever(docs, embedder=HashingEmbedder(), index_dir=blocked)
    assert retriever.index_status.startswith("in memory (could not write")
    assert "built in memory" in caplog.text
    assert _rankings(retriever) == _rankings(HybridRetriever(docs, embedder=HashingEmbedder()))


def _big_generation(folder: Path) -> Path:
    """A published generation whose one file is far larger than the sampled blocks."""
    rows = np.arange(400_000, dtype=np.float32).reshape(-1, 4)  # 1.6 MB

    def build(_previous: ondisk.Generation | None) -> tuple[dict[str, object], dict[str, object]]:
        return {}, {"rows": rows}

    ondisk.publish(folder, "k", build, None)  # type: ignore[arg-type]
    return _current(folder) / "rows.npy"


@pytest.mark.parametrize("where", ["header", "middle block", "end"])
def test_opening_reads_samples_and_finds_an_edit_in_one(tmp_path: Path, where: str) -> None:
    target = _big_generation(tmp_path)
    size = target.stat().st_size
    offset = {"header": 100, "middle block": 64 * 1024 + (size - 128 * 1024) * 5 // 16, "end": -5}
    data = bytearray(target.read_bytes())
    data[offset[where]] ^= 0xFF
    target.write_bytes(bytes(data))
    with pytest.raises(ondisk.IndexDamaged, match="sample digest"):
        ondisk.read_generation(tmp_path)
    with pytest.raises(ondisk.IndexDamaged, match="sha256"):
        ondisk.verify(tmp_path)


def test_an_edit_between_samples_is_left_to_the_full_check(tmp_path: Path) -> None:
    target = _big_generation(tmp_path)
    data = bytearray(target.read_bytes())
    data[64 * 1024 + 8 * 1024] ^= 0xFF  # past the first 64 KiB, before the first sampled block
    target.write_bytes(bytes(data))
    opened = ondisk.read_generation(tmp_path)  # the trade: opening reads only the samples
    assert opened is not None and opened.arrays["rows"].shape == (100_000, 4)
    with pytest.raises(ondisk.IndexDamaged, match="does not match its sha256"):
        ondisk.verify(tmp_path)


def test_a_generation_without_sample_digests_is_hashed_whole(tmp_path: Path) -> None:
    target = _big_generation(tmp_path)
    manifest_path = target.parent / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    del manifest["arrays"]["rows"]["sample_sha256"]
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    assert ondisk.read_generation(tmp_path) is not None
    data = bytearray(target.read_bytes())
    data[64 * 1024 + 8 * 1024] ^= 0xFF
    target.write_bytes(bytes(data))
    with pytest.raises(ondisk.IndexDamaged, match="does not match its sha256"):
        ondisk.read_generation(tmp_path)
