"""Deterministic grounding checks: citations, support, facts and conflicting evidence."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from supportagent.agent.facts import SUBJECT_OVERLAP
from supportagent.agent.grounding import SUPPORT_THRESHOLD, check_grounding
from supportagent.domain import DocKind, Draft, DraftSentence, Passage, Verdict

KB_TEXT = (
    "Message logs are retained for 30 days. After that they are deleted permanently. "
    "Each response carries the X-RateLimit-Remaining header. "
    "When you are throttled, wait for the number of seconds in the Retry-After header. "
    "Send the key in the Authorization header. "
    "Call messages:send and page with the starting_after parameter. "
    "Each SMS costs $0.0075 and the limit is 1,000 requests per second. "
    "Error KS-4001 means the API key ks_live_abc123 was revoked. "
    "Pricing details are at https://docs.example.com/pricing. "
    "Scheduled sends go out at 9:10 UTC and 99.9% of them arrive within 5 seconds."
)

KB = Passage(
    id="KB-12#retention",
    doc_id="KB-12",
    kind=DocKind.KB,
    title="Messages API reference",
    heading_path=("Limits and retention",),
    text=KB_TEXT,
)
RESOLVED = Passage(
    id="RT-88#answer",
    doc_id="RT-88",
    kind=DocKind.RESOLVED,
    title="How long are logs kept?",
    heading_path=(),
    text="Thanks for asking! Message logs are retained for 90 days on every plan.",
)
BILLING = Passage(
    id="KB-3#invoices",
    doc_id="KB-3",
    kind=DocKind.KB,
    title="Invoices",
    heading_path=("Billing",),
    text="Invoice INV-2026-0142 was issued to acct_7Hq2. Invoices are emailed monthly.",
)
EVIDENCE = (KB, RESOLVED, BILLING)


def draft(*sentences: tuple[str, tuple[str, ...]]) -> Draft:
    return Draft(sentences=tuple(DraftSentence(t, c) for t, c in sentences), confidence=0.8)


def codes(verdict: Verdict) -> list[str]:
    return [problem.code for problem in verdict.problems]


def sentences_of(text: str) -> list[str]:
    return [s if s.endswith(".") else s + "." for s in text.split(". ")]


# --------------------------------------------------------------------------- happy path


def test_verbatim_extracted_draft_passes() -> None:
    cites = ("KB-12#retention",)
    # Every KB sentence but the first, which the resolved ticket contradicts (tested below).
    extracted = draft(*[(s, cites) for s in sentences_of(KB_TEXT)[1:]])
    verdict = check_grounding(extracted, EVIDENCE)
    assert verdict.passed, verdict.problems
    assert verdict.checker == "grounding"
    assert verdict.reason_code is None


def test_paraphrase_with_enough_overlap_passes() -> None:
    verdict = check_grounding(
        draft(("Logs of messages get deleted permanently after that.", ("KB-12#retention",))),
        EVIDENCE,
    )
    assert verdict.passed, verdict.problems


def test_defaults_are_module_constants() -> None:
    assert SUPPORT_THRESHOLD == 0.6
    assert SUBJECT_OVERLAP == 0.35


# --------------------------------------------------------------------------- no_sentences


@pytest.mark.parametrize("sentences", [(), (DraftSentence("   ", ("KB-12#retention",)),)])
def test_empty_draft(sentences: tuple[DraftSentence, ...]) -> None:
    verdict = check_grounding(Draft(sentences=sentences, confidence=0.0), EVIDENCE)
    assert not verdict.passed
    assert codes(verdict) == ["no_sentences"]
    assert verdict.problems[0].sentence is None


def test_draft_with_sentences_has_no_no_sentences_problem() -> None:
    verdict = check_grounding(draft(("Invoices are emailed monthly.", ("KB-3#invoices",))), [])
    assert "no_sentences" not in codes(verdict)


# --------------------------------------------------------------------------- citations


def test_unknown_citation_names_the_id() -> None:
    verdict = check_grounding(
        draft(
            ("Invoices are emailed monthly.", ("KB-3#invoices",)),
            ("Invoices are emailed monthly.", ("KB-99#made-up", "KB-3#invoices")),
        ),
        EVIDENCE,
    )
    assert codes(verdict) == ["unknown_citation"]
    assert verdict.problems[0].sentence == 1
    assert "KB-99#made-up" in verdict.problems[0].message


def test_only_unknown_citations_do_not_pile_on_more_problems() -> None:
    verdict = check_grounding(draft(("Bananas cost 7 dollars.", ("nope",))), EVIDENCE)
    assert codes(verdict) == ["unknown_citation"]


def test_uncited_sentence() -> None:
    verdict = check_grounding(
        draft(
            ("Invoices are emailed monthly.", ("KB-3#invoices",)),
            ("Invoices are emailed monthly.", ()),
        ),
        EVIDENCE,
    )
    assert codes(verdict) == ["uncited_sentence"]
    assert verdict.problems[0].sentence == 1
    assert verdict.reason_code == "uncited_sentence"


# --------------------------------------------------------------------------- support


def test_unsupported_sentence() -> None:
    verdict = check_grounding(
        draft(("Bananas are a yellow and tasty fruit.", ("KB-12#retention",))), EVIDENCE
    )
    assert codes(verdict) == ["unsupported_sentence"]
    assert "banana" in verdict.problems[0].message


def test_support_uses_only_the_cited_passages() -> None:
    sentence = "Invoices are emailed monthly."
    assert check_grounding(draft((sentence, ("KB-3#invoices",))), EVIDENCE).passed
    verdict = check_grounding(draft((sentence, ("RT-88#answer",))), EVIDENCE)
    assert codes(verdict) == ["unsupported_sentence"]


def test_support_threshold_is_adjustable() -> None:
    half = draft(("Message logs are purple.", ("KB-12#retention",)))  # 2 of 3 words
    assert check_grounding(half, EVIDENCE).passed
    assert not check_grounding(half, EVIDENCE, support_threshold=0.9).passed


def test_stopword_only_sentence_is_supported() -> None:
    assert check_grounding(draft(("Yes, it is.", ("KB-12#retention",))), EVIDENCE).passed


def test_light_stemming_matches_word_forms() -> None:
    verdict = check_grounding(
        draft(
            ("The retention of message logs: deleting happens permanently.", ("KB-12#retention",))
        ),
        EVIDENCE,
    )
    assert "unsupported_sentence" not in codes(verdict)


# --------------------------------------------------------------------------- facts


@pytest.mark.parametrize(
    ("sentence", "token"),
    [
        ("Each SMS costs $0.0080.", "$0.0080"),
        ("The limit is 2,000 requests per second.", "2,000"),
        ("Scheduled sends go out at 9:15 UTC.", "9:15"),
        ("99.5% of them arrive within 5 seconds.", "99.5%"),
        ("Error KS-4002 means the API key was revoked.", "KS-4002"),
        ("Invoice INV-2026-0143 was issued to acct_7Hq2.", "INV-2026-0143"),
        ("Invoice INV-2026-0142 was issued to acct_9Zz1.", "acct_9Zz1"),
        ("Error KS-4001 means the API key ks_live_zzz999 was revoked.", "ks_live_zzz999"),
        ("Call messages:list and page with the starting_after parameter.", "messages:list"),
        ("Call messages:send and page with the ending_before parameter.", "ending_before"),
        ("Each response carries the X-RateLimit-Limit header.", "X-RateLimit-Limit"),
        ("When you are throttled, wait for the X-Retry-Wait header.", "X-Retry-Wait"),
        (
            "Pricing details are at https://docs.example.com/prices.",
            "https://docs.example.com/prices",
        ),
    ],
)
def test_ungrounded_fact_names_the_token(sentence: str, token: str) -> None:
    cites = ("KB-12#retention", "KB-3#invoices")
    verdict = check_grounding(draft((sentence, cites)), EVIDENCE)
    problems = [p for p in verdict.problems if p.code == "ungrounded_fact"]
    assert problems, verdict.problems
    assert any(token in p.message for p in problems)
    assert all(p.sentence == 0 for p in problems)


@pytest.mark.parametrize(
    "sentence",
    [
        "The limit is 1000 requests per second.",  # 1,000 == 1000
        "Each SMS costs $0.00750.",  # same value
        "Each response carries the x-ratelimit-remaining header.",  # headers ignore case
        "Send the key in the authorization header, as Authorization.",
        "Pricing details are at https://docs.example.com/pricing/.",  # trailing slash
        "Pricing details are at (https://docs.example.com/pricing).",
        "Error KS-4001 means the key was revoked.",
        "A follow-up: page with the starting_after parameter.",  # hyphenated prose is no fact
    ],
)
def test_facts_are_normalised(sentence: str) -> None:
    verdict = check_grounding(draft((sentence, ("KB-12#retention",))), EVIDENCE)
    assert "ungrounded_fact" not in codes(verdict), verdict.problems


def test_fact_must_be_in_a_cited_passage_not_just_any_evidence() -> None:
    sentence = "Invoice INV-2026-0142 was issued to acct_7Hq2."
    assert check_grounding(draft((sentence, ("KB-3#invoices",))), EVIDENCE).passed
    verdict = check_grounding(draft((sentence, ("KB-12#retention",))), EVIDENCE)
    assert "ungrounded_fact" in codes(verdict)


def test_each_ungrounded_token_is_reported_once() -> None:
    verdict = check_grounding(
        draft(("Error KS-4009 and KS-4009 again, 77 and 77.", ("KB-12#retention",))),
        EVIDENCE,
        support_threshold=0.0,
    )
    messages = [p.message for p in verdict.problems if p.code == "ungrounded_fact"]
    assert len(messages) == 2


# --------------------------------------------------------------------------- conflicts


def test_planted_30_vs_90_days_conflict_is_caught() -> None:
    verdict = check_grounding(
        draft(("Message logs are retained for 30 days.", ("KB-12#retention",))), EVIDENCE
    )
    assert codes(verdict) == ["conflicting_evidence"]
    message = verdict.problems[0].message
    for needle in ("30 days", "90 days", "RT-88#answer", "KB-12#retention"):
        assert needle in message


def test_conflict_is_caught_from_the_other_side_too() -> None:
    verdict = check_grounding(
        draft(("Message logs are retained for 90 days on every plan.", ("RT-88#answer",))),
        EVIDENCE,
    )
    assert codes(verdict) == ["conflicting_evidence"]
    assert "KB-12#retention" in verdict.problems[0].message


@pytest.mark.parametrize(
    "other",
    [
        "Deleted backups can be restored for 90 days.",  # same unit, unrelated subject
        "Message logs are retained for 90 requests.",  # different unit
        "Message logs are retained for 30 days.",  # same value
        "Message logs are retained for 30 days on Free and 90 days on Pro.",  # states ours too
    ],
)
def test_no_conflict_without_same_unit_different_number_and_same_subject(other: str) -> None:
    passage = Passage("RT-1#a", "RT-1", DocKind.RESOLVED, "Logs", (), other)
    verdict = check_grounding(
        draft(("Message logs are retained for 30 days.", ("KB-12#retention",))),
        (KB, passage),
    )
    assert "conflicting_evidence" not in codes(verdict), verdict.problems


def test_values_within_the_cited_source_passage_are_not_a_conflict() -> None:
    source = Passage(
        "KB-5#plans",
        "KB-5",
        DocKind.KB,
        "Plans",
        (),
        "On Free, message logs are kept for 7 days. On Pro, message logs are kept for 30 days.",
    )
    verdict = check_grounding(
        draft(("On Pro, message logs are kept for 30 days.", ("KB-5#plans",))), (source,)
    )
    assert verdict.passed, verdict.problems


def test_values_another_passage_states_side_by_side_are_cases_not_a_conflict() -> None:
    ticket = Passage(
        "RT-1#a",
        "RT-1",
        DocKind.RESOLVED,
        "Limits",
        (),
        "The Growth plan allows 50 requests per second.",
    )
    plans = Passage(
        "KB-7#plans",
        "KB-7",
        DocKind.KB,
        "Limits per plan",
        (),
        "The Growth plan allows 50 requests per second. "
        "The Enterprise plan allows a contractual limit that starts at 500 requests per second.",
    )
    verdict = check_grounding(
        draft(
            ("The Growth plan allows 50 requests per second.", ("RT-1#a",)),
            (
                "The Enterprise plan allows a contractual limit that starts at "
                "500 requests per second.",
                ("KB-7#plans",),
            ),
        ),
        (ticket, plans),
    )
    assert verdict.passed, verdict.problems
    stale = Passage(
        "RT-2#a",
        "RT-2",
        DocKind.RESOLVED,
        "Limits",
        (),
        "The Growth plan allows 20 requests per second.",
    )
    verdict = check_grounding(
        draft(("The Growth plan allows 50 requests per second.", ("RT-1#a",))),
        (ticket, plans, stale),
    )
    assert codes(verdict) == ["conflicting_evidence"]
    assert "RT-2#a" in verdict.problems[0].message


def test_units_with_rates_and_sizes_conflict() -> None:
    other = Passage(
        "RT-2#a", "RT-2", DocKind.RESOLVED, "Limits", (), "The limit is 500 requests per second."
    )
    verdict = check_grounding(
        draft(("The limit is 1,000 requests per second.", ("KB-12#retention",))), (KB, other)
    )
    assert codes(verdict) == ["conflicting_evidence"]
    assert "500 requests per second" in verdict.problems[0].message


# --------------------------------------------------------------------------- ordering


def test_problems_are_listed_in_sentence_order() -> None:
    verdict = check_grounding(
        draft(
            ("Bananas are yellow fruit.", ("KB-12#retention",)),
            ("Invoices are emailed monthly.", ()),
            ("Invoices are emailed monthly.", ("ghost",)),
        ),
        EVIDENCE,
    )
    assert [(p.code, p.sentence) for p in verdict.problems] == [
        ("unsupported_sentence", 0),
        ("uncited_sentence", 1),
        ("unknown_citation", 2),
    ]
    assert verdict.reason_code == "unsupported_sentence"


# --------------------------------------------------------------------------- properties

TOKENS = st.sampled_from(
    [
        "logs", "retained", "days", "the", "a", "key", "30", "1,000", "$0.0075", "99.9%",
        "9:10", "KS-4001", "INV-2026-0142", "acct_7Hq2", "ks_live_abc", "messages:send",
        "starting_after", "X-RateLimit-Remaining", "Retry-After", "Authorization",
        "https://docs.example.com/a.", "v4.2.1", "2026-01-15", "follow-up", "(see", "this)",
        "naïve", "Straße", "ΣΑΣ", "e.g.", "—", "x", "10ms", "camelCase",
    ]
)  # fmt: skip
WORDY_SENTENCE = st.lists(TOKENS, min_size=1, max_size=12).map(" ".join)
ANY_SENTENCE = st.text(min_size=1, max_size=60).filter(lambda s: s.strip() != "")


def _verbatim_problems(sentences: list[str]) -> set[str]:
    passage = Passage("P#1", "P", DocKind.KB, "", (), " ".join(sentences))
    verdict = check_grounding(draft(*[(s, ("P#1",)) for s in sentences]), [passage])
    return set(codes(verdict))


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(WORDY_SENTENCE, min_size=1, max_size=6))
def test_property_verbatim_sentences_are_grounded(sentences: list[str]) -> None:
    bad = {"unsupported_sentence", "ungrounded_fact", "unknown_citation"}
    assert not (_verbatim_problems(sentences) & bad)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ANY_SENTENCE, min_size=1, max_size=5))
def test_property_verbatim_arbitrary_text_is_grounded(sentences: list[str]) -> None:
    bad = {"unsupported_sentence", "ungrounded_fact", "unknown_citation"}
    assert not (_verbatim_problems(sentences) & bad)


NO_DIGITS = st.text(
    alphabet=st.characters(blacklist_categories=("Nd", "No", "Nl", "Cs")), min_size=1, max_size=80
).filter(lambda s: s.strip() != "")


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=NO_DIGITS,
    number=st.one_of(
        st.integers(min_value=0, max_value=10**9).map(str),
        st.decimals(min_value=0, max_value=10**6, places=3, allow_nan=False).map(str),
        st.integers(min_value=1, max_value=10**6).map(lambda n: f"${n:,}"),
        st.integers(min_value=1, max_value=100).map(lambda n: f"{n}%"),
    ),
    position=st.integers(min_value=0, max_value=80),
)
def test_property_inserted_number_is_ungrounded(text: str, number: str, position: int) -> None:
    passage = Passage("P#1", "P", DocKind.KB, "", (), text)
    cut = min(position, len(text))
    sentence = f"{text[:cut]} {number} {text[cut:]}"
    assume(sentence.strip())
    verdict = check_grounding(draft((sentence, ("P#1",))), [passage])
    assert "ungrounded_fact" in codes(verdict), (sentence, verdict.problems)


def test_values_in_two_passages_of_one_document_are_cases_not_a_conflict() -> None:
    sms = Passage(
        "KB-9#sms", "KB-9", DocKind.KB, "Pricing", ("SMS",), "An SMS costs $0.0095 on Developer."
    )
    email = Passage(
        "KB-9#email",
        "KB-9",
        DocKind.KB,
        "Pricing",
        ("Email",),
        "An email costs $0.0012 on Developer.",
    )
    verdict = check_grounding(
        draft(("An SMS costs $0.0095 on Developer.", ("KB-9#sms",))), (sms, email)
    )
    assert verdict.passed, verdict.problems
    # The same two sentences in two different documents are a contradiction to show a reviewer.
    other_doc = Passage(
        "RT-3#answer", "RT-3", DocKind.RESOLVED, "Pricing", (), email.text.replace("email", "SMS")
    )
    verdict = check_grounding(
        draft(("An SMS costs $0.0095 on Developer.", ("KB-9#sms",))), (sms, other_doc)
    )
    assert codes(verdict) == ["conflicting_evidence"]
