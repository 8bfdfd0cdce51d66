"""Tokenizer, BM25 wrapper, passage splitting and the hybrid retriever."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from embedding_fakes import HashingEmbedder
from supportagent.domain import DocKind, Document, Passage
from supportagent.retrieval import retriever as retriever_module
from supportagent.retrieval.bm25 import MERGE_MIN, BM25Index, bm25_scores, top_k
from supportagent.retrieval.dense import OnnxMiniLM
from supportagent.retrieval.fusion import DEFAULT_WEIGHTS, Fusion
from supportagent.retrieval.passages import slugify, split_passages
from supportagent.retrieval.retriever import SIGNALS, HybridRetriever, dense_text
from supportagent.retrieval.text import STOPWORDS, stem, tokenize

# --- tokenizer --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Error 429", ["error", "429"]),
        ("KS-4001", ["ks", "4001", "ks-4001"]),
        ("X-RateLimit-Remaining", ["ratelimit", "remain", "x-ratelimit-remain"]),
        ("starting_after", ["start", "starting_after"]),
        ("Rotate your API keys.", ["rotat", "api", "key"]),
        ("the customer's invoices", ["customer", "invoic"]),
        ("I don't have access", ["access"]),
        ("Hi, thanks! Please help", ["help"]),
        ("v1.2 and 3.5", ["v1", "v1.2", "3.5"]),
        ("", []),
        ("... --- !!!", []),
    ],
)
def test_tokenize(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


@pytest.mark.parametrize(
    ("forms", "stemmed"),
    [
        (["update", "updates", "updated", "updating"], "updat"),
        (["charge", "charges", "charged", "charging"], "charg"),
        (["policy", "policies"], "policy"),
        (["retry", "retries", "retried"], "retry"),
        (["box", "boxes"], "box"),
        (["address", "addresses"], "address"),
        (["run", "running"], "run"),
        (["stop", "stopped"], "stop"),
        (["process", "processes", "processed", "processing"], "process"),
        (["limit", "limits", "limited", "limiting"], "limit"),
    ],
)
def test_stem_brings_word_forms_together(forms: list[str], stemmed: str) -> None:
    assert {stem(form) for form in forms} == {stemmed}


@pytest.mark.parametrize(
    "word", ["status", "analysis", "access", "fee", "need", "string", "sso", "429", "v2s", "bed"]
)
def test_stem_leaves_these_alone(word: str) -> None:
    assert stem(word) == word


def test_compound_keeps_exact_identifier_distinct() -> None:
    # "ks-4001" as a whole is its own token, so an exact identifier outranks prose
    # that only mentions its parts.
    index = BM25Index.build(["ks code 4001 appears here", "error KS-4001 was returned"])
    assert [i for i, _ in index.search("KS-4001", 2)] == [1, 0]


@given(st.text(max_size=200))
def test_tokenize_is_total_and_clean(text: str) -> None:
    tokens = tokenize(text)
    assert tokens == tokenize(text)
    for token in tokens:
        assert token
        assert token == token.lower()
        assert token not in STOPWORDS
        assert not any(ch.isspace() for ch in token)


# --- BM25 -------------------------------------------------------------------------------------


def test_bm25_three_documents_by_hand() -> None:
    # d0 = [refund, card] (len 2), d1 = [refund, refund, policy] (len 3), d2 = [password, reset]
    # N = 3, avgdl = 7/3, k1 = 1.5, b = 0.75.
    # idf(refund) = ln(1 + (3 - 2 + 0.5) / (2 + 0.5)) = ln(1.6) = 0.4700036
    # idf(card)   = ln(1 + (3 - 1 + 0.5) / (1 + 0.5)) = ln(8/3) = 0.9808293
    # norm(d0) = 1.5 * (0.25 + 0.75 * 2 / (7/3)) = 1.5 * 25/28 = 75/56
    # norm(d1) = 1.5 * (0.25 + 0.75 * 3 / (7/3)) = 1.5 * 34/28 = 51/28
    # "refund": d0 = ln(1.6) * 1 / (1 + 75/56) = ln(1.6) * 56/131  = 0.2009176
    #           d1 = ln(1.6) * 2 / (2 + 51/28) = ln(1.6) * 56/107  = 0.2459832
    # "refund card": d0 = 0.2009176 + ln(8/3) * 56/131 = 0.2009176 + 0.4192858 = 0.6202034
    texts = ["refund card", "refund refund policy", "password reset"]
    assert [tokenize(t) for t in texts] == [
        ["refund", "card"],
        ["refund", "refund", "policy"],
        ["password", "reset"],
    ]
    refund_d0 = math.log(1.6) * 56 / 131
    refund_d1 = math.log(1.6) * 56 / 107
    card_d0 = math.log(8 / 3) * 56 / 131
    index = BM25Index.build(texts)

    refund = index.search("refund", 10)
    assert [i for i, _ in refund] == [1, 0]
    assert refund[0][1] == pytest.approx(refund_d1, rel=1e-5)
    assert refund[1][1] == pytest.approx(refund_d0, rel=1e-5)
    assert refund_d1 == pytest.approx(0.2459832, abs=1e-7)

    both = index.search("refund card", 10)
    assert [i for i, _ in both] == [0, 1]
    assert both[0][1] == pytest.approx(refund_d0 + card_d0, rel=1e-5)
    assert both[0][1] == pytest.approx(0.6202034, abs=1e-6)

    reference = bm25_scores(["refund", "card"], [tokenize(t) for t in texts])
    assert reference == pytest.approx([refund_d0 + card_d0, refund_d1, 0.0], rel=1e-12)


SMALL_CORPUS = [
    "API rate limits: every key may send 100 requests per minute.",
    "When you receive HTTP 429, wait for Retry-After seconds and retry with backoff.",
    "Invoices are emailed on the first day of the month; refunds take 5-10 days.",
    "Rotate API keys from the dashboard. Old keys stop working after 24 hours.",
    "Pagination uses starting_after; an invalid cursor returns KS-4001.",
    "",
    "Webhooks retry failed deliveries with exponential backoff for three days.",
    "Rate limit headers: X-RateLimit-Remaining and X-RateLimit-Reset on every response.",
]


@pytest.mark.parametrize(
    "query",
    [
        "rate limit 429 retry",
        "how do I rotate my api keys",
        "refund invoice",
        "x-ratelimit-remaining header",
        "backoff retry webhooks deliveries",
        "KS-4001 starting_after",
    ],
)
def test_bm25_index_matches_reference(query: str) -> None:
    docs_tokens = [tokenize(t) for t in SMALL_CORPUS]
    expected = bm25_scores(tokenize(query), docs_tokens)
    index = BM25Index.build(SMALL_CORPUS)
    found = index.search(query, len(SMALL_CORPUS))
    positive = sorted(
        ((i, s) for i, s in enumerate(expected) if s > 0), key=lambda pair: (-pair[1], pair[0])
    )
    assert [i for i, _ in found] == [i for i, _ in positive]
    for (_, got), (_, want) in zip(found, positive, strict=True):
        assert got == pytest.approx(want, rel=1e-5, abs=1e-6)


def test_bm25_search_top_k_ties_and_edges() -> None:
    index = BM25Index.build(["alpha beta", "alpha beta", "gamma", "alpha"])
    # Docs 0 and 1 are identical: the tie goes to the lower index.
    assert [i for i, _ in index.search("beta", 10)] == [0, 1]
    assert [i for i, _ in index.search("alpha beta", 1)] == [0]
    assert index.search("alpha", 0) == []
    assert index.search("unknownword", 5) == []
    assert index.search("the and of", 5) == []  # nothing left after stopwords
    assert index.search("", 5) == []
    assert len(index) == 4


def test_bm25_empty_corpora() -> None:
    assert BM25Index.build([]).search("anything", 5) == []
    assert BM25Index.build(["", "the of"]).search("the", 5) == []
    assert bm25_scores(["x"], []) == []


def test_bm25_mask_restricts_results() -> None:
    import numpy as np

    index = BM25Index.build(["refund", "refund policy", "refund now"])
    mask = np.array([False, True, True])
    assert {i for i, _ in index.search("refund", 5, mask)} == {1, 2}
    with pytest.raises(ValueError):
        index.search("refund", 5, np.array([True]))


# --- passages ---------------------------------------------------------------------------------

RATE_LIMITS_BODY = """\
# Rate limits

Every API key may send 100 requests per minute.

## Handling 429

When a request returns HTTP 429 Too Many Requests, wait for the seconds in the
Retry-After header, then retry with exponential backoff.

```bash
# this is a shell comment, not a heading
curl -i https://api.example.com/v1/charges
```

### Backoff schedule

Double the wait after each retry, up to 60 seconds.

## Headers

Each response carries X-RateLimit-Remaining and X-RateLimit-Reset.

## Empty section

## Headers

A second section with the same heading.
"""


def kb(doc_id: str, title: str, body: str) -> Document:
    return Document(doc_id, DocKind.KB, title, body)


def test_split_heading_paths_and_ids() -> None:
    passages = split_passages(kb("KB-RATE", "Rate limits", RATE_LIMITS_BODY))
    assert [(p.id, p.heading_path) for p in passages] == [
        ("KB-RATE#intro", ()),  # under the H1 that repeats the title
        ("KB-RATE#handling-429", ("Handling 429",)),
        ("KB-RATE#backoff-schedule", ("Handling 429", "Backoff schedule")),
        ("KB-RATE#headers", ("Headers",)),
        ("KB-RATE#headers-2", ("Headers",)),
    ]
    first, handling = passages[0], passages[1]
    assert first.text == "Every API key may send 100 requests per minute."
    assert "# this is a shell comment" in handling.text  # fenced code is not cut at "#"
    assert handling.text.endswith("```")
    for p in passages:
        assert p.doc_id == "KB-RATE"
        assert p.kind is DocKind.KB
        assert p.title == "Rate limits"
        assert p.text == p.text.strip()
        assert p.text in RATE_LIMITS_BODY


def test_split_keeps_h1_that_differs_from_title_and_names_intro() -> None:
    body = "Before any heading.\n\n# Billing\n\nCards are charged monthly.\n"
    passages = split_passages(kb("KB-1", "Payments FAQ", body))
    assert [(p.id, p.heading_path, p.text) for p in passages] == [
        ("KB-1#intro", (), "Before any heading."),
        ("KB-1#billing", ("Billing",), "Cards are charged monthly."),
    ]


def test_split_plain_text_and_empty_documents() -> None:
    assert [p.id for p in split_passages(kb("T", "Title", "Just text."))] == ["T#intro"]
    assert split_passages(kb("E", "Empty", "")) == []
    assert split_passages(kb("H", "Headings only", "# A\n\n## B\n\n   \n")) == []


def test_long_section_splits_on_paragraph_boundaries() -> None:
    paragraphs = [f"Paragraph {i} says one thing. It says it twice." for i in range(12)]
    body = "## Setup\n\n" + "\n\n".join(paragraphs)
    passages = split_passages(kb("KB-L", "Long", body), max_chars=200)
    assert [p.id for p in passages][:3] == ["KB-L#setup", "KB-L#setup-2", "KB-L#setup-3"]
    assert all(len(p.text) <= 200 for p in passages)
    assert all(p.heading_path == ("Setup",) for p in passages)
    # Every piece is made of whole paragraphs, in order, and together they are all of them.
    pieces = [para for p in passages for para in p.text.split("\n\n")]
    assert pieces == paragraphs


def test_one_long_paragraph_splits_between_sentences() -> None:
    sentences = [f"Sentence number {i} is here." for i in range(30)]
    body = " ".join(sentences)
    passages = split_passages(kb("KB-S", "One paragraph", body), max_chars=150)
    assert len(passages) > 1
    assert all(len(p.text) <= 150 for p in passages)
    assert all(p.text.endswith(".") for p in passages)
    assert " ".join(p.text for p in passages) == body


def test_one_giant_word_is_cut_hard() -> None:
    passages = split_passages(kb("KB-W", "Word", "x" * 250), max_chars=100)
    assert [len(p.text) for p in passages] == [100, 100, 50]
    assert [p.id for p in passages] == ["KB-W#intro", "KB-W#intro-2", "KB-W#intro-3"]


def test_resolved_ticket_is_one_passage() -> None:
    body = "Question: I was charged twice.\n\n## Not a heading split\n\nAnswer: We refunded it."
    doc = Document("T-77", DocKind.RESOLVED, "Charged twice", body)
    [passage] = split_passages(doc, max_chars=10)
    assert passage.id == "T-77#answer"
    assert passage.kind is DocKind.RESOLVED
    assert passage.heading_path == ()
    assert passage.text == body
    assert split_passages(Document("T-78", DocKind.RESOLVED, "Empty", "  ")) == []


def test_slugify() -> None:
    assert slugify("Handling 429 (Too Many Requests)") == "handling-429-too-many-requests"
    assert slugify("Café & Crème") == "cafe-creme"
    assert slugify("!!!") == "section"
    assert len(slugify("word " * 40)) <= 60
    assert not slugify("word " * 40).endswith("-")


def test_slug_collisions_stay_unique() -> None:
    body = "## Step\n\na\n\n## Step 2\n\nb\n\n## Step\n\nc\n"
    ids = [p.id for p in split_passages(kb("D", "Steps", body))]
    assert len(ids) == len(set(ids)) == 3
    assert ids[:2] == ["D#step", "D#step-2"]


markdownish = st.lists(
    st.one_of(
        st.sampled_from(["# Title", "## Section", "### Sub", "#### Deep", "```", "", "", "  "]),
        st.text(alphabet=st.characters(codec="ascii", exclude_characters="\r"), max_size=120),
    ),
    max_size=30,
).map("\n".join)


@given(markdownish, st.integers(min_value=20, max_value=400))
def test_split_properties(body: str, max_chars: int) -> None:
    doc = kb("P", "Title", body)
    passages = split_passages(doc, max_chars=max_chars)
    assert passages == split_passages(doc, max_chars=max_chars)  # deterministic
    ids = [p.id for p in passages]
    assert len(ids) == len(set(ids))
    for p in passages:
        assert p.id.startswith("P#")
        assert all(ch.isalnum() or ch == "-" for ch in p.id[2:])
        assert p.text.strip() == p.text != ""
        assert len(p.text) <= max_chars
        assert p.text in body


# --- hybrid retriever -------------------------------------------------------------------------

PAGINATION_BODY = """\
## Cursors

List endpoints return 25 items per page. Pass starting_after with the last id you received
to fetch the next page.

## Errors

An invalid or expired cursor returns error KS-4001.
"""


def corpus() -> list[Document]:
    return [
        kb("KB-RATE", "Rate limits", RATE_LIMITS_BODY),
        kb("KB-PAGE", "Pagination", PAGINATION_BODY),
        kb(
            "KB-PASS",
            "Resetting your password",
            "## Reset link\n\nClick Forgot password on the sign-in page; we email a reset link "
            "that is valid for 30 minutes.",
        ),
        Document(
            "T-1",
            DocKind.RESOLVED,
            "Charged twice for one subscription",
            "Question: I was charged twice this month.\n\nAnswer: We refunded the duplicate "
            "charge; refunds take 5-10 business days to appear on your statement.",
            meta={"question": "I was charged twice this month."},
        ),
        Document(
            "T-2",
            DocKind.RESOLVED,
            "Too many requests from our integration",
            "Question: Our sync job gets 429 errors.\n\nAnswer: Spread the requests out and "
            "honour Retry-After; see the rate limit article.",
        ),
    ]


#: BM25 only, fused by plain RRF: the lexical half of the retriever on its own.
LEXICAL_RRF = Fusion("rrf", {"body": 1.0, "title": 1.0})


@pytest.fixture
def retriever() -> HybridRetriever:
    return HybridRetriever(corpus(), fusion=LEXICAL_RRF)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("We keep getting 429 Too Many Requests, how long should we wait?", "KB-RATE#handling-429"),
        ("What does error KS-4001 mean?", "KB-PAGE#errors"),
        ("how do I get the next page with starting_after", "KB-PAGE#cursors"),
        ("I forgot my password", "KB-PASS#reset-link"),
        ("You charged my card twice, I want a refund", "T-1#answer"),
        ("which header tells me how many requests remain", "KB-RATE#headers"),
    ],
)
def test_finds_the_right_passage(retriever: HybridRetriever, query: str, expected: str) -> None:
    hits = retriever.search(query, k=3)
    assert hits[0].id == expected


def test_kinds_filter(retriever: HybridRetriever) -> None:
    query = "429 too many requests"
    everything = retriever.search(query, k=20)
    assert {h.passage.kind for h in everything} == {DocKind.KB, DocKind.RESOLVED}
    resolved = retriever.search(query, k=20, kinds={DocKind.RESOLVED})
    assert [h.id for h in resolved] == ["T-2#answer"]
    assert resolved[0].rank == 1
    kb_only = retriever.search(query, k=20, kinds=[DocKind.KB])
    assert kb_only and all(h.passage.kind is DocKind.KB for h in kb_only)
    assert retriever.search(query, kinds=()) == []


def test_hits_explain_their_score(retriever: HybridRetriever) -> None:
    hits = retriever.search("rate limit 429 retry backoff", k=10)
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    for hit in hits:
        assert hit.signals
        assert set(hit.signals) <= set(SIGNALS)
        for signal in hit.signals.values():
            assert signal.rank >= 1
            assert signal.score > 0
        # The fused score is the RRF of the ranks the explanation shows (k = 60, weights 1).
        rrf = sum(1 / (60 + s.rank) for s in hit.signals.values())
        assert hit.score == pytest.approx(rrf, rel=1e-12)
    # Within one signal, ranks follow raw scores.
    for name in SIGNALS:
        ranked = sorted((h.signals[name] for h in hits if name in h.signals), key=lambda s: s.rank)
        assert [s.score for s in ranked] == sorted((s.score for s in ranked), reverse=True)


def test_weights_and_rrf_k_are_used() -> None:
    retriever = HybridRetriever(corpus(), fusion=Fusion("rrf", {"body": 1, "title": 0.5}, 10))
    for hit in retriever.search("refund for a duplicate charge", k=5):
        weights = {"body": 1.0, "title": 0.5}
        rrf = sum(weights[name] / (10 + s.rank) for name, s in hit.signals.items())
        assert hit.score == pytest.approx(rrf, rel=1e-12)


def test_invalid_settings() -> None:
    with pytest.raises(ValueError):
        HybridRetriever([], fusion=Fusion("rrf", rrf_k=0))
    with pytest.raises(ValueError):
        HybridRetriever([], fusion=Fusion(weights={"body": -1.0}))
    with pytest.raises(ValueError):
        HybridRetriever([], fusion=Fusion(weights={"bogus": 1.0}))
    with pytest.raises(ValueError):
        Fusion("borda")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        HybridRetriever([]).search("x", k=0)


def test_empty_retriever_and_empty_queries(retriever: HybridRetriever) -> None:
    empty = HybridRetriever([])
    assert len(empty) == 0
    assert empty.search("anything") == []
    assert retriever.search("") == []
    assert retriever.search("the and of to") == []
    assert retriever.search("qwertyuiop") == []


def test_passages_len_and_get_passage(retriever: HybridRetriever) -> None:
    ids = [p.id for p in retriever.passages]
    assert len(retriever) == len(ids) == len(set(ids))
    assert ids[0] == "KB-RATE#intro"
    passage = retriever.get_passage("KB-PAGE#errors")
    assert passage is not None and "KS-4001" in passage.text
    assert retriever.get_passage("KB-PAGE#nope") is None


def test_add_new_document_is_found_next_search(retriever: HybridRetriever) -> None:
    assert all(h.passage.doc_id != "KB-HOOK" for h in retriever.search("webhook signing"))
    before = len(retriever)
    retriever.add(
        kb("KB-HOOK", "Webhooks", "## Signing\n\nEach webhook is signed with a signing secret.")
    )
    assert len(retriever) == before + 1
    assert retriever.search("webhook signing secret", k=1)[0].id == "KB-HOOK#signing"


def test_a_repeated_query_reuses_its_scores_until_the_index_changes() -> None:
    retriever = HybridRetriever(corpus())  # the default, weighted fusion
    query = "webhook signing secret"
    both = retriever.search(query, k=50)
    articles = retriever.search(query, k=50, kinds={DocKind.KB})  # served from the same scores
    fresh = HybridRetriever(corpus()).search(query, k=50, kinds={DocKind.KB})
    assert [(h.id, h.score, h.signals) for h in articles] == [
        (h.id, h.score, h.signals) for h in fresh
    ]
    assert [h.id for h in articles] == [h.id for h in both if h.passage.kind is DocKind.KB]
    retriever.add(
        kb("KB-HOOK", "Webhooks", "## Signing\n\nEach webhook is signed with a signing secret.")
    )
    assert retriever.search(query, k=1)[0].id == "KB-HOOK#signing"  # not the old scores


def test_kept_scores_are_bounded_in_bytes_and_the_last_query_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import supportagent.retrieval.retriever as module

    # With an embedder: exact dense scores are an array over the corpus, counted at once.
    retriever = HybridRetriever(corpus(), embedder=HashingEmbedder())
    queries = ["webhook signing secret", "forgot password", "refund", "invoice"]
    for query in queries:
        retriever.search(query)
    assert len(retriever._recent) == len(queries)  # a small corpus keeps several
    one = sum(a.nbytes for a in next(iter(retriever._recent.values()))[1].values())
    monkeypatch.setattr(module, "_RECENT_BYTES", one)  # room for one query's arrays only
    fresh = HybridRetriever(corpus(), embedder=HashingEmbedder())
    expected = fresh.search("password link", kinds={DocKind.KB})
    for query in ["webhook retries", "card declined", "password link"]:  # not seen yet
        retriever.search(query)
    assert [key[0] for key in retriever._recent] == ["password link"]
    assert retriever.search("password link", kinds={DocKind.KB}) == expected  # reused, the same
    assert [key[0] for key in retriever._recent] == ["password link"]


def test_add_replaces_a_document_with_the_same_id(retriever: HybridRetriever) -> None:
    assert retriever.search("forgot password", k=1)[0].id == "KB-PASS#reset-link"
    retriever.add(
        kb("KB-PASS", "Resetting your password", "## Passkeys\n\nSign in with a passkey instead.")
    )
    assert all(h.passage.doc_id != "KB-PASS" for h in retriever.search("forgot link minutes"))
    assert retriever.get_passage("KB-PASS#reset-link") is None
    assert retriever.search("passkey", k=1)[0].id == "KB-PASS#passkeys"
    # The replaced document keeps its place in the passage order.
    assert [p.doc_id for p in retriever.passages].index("KB-PASS") < [
        p.doc_id for p in retriever.passages
    ].index("T-1")


def test_add_does_not_resplit_unchanged_documents(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real_split = split_passages

    def counting_split(doc: Document, max_chars: int = 1200) -> list[Passage]:
        calls.append(doc.id)
        return list(real_split(doc, max_chars))

    monkeypatch.setattr(retriever_module, "split_passages", counting_split)
    retriever = HybridRetriever(corpus())
    assert calls == ["KB-RATE", "KB-PAGE", "KB-PASS", "T-1", "T-2"]
    calls.clear()
    retriever.add(kb("KB-NEW", "New", "Brand new article about invoices."))
    assert calls == ["KB-NEW"]
    calls.clear()
    retriever.add(kb("KB-NEW", "New", "Brand new article about invoices."))  # unchanged
    assert calls == []


def test_concurrent_readers_during_adds() -> None:
    retriever = HybridRetriever(corpus())
    errors: list[BaseException] = []
    stop = threading.Event()

    def read() -> None:
        try:
            while not stop.is_set():
                hits = retriever.search("429 retry", k=5)
                assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
                assert len(hits) >= 3
        except BaseException as exc:  # pragma: no cover - only on failure
            errors.append(exc)

    readers = [threading.Thread(target=read) for _ in range(4)]
    for thread in readers:
        thread.start()
    for i in range(20):
        retriever.add(kb(f"KB-X{i}", f"Extra {i}", f"Extra article {i} about retry and 429."))
    stop.set()
    for thread in readers:
        thread.join()
    assert errors == []
    assert len(retriever.search("extra article", k=50)) >= 20


# --- weighted fusion, dense signal, incremental index ------------------------------------------


def test_default_fusion_scores_are_the_weighted_sum_of_normalised_signals() -> None:
    embedder = HashingEmbedder()
    retriever = HybridRetriever(corpus(), embedder=embedder)
    query = "how long should we wait after 429 too many requests"
    hits = retriever.search(query, k=6)
    scales = retriever.scales(query)
    assert scales["dense"] == 1.0 and scales["body"] > 0 and scales["title"] > 0
    weights = DEFAULT_WEIGHTS
    # The body's scale carries this query's lexical trust factor (fusion.lexical_trust).
    ceiling = retriever._snapshot.indexes["body"].ceiling(tokenize(query))
    best = float(retriever._snapshot.indexes["body"].scores(tokenize(query)).max()) / ceiling
    trust = retriever.fusion.lexical_trust
    assert trust > 0 and scales["body"] == pytest.approx(ceiling / (1 + trust * best))
    query_vector = embedder.embed([query])[0]
    for hit in hits:
        assert set(hit.signals) <= set(SIGNALS) and "dense" in hit.signals
        expected = sum(
            weights[name] * max(signal.score, 0.0) / scales[name]
            for name, signal in hit.signals.items()
        )
        assert hit.score == pytest.approx(expected, rel=1e-5)
        passage_vector = embedder.embed([dense_text(hit.passage)])[0]
        assert hit.signals["dense"].score == pytest.approx(float(passage_vector @ query_vector))
    # Ranks within a signal follow its raw scores; the fused order follows the fused score.
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    for name in SIGNALS:
        shown = sorted((h.signals[name] for h in hits if name in h.signals), key=lambda s: s.rank)
        assert [s.score for s in shown] == sorted((s.score for s in shown), reverse=True)


def test_lexical_scores_stay_below_their_scale() -> None:
    retriever = HybridRetriever(corpus())
    for query in ("429 retry", "KS-4001 starting_after cursor", "password reset link"):
        scales = retriever.scales(query)
        for hit in retriever.search(query, k=10):
            for name in ("body", "title"):
                if name in hit.signals:
                    assert 0 < hit.signals[name].score < scales[name]


def test_dense_signal_finds_a_paraphrase_bm25_misses() -> None:
    query = "my card was billed two times for the same plan"
    lexical = HybridRetriever(corpus(), fusion=Fusion(weights={"body": 1.0}))
    assert all(h.passage.doc_id != "T-1" for h in lexical.search(query, k=1))
    hybrid = HybridRetriever(corpus(), embedder=OnnxMiniLM())
    top = hybrid.search(query, k=1)[0]
    assert top.passage.doc_id == "T-1"
    assert top.signals["dense"].rank == 1
    only_resolved = hybrid.search(query, k=3, kinds={DocKind.RESOLVED})
    assert {h.passage.kind for h in only_resolved} == {DocKind.RESOLVED}


def test_fusion_can_change_per_search() -> None:
    retriever = HybridRetriever(corpus(), embedder=HashingEmbedder())
    query = "429 too many requests"
    dense_only = retriever.search(query, k=3, fusion=Fusion(weights={"dense": 1.0}))
    assert all(set(h.signals) == {"dense"} for h in dense_only)
    rrf = retriever.search(query, k=3, fusion=Fusion("rrf"))
    for hit in rrf:
        assert hit.score == pytest.approx(sum(1 / (60 + s.rank) for s in hit.signals.values()))
    assert retriever.signals() == ("body", "title", "dense")
    assert HybridRetriever(corpus()).signals() == ("body", "title")  # no embedder, no dense


def test_adding_a_document_embeds_only_its_passages() -> None:
    embedder = HashingEmbedder()
    retriever = HybridRetriever(corpus(), embedder=embedder)
    assert embedder.embedded == len(retriever)  # one batch at build time
    hook = kb("KB-HOOK", "Webhooks", "## Signing\n\nEach webhook is signed with a signing secret.")
    retriever.add(hook)
    assert embedder.calls[-1] == [dense_text(p) for p in retriever.passages_of("KB-HOOK")]
    hits = retriever.search("webhook signing secret", k=1)
    assert hits[0].id == "KB-HOOK#signing" and "dense" in hits[0].signals
    calls = len(embedder.calls)
    retriever.add(hook)  # unchanged: nothing to embed
    assert len(embedder.calls) == calls


def test_incremental_bm25_is_exact_while_the_average_length_holds() -> None:
    docs = [["refund", "card"], ["refund", "policy"], ["password", "reset"], ["card", "limit"]]
    grown = BM25Index.from_tokens(docs[:2]).with_added(docs[2:3]).with_added(docs[3:])
    for query in (["refund", "card"], ["reset"], ["limit", "policy", "card"]):
        assert grown.scores(query).tolist() == pytest.approx(bm25_scores(query, docs), rel=1e-6)


def test_incremental_bm25_stays_close_to_a_rebuild() -> None:
    docs = [tokenize(t) for t in SMALL_CORPUS]
    grown = BM25Index.from_tokens(docs[:5])
    for tokens in docs[5:]:
        grown = grown.with_added([tokens])
    rebuilt = BM25Index.from_tokens(docs)
    assert len(grown) == len(rebuilt) == len(docs)
    for query in ("rate limit 429 retry", "webhooks backoff", "x-ratelimit-remaining"):
        tokens = tokenize(query)
        # idf is exact; only the length normalisation uses the average length of the last
        # merge (here 5 of 8 documents, far beyond the tail a retriever lets grow).
        assert [grown.idf(t) for t in tokens] == [rebuilt.idf(t) for t in tokens]
        assert np.allclose(grown.scores(tokens), rebuilt.scores(tokens), rtol=0.1, atol=1e-6)
        assert [i for i, _ in grown.search(query, 3)] == [i for i, _ in rebuilt.search(query, 3)]


def test_bm25_tail_asks_for_a_merge_once_it_grows() -> None:
    index = BM25Index.from_tokens([["alpha", "beta"]] * 100)
    for i in range(MERGE_MIN):
        index = index.with_added([[f"word{i}"]])
        assert not index.needs_merge
    index = index.with_added([["one", "more"]])
    assert index.needs_merge
    assert index.search("word3", 5) == [(103, pytest.approx(index.scores(["word3"])[103]))]


def test_many_adds_stay_searchable_and_correct() -> None:
    retriever = HybridRetriever(corpus(), fusion=LEXICAL_RRF)
    for i in range(MERGE_MIN + 10):  # past a merge of the BM25 tail
        retriever.add(kb(f"KB-N{i}", f"Note {i}", f"Note number{i} about quokka habitats."))
    hits = retriever.search("number7 quokka", k=3)
    assert hits[0].passage.doc_id == "KB-N7"
    assert retriever.get_passage("KB-N70#intro") is not None
    assert retriever.search("forgot password", k=1)[0].id == "KB-PASS#reset-link"


def test_stored_vectors_stay_right_while_the_matrix_grows() -> None:
    embedder = HashingEmbedder()
    retriever = HybridRetriever(corpus()[:2], embedder=embedder)
    errors: list[BaseException] = []
    stop = threading.Event()

    def read() -> None:
        try:
            while not stop.is_set():
                for hit in retriever.search("extra article retry", k=5):
                    assert hit.signals["dense"].score <= 1.0 + 1e-5
        except BaseException as exc:  # pragma: no cover - only on failure
            errors.append(exc)

    reader = threading.Thread(target=read)
    reader.start()
    for i in range(40):  # the dense rows grow past several doublings
        retriever.add(kb(f"KB-G{i}", f"Grow {i}", f"Extra article {i} about retry number{i}."))
    stop.set()
    reader.join()
    assert errors == []
    for passage in retriever.passages:
        similarity = retriever.similarity(dense_text(passage), [passage.id])
        assert similarity is not None and similarity[0] == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_top_k_of_a_long_array_is_the_sorted_top_with_ties_and_masks(seed: int) -> None:
    rng = np.random.default_rng(seed)
    # Long enough for the sampled bound; coarse values so that ties are common, zeros and
    # negatives that must never be returned.
    scores = np.round(rng.normal(0.0, 1.0, 200_000), 2).astype(np.float32)
    scores[rng.random(200_000) < 0.3] = 0.0
    mask = rng.random(200_000) < 0.5
    for k, m in [(1, None), (10, None), (50, mask), (10, ~mask)]:
        allowed = np.ones(200_000, dtype=bool) if m is None else m
        order = sorted(
            (i for i in range(200_000) if allowed[i] and scores[i] > 0),
            key=lambda i: (-scores[i], i),
        )[:k]
        assert top_k(scores, k, m) == [(i, float(scores[i])) for i in order]
    few = np.zeros(100_000, dtype=np.float32)
    few[[5, 70_000, 99_999]] = [0.5, 0.5, 0.25]  # fewer positives than the sample needs
    assert top_k(few, 10) == [(5, 0.5), (70_000, 0.5), (99_999, 0.25)]
