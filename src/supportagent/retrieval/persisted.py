"""The retriever's index as ``ondisk`` generations: what is saved, its key, what is reused.

A generation holds the BM25 postings of both lexical signals, the passage vectors with the
content digest of the text each one embeds, and the documents and passages themselves
(``mapped_corpus.py``). Its key is a digest of the embedder's model id, of every passage (id,
kind, indexed texts) and of every document (all its fields), in order: when the store's
documents have not changed, the key matches and nothing is tokenized or embedded. A
generation saved before the documents were kept in it has a key of the older form, so it
is rebuilt once when it is next opened (its vectors reused, nothing embedded again).
When they have, BM25 is rebuilt (its idf spans the whole corpus) and a vector is taken from
the previous generation whenever the text it embeds is the same; only new or edited passages
reach the embedder.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from supportagent.domain import Document, Passage
from supportagent.retrieval import ivf, mapped_corpus, ondisk
from supportagent.retrieval.bm25 import BM25Index
from supportagent.retrieval.dense import Embedder, Progress, Vectors, embed_with_progress
from supportagent.retrieval.passages import dense_text, title_text
from supportagent.retrieval.text import tokenize
from supportagent.retrieval.traits import corpus_traits

log = logging.getLogger(__name__)

LEXICAL = ("body", "title")
_DIGEST = 32
#: Names the form of the key: a key without the documents (before they were saved) never
#: equals one with them.
_KEY_FORM = "passages+documents"


@dataclass(frozen=True, slots=True)
class Loaded:
    """What a search needs, from one generation; ``status`` says how it came to be."""

    indexes: Mapping[str, BM25Index]
    dense: Vectors | None
    status: str
    #: The approximate dense index, kept for corpora of ``ivf.MIN_PASSAGES`` passages or more.
    ivf: ivf.IVFIndex | None = None
    #: The documents and passages, mapped; None when the corpus could not be saved as it is.
    corpus: mapped_corpus.MappedCorpus | None = None
    #: What the articles say about themselves (``traits.corpus_traits``), kept at build; None
    #: for an index built before they were kept.
    traits: Mapping[str, Any] | None = None


def dense_keys(passages: Sequence[Passage]) -> list[bytes]:
    """The sha256 of each passage's embedded text (the embedding cache's key, as bytes)."""
    return [hashlib.sha256(dense_text(p).encode("utf-8")).digest() for p in passages]


def corpus_key(
    model_id: str | None, passages: Sequence[Passage], documents: Mapping[str, Document]
) -> str:
    """A digest of everything the index depends on and holds, in order."""
    digest = hashlib.sha256(f"{_KEY_FORM}\0{model_id}\0{len(passages)}\0".encode())
    for passage in passages:
        title = title_text(passage, documents[passage.doc_id])
        for part in (passage.id, passage.kind.value, passage.text, title, dense_text(passage)):
            digest.update(part.encode("utf-8"))
            digest.update(b"\0")
    for doc in documents.values():
        linked = (str(len(doc.linked_docs)), *doc.linked_docs)
        for part in (doc.id, doc.kind.value, doc.title, doc.body, doc.source, *linked):
            digest.update(part.encode("utf-8", "surrogatepass"))
            digest.update(b"\0")
        digest.update(repr(doc.meta).encode("utf-8", "surrogatepass"))  # JSON-like values
        digest.update(b"\0")
    return digest.hexdigest()


class IndexNotCurrent(LookupError):
    """The index on disk is missing, refused or of other documents, and was not to be built."""


def open_index(
    folder: Path,
    passages: Sequence[Passage],
    documents: Mapping[str, Document],
    embedder: Embedder | None,
    progress: Progress | None = None,
    *,
    build: bool = True,
) -> Loaded:
    """Map the generation that matches the corpus, or build (reusing vectors) and publish it.

    ``build=False``: map it or raise IndexNotCurrent, saying why (a caller that reads the
    store without writing to it, and opens it for writing only when it must; see
    ``store/readonly.py``)."""
    model_id = embedder.model_id if embedder is not None else None
    key = corpus_key(model_id, passages, documents)
    reason = "no index on disk"
    current: ondisk.Generation | None = None
    try:
        current = ondisk.read_generation(folder)
    except ondisk.IndexDamaged as exc:
        reason = f"index refused: {exc}"
        if not build:  # the caller builds it next, and warns then
            raise IndexNotCurrent(reason) from None
        log.warning("search index under %s refused (%s); rebuilding it", folder, exc)
    if current is not None and current.key == key:
        return _unpack(current, "mapped")
    if current is not None:
        reason = "the documents changed"
    if not build:
        raise IndexNotCurrent(reason)

    def generation(previous: ondisk.Generation | None) -> tuple[dict[str, Any], dict[str, Any]]:
        return _build(passages, documents, embedder, previous, progress)

    published, built = ondisk.publish(folder, key, generation, current)
    return _unpack(published, f"built ({reason})" if built else "mapped (another process built it)")


def _build(
    passages: Sequence[Passage],
    documents: Mapping[str, Document],
    embedder: Embedder | None,
    previous: ondisk.Generation | None,
    progress: Progress | None,
) -> tuple[dict[str, Any], dict[str, npt.NDArray[Any]]]:
    arrays: dict[str, npt.NDArray[Any]] = {}
    meta: dict[str, Any] = {"passages": len(passages), "traits": corpus_traits(passages)}
    texts = {
        "body": [p.text for p in passages],
        "title": [title_text(p, documents[p.doc_id]) for p in passages],
    }
    for signal in LEXICAL:
        index = BM25Index.from_tokens([tokenize(text) for text in texts[signal]])
        parts, numbers = index.to_arrays()
        arrays.update({f"{signal}.{name}": array for name, array in parts.items()})
        meta[signal] = numbers
    if embedder is not None and passages:
        keys = dense_keys(passages)
        vectors, reused = _reuse(keys, previous, embedder.model_id)
        missing = [i for i, key in enumerate(keys) if key not in vectors]
        fresh = embed_with_progress(embedder, [dense_text(passages[i]) for i in missing], progress)
        for row, i in enumerate(missing):
            vectors[keys[i]] = fresh[row]
        arrays["dense"] = np.vstack([vectors[key] for key in keys]).astype(np.float32)
        arrays["dense_keys"] = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(-1, _DIGEST)
        meta.update(model_id=embedder.model_id, reused=reused, embedded=len(missing))
        if len(passages) >= ivf.MIN_PASSAGES:
            built = ivf.build(arrays["dense"])
            arrays.update({f"ivf.{name}": array for name, array in built.items()})
    try:
        arrays.update(mapped_corpus.encode(_grouped(passages, documents)))
    except mapped_corpus.CannotMap as exc:
        log.info("documents kept in memory, not in the index: %s", exc)
    return meta, arrays


def _grouped(
    passages: Sequence[Passage], documents: Mapping[str, Document]
) -> list[tuple[Document, Sequence[Passage]]]:
    """Each document with its passages, in the documents' order (the passages follow it)."""
    of: dict[str, list[Passage]] = {doc_id: [] for doc_id in documents}
    for passage in passages:
        of[passage.doc_id].append(passage)
    return [(documents[doc_id], found) for doc_id, found in of.items()]


def _reuse(
    keys: Sequence[bytes], previous: ondisk.Generation | None, model_id: str
) -> tuple[dict[bytes, Vectors], int]:
    """Vectors of the previous generation whose text is still in the corpus, by digest."""
    if previous is None or previous.meta.get("model_id") != model_id:
        return {}, 0
    old_keys, old = previous.arrays.get("dense_keys"), previous.arrays.get("dense")
    if old_keys is None or old is None:
        return {}, 0
    wanted = set(keys)
    found: dict[bytes, Vectors] = {}
    for row, key in enumerate(bytes(k) for k in old_keys):
        if key in wanted and key not in found:
            found[key] = np.array(old[row], dtype=np.float32)
    return found, len(found)


def _unpack(generation: ondisk.Generation, status: str) -> Loaded:
    arrays, meta = generation.arrays, generation.meta
    indexes = {}
    for signal in LEXICAL:
        parts = {
            name.split(".", 1)[1]: array
            for name, array in arrays.items()
            if name.startswith(f"{signal}.")
        }
        numbers = meta[signal]
        indexes[signal] = BM25Index.from_arrays(parts, int(numbers["size"]), numbers["avgdl"])
    ivf_parts = {n.split(".", 1)[1]: a for n, a in arrays.items() if n.startswith("ivf.")}
    approximate = ivf.IVFIndex.from_arrays(ivf_parts) if ivf_parts else None
    corpus = (
        mapped_corpus.MappedCorpus(arrays) if mapped_corpus.MappedCorpus.present(arrays) else None
    )
    traits = meta.get("traits")
    return Loaded(
        indexes,
        arrays.get("dense"),
        status,
        approximate,
        corpus,
        traits if isinstance(traits, Mapping) else None,
    )
