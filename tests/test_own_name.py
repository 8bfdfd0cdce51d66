"""The product's own name: found from the articles, left out of what the offline drafter
embeds, so that a question about something the knowledge base does not cover is not answered
with a sentence that only shares the product's name. Larkspur is a podcast host invented for
these tests."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drafting import hits, kb, minilm
from supportagent.agent.knowledge import Knowledge
from supportagent.agent.pipeline import Pipeline, PipelineConfig
from supportagent.domain import DocKind, Document, Ticket
from supportagent.engines.offline import OfflineEngine
from supportagent.retrieval.own_name import masked, own_names, without_names
from supportagent.store.store import Store

ARTICLES = [
    "Larkspur hosts your podcast and sends it to the directories. Open Settings to start.",
    "On the Studio plan you get 3 seats. The Owner can add more seats in Larkspur.",
    "Episodes upload in MP3 or WAV. Larkspur encodes them at 128 kbps. See `larkspur-cli`.",
    "The Owner manages billing. Write to help@larkspur.example with questions about Studio.",
]


def test_the_product_is_the_name_most_articles_use_and_never_in_lower_case() -> None:
    # "Owner" and "Settings" are capitalised too, but "Owner" is fewer articles' and
    # "owner"-free prose is not enough: the name must be inside a sentence somewhere;
    # code and addresses ("larkspur-cli", help@larkspur.example) are not prose.
    assert own_names(ARTICLES) == ("Larkspur",)


def test_a_word_also_written_in_lower_case_is_no_name() -> None:
    texts = [*ARTICLES, "Ask the owner of the Larkspur account."]
    assert own_names(texts) == ("Larkspur",)
    plain = ["The Owner can do it. Call the Owner.", "Ask the owner.", "The Owner pays."]
    assert own_names(plain) == ()


def test_a_plan_name_used_by_fewer_articles_is_not_taken() -> None:
    # "Studio", like the product's name, is capitalised inside sentences and never in lower
    # case, in three articles of four; the product's name is in all four.
    plans = [
        "On the Studio plan you get 3 seats in Larkspur.",
        "Move up from Studio in Larkspur under Billing.",
        "Larkspur keeps Studio shows for a year.",
        "Larkspur encodes every upload at 128 kbps.",
    ]
    assert own_names(plans) == ("Larkspur",)
    without_product = [p.replace("Larkspur", "the app") for p in plans]
    assert own_names(without_product) == ("Studio",)


def test_no_articles_no_name() -> None:
    assert own_names([]) == ()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("Can Larkspur compose a theme tune?", "Can it compose a theme tune?"),
        ("We installed the Larkspur plugin.", "We installed the plugin."),
        ("Larkspur's app crashed; larkspur support helped.", "its app crashed; it support helped."),
    ],
)
def test_the_name_is_left_out(text: str, said: str) -> None:
    assert without_names(text, ("Larkspur",)) == said


@given(st.text())
def test_without_a_name_nothing_changes(text: str) -> None:
    assert without_names(text, ()) == text


def test_masked_embed_sees_no_name() -> None:
    seen: list[list[str]] = []

    def record(texts: Sequence[str]) -> list[int]:
        seen.append(list(texts))
        return [len(t) for t in texts]

    embed = masked(record, ("Larkspur",))
    assert embed is not None
    embed(["Larkspur hosts shows.", "Plain text."])
    assert seen == [["it hosts shows.", "Plain text."]]
    assert masked(record, ()) is record
    assert masked(None, ("Larkspur",)) is None


INTRO = kb(
    "kb-larkspur",
    "Larkspur hosts your podcast and sends each new episode to the directories for you.",
    "Intro",
    "Getting started with Larkspur",
)
ENCODING = kb(
    "kb-encoding",
    "Larkspur encodes every upload at 128 kbps, or 96 kbps for speech-only shows.",
    "Bitrates",
    "Audio processing",
)


def _draft(names: tuple[str, ...]) -> list[str]:
    engine = OfflineEngine(embed=minilm().embed)
    engine.use_own_names(names)
    ticket = Ticket("T-1", "", "Can Larkspur compose an original theme tune for our show?")
    return [s.text for s in engine.draft(ticket, hits(INTRO, ENCODING)).sentences]


def test_a_question_the_articles_do_not_cover_gets_no_sentence_that_only_shares_the_name() -> None:
    # Named alike, the intro reads as an answer; without the name it answers nothing asked.
    assert _draft(()) != []
    assert _draft(("Larkspur",)) == []


class RecordingEngine(OfflineEngine):
    """The offline engine, keeping what the pipeline hands it for the names."""

    def __init__(self) -> None:
        super().__init__()
        self.given: list[object] = []

    def use_own_names(self, names: Sequence[str] | Callable[[], Sequence[str]]) -> None:
        self.given.append(names)
        super().use_own_names(names)


def test_the_pipeline_hands_the_engine_the_articles_name_to_read_when_a_draft_needs_it(
    tmp_path: Path,
) -> None:
    store = Store(f"sqlite:///{tmp_path / 'store.db'}")
    store.migrate()
    docs = [Document(f"kb-{i}", DocKind.KB, f"Article {i}", t) for i, t in enumerate(ARTICLES)]
    store.upsert_documents(docs)
    knowledge = Knowledge(store.documents(), embedder=None)
    engine = RecordingEngine()
    Pipeline(store, knowledge, engine, PipelineConfig())
    # Building a pipeline reads no article for the name (start-up work a triage never needs).
    assert len(engine.given) == 1 and callable(engine.given[0])
    assert knowledge._own_names is None
    assert engine.own_names == ("Larkspur",)
    assert knowledge._own_names == ("Larkspur",)
    store.close()


def test_names_given_as_a_list_are_used_as_they_are() -> None:
    engine = OfflineEngine()
    assert engine.own_names == ()
    engine.use_own_names(["Larkspur", "Studio"])
    assert engine.own_names == ("Larkspur", "Studio")
