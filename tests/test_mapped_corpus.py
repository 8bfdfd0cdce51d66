"""Documents and passages read from the index folder instead of kept as objects (issue 17).

Real files in a temporary folder, the real retriever and ``HashingEmbedder``: a retriever that
maps its corpus must answer every question about documents and passages as one that keeps
them in memory, after adds and replacements too.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from embedding_fakes import HashingEmbedder
from supportagent.domain import DocKind, Document
from supportagent.retrieval import ondisk
from supportagent.retrieval.mapped_corpus import MappedPassages
from supportagent.retrieval.retriever import HybridRetriever

QUERIES = ("rotate the api key", "refund for a failed payment", "unicode sms segment")


def _documents() -> list[Document]:
    return [
        Document(
            "kb-keys",
            DocKind.KB,
            "Keys",
            "# Keys\n\nRotate an API key from the dashboard.\n\n## Old keys\n\nThey work an hour.",
            source="kb/keys.md",
        ),
        Document(
            "kb-sms",
            DocKind.KB,
            "SMS — Unicode",
            "A message with unicode (é, 漢字, 🙂) uses 70 characters per segment.",
        ),
        Document(
            "res-1",
            DocKind.RESOLVED,
            "Refund",
            "Was my refund sent?\n\nRefunds for a failed payment take 5 days.",
            linked_docs=("kb-keys",),
            meta={"question": "Was my refund sent?", "answer": "5 days", "flags": [1, None]},
        ),
    ]


def _everything(retriever: HybridRetriever) -> tuple[object, ...]:
    """What callers read of documents and passages, and what search returns."""
    ids = [p.id for p in retriever.passages]
    doc_ids = [*sorted({p.doc_id for p in retriever.passages}), "missing"]
    return (
        list(retriever.passages),
        [retriever.get_passage(i) for i in [*ids, "missing#x"]],
        [
            (
                retriever.document(d),
                (retriever.document(d) or Document("", DocKind.KB, "", "")).meta,
            )
            for d in doc_ids
        ],
        [retriever.passages_of(d) for d in doc_ids],
        [
            [(h.passage, h.rank, h.score, h.signals) for h in retriever.search(q, k=4)]
            for q in QUERIES
        ],
        [retriever.search(q, k=2, kinds={DocKind.RESOLVED}) for q in QUERIES],
        retriever.similarity("rotate a key", [*ids, "missing#x"]),
    )


def test_a_mapped_corpus_answers_as_the_objects_did(tmp_path: Path) -> None:
    docs = _documents()
    in_memory = HybridRetriever(docs, embedder=HashingEmbedder())
    HybridRetriever(docs, embedder=HashingEmbedder(), index_dir=tmp_path)
    mapped = HybridRetriever(docs, embedder=HashingEmbedder(), index_dir=tmp_path)
    assert mapped.index_status == "mapped"
    assert isinstance(mapped.passages, MappedPassages)  # not a tuple of objects
    assert _everything(mapped) == _everything(in_memory)


def test_adding_and_replacing_documents_over_a_mapped_corpus(tmp_path: Path) -> None:
    docs = _documents()
    HybridRetriever(docs, embedder=HashingEmbedder(), index_dir=tmp_path)
    mapped = HybridRetriever(docs, embedder=HashingEmbedder(), index_dir=tmp_path)
    in_memory = HybridRetriever(docs, embedder=HashingEmbedder())
    approved = Document(
        "res-2",
        DocKind.RESOLVED,
        "Segments",
        "How long is a segment?\n\nA unicode segment is 70 characters.",
        linked_docs=("kb-sms",),
        meta={"question": "How long is a segment?"},
    )
    for retriever in (mapped, in_memory):
        retriever.add(approved)
        retriever.add(Document("kb-new", DocKind.KB, "Sandbox", "Sandbox numbers never send."))
    assert _everything(mapped) == _everything(in_memory)
    for retriever in (mapped, in_memory):  # a replaced article keeps its place
        retriever.add(Document("kb-sms", DocKind.KB, "SMS", "Segments hold 160 GSM characters."))
    assert _everything(mapped) == _everything(in_memory)
    assert [d for d in mapped._prepared] == ["kb-keys", "kb-sms", "res-1", "res-2", "kb-new"]


def test_a_change_only_to_a_document_field_rebuilds_the_index(tmp_path: Path) -> None:
    docs = _documents()
    HybridRetriever(docs, embedder=HashingEmbedder(), index_dir=tmp_path)
    relinked = [*docs[:2], replace(docs[2], linked_docs=("kb-sms",))]
    reopened = HybridRetriever(relinked, embedder=HashingEmbedder(), index_dir=tmp_path)
    assert reopened.index_status == "built (the documents changed)"
    doc = reopened.document("res-1")
    assert doc is not None and doc.linked_docs == ("kb-sms",)


def test_a_meta_that_json_would_change_keeps_the_documents_in_memory(tmp_path: Path) -> None:
    docs = _documents()
    docs[2] = replace(docs[2], meta={"question": "Refund?", "pair": (1, 2)})
    HybridRetriever(docs, embedder=HashingEmbedder(), index_dir=tmp_path)
    mapped = HybridRetriever(docs, embedder=HashingEmbedder(), index_dir=tmp_path)
    assert mapped.index_status == "mapped"
    assert isinstance(mapped.passages, tuple)
    doc = mapped.document("res-1")
    assert doc is not None and doc.meta["pair"] == (1, 2)  # not turned into a list
    assert _everything(mapped) == _everything(HybridRetriever(docs, embedder=HashingEmbedder()))


def test_a_generation_saved_before_the_corpus_was_kept_is_rebuilt(tmp_path: Path) -> None:
    """An older index: no corpus arrays and a key of the older form; it is rebuilt once,
    reusing its vectors."""
    docs = _documents()
    HybridRetriever(docs, embedder=HashingEmbedder(), index_dir=tmp_path)
    where = tmp_path / ondisk.current_name(tmp_path)  # type: ignore[operator]
    manifest = json.loads((where / "manifest.json").read_text(encoding="utf-8"))
    manifest["key"] = "a key of the older form"
    manifest["arrays"] = {
        n: e for n, e in manifest["arrays"].items() if not n.startswith("corpus.")
    }
    (where / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    recording = HashingEmbedder()
    reopened = HybridRetriever(docs, embedder=recording, index_dir=tmp_path)
    assert reopened.index_status == "built (the documents changed)"
    sent = [text for batch in recording.calls for text in batch]
    assert sent == ["Was my refund sent?"]  # the history's question; no passage again
    assert isinstance(reopened.passages, MappedPassages)
    assert _everything(reopened) == _everything(HybridRetriever(docs, embedder=HashingEmbedder()))
