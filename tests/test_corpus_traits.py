"""What the articles say about themselves (their language, their product's name) is worked out
once, when the index is built, and kept in its manifest: a process that maps the index reads it
from there instead of reading the articles again (issue 17)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from embedding_fakes import HashingEmbedder
from supportagent.agent import knowledge as knowledge_module
from supportagent.agent.knowledge import Knowledge
from supportagent.domain import DocKind, Document, Passage
from supportagent.retrieval import ondisk
from supportagent.retrieval.retriever import HybridRetriever
from supportagent.retrieval.traits import (
    corpus_traits,
    stored_language,
    stored_own_names,
)


def _documents() -> list[Document]:
    topics = {
        "invoices": "Every invoice in Ledgerkite is sent on the first day of the month.",
        "exports": "You can export your ledger from Ledgerkite as a spreadsheet at any time.",
        "users": "An owner can invite people to Ledgerkite and give each of them a role.",
        "tax": "Tax codes are set per country, and Ledgerkite applies them to each line.",
    }
    return [
        Document(
            id=f"kb-{name}",
            kind=DocKind.KB,
            title=name.title(),
            body=f"# {name.title()}\n\n{text} Ask your accountant when you are unsure.",
        )
        for name, text in topics.items()
    ]


class Recorder:
    """Stands in for one of the functions that read the articles, and counts its calls."""

    def __init__(self, answer: object) -> None:
        self.answer = answer
        self.calls: list[int] = []

    def __call__(self, passages: Sequence[Passage]) -> object:
        self.calls.append(len(passages))
        return self.answer


def _manifest(folder: Path) -> dict[str, object]:
    current = ondisk.read_generation(folder)
    assert current is not None
    return dict(current.meta)


def test_the_index_keeps_what_the_articles_say(tmp_path: Path) -> None:
    built = HybridRetriever(_documents(), embedder=HashingEmbedder(), index_dir=tmp_path)
    expected = corpus_traits(built.passages)
    assert expected == {"language": "en", "own_names": ["Ledgerkite"]}
    assert _manifest(tmp_path)["traits"] == expected
    mapped = HybridRetriever(_documents(), embedder=HashingEmbedder(), index_dir=tmp_path)
    assert mapped.index_status == "mapped"
    assert mapped.traits == expected


def test_knowledge_on_a_mapped_index_does_not_read_the_articles_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Knowledge(_documents(), embedder=HashingEmbedder(), index_dir=tmp_path)  # builds it
    language, names = Recorder("xx"), Recorder(("Other",))
    monkeypatch.setattr(knowledge_module, "corpus_language", language)
    monkeypatch.setattr(knowledge_module, "corpus_own_names", names)
    mapped = Knowledge(_documents(), embedder=HashingEmbedder(), index_dir=tmp_path)
    assert (mapped.language(), mapped.own_names()) == ("en", ("Ledgerkite",))
    assert language.calls == names.calls == []
    # In memory there is no manifest: the articles are read, once.
    in_memory = Knowledge(_documents(), embedder=HashingEmbedder())
    assert (in_memory.language(), in_memory.language()) == ("xx", "xx")
    assert in_memory.own_names() == ("Other",)
    assert language.calls == names.calls == [4]


def test_a_document_added_after_the_build_drops_what_was_kept(tmp_path: Path) -> None:
    HybridRetriever(_documents(), embedder=HashingEmbedder(), index_dir=tmp_path)
    mapped = HybridRetriever(_documents(), embedder=HashingEmbedder(), index_dir=tmp_path)
    assert mapped.traits is not None
    mapped.add(Document("kb-new", DocKind.KB, "New", "A new article about Ledgerkite."))
    assert mapped.traits is None


def test_what_a_manifest_did_not_keep_is_worked_out_again() -> None:
    assert stored_language(None) is None and stored_own_names(None) is None
    assert stored_language({"language": ""}) is None
    assert stored_language({"language": 3}) is None
    assert stored_own_names({"own_names": "Ledgerkite"}) is None
    assert stored_own_names({"own_names": ["Ledgerkite", 4]}) is None
    assert stored_own_names({"own_names": []}) == ()
    assert json.loads(json.dumps(corpus_traits([]))) == {"language": "en", "own_names": []}
