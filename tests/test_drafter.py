"""The offline drafter and checker on hand-made passages: question kinds, procedures, customer
specifics, and a checker that refuses a draft without the asked-for value."""

from __future__ import annotations

import pytest

from drafting import hits
from supportagent.agent.questions import AnswerKind, classify_question, has_answer, ticket_questions
from supportagent.domain import DocKind, Draft, DraftSentence, Passage, Ticket, resolved_body
from supportagent.engines.extract import customer_specific, evidence_units, general_part
from supportagent.engines.offline import OfflineEngine
from supportagent.engines.offline_check import check_draft


def kb(pid: str, text: str, heading: str = "Section", title: str = "Article") -> Passage:
    return Passage(f"{pid}#s", pid, DocKind.KB, title, (heading,), text)


def rt(rid: str, question: str, answer: str) -> Passage:
    return Passage(
        f"{rid}#answer", rid, DocKind.RESOLVED, question, (), resolved_body(question, answer)
    )


SDK = kb(
    "kb-sdk",
    "You install the SDK with `pip install acme-sdk`. The SDK requires Python 3.9 or newer. "
    "The current version of the SDK is 4.2.0. The SDK retries failed requests twice.",
    "Python",
)
KEYS = kb(
    "kb-keys",
    "An idempotency key can be up to 255 characters long. Acme remembers an idempotency key "
    "for 24 hours. A request that reuses a key with a different body is rejected with HTTP 409.",
    "How keys work",
)
ROLES = kb(
    "kb-roles",
    "Only a user with the Billing Admin role can download invoices. Members can view jobs. "
    "The Owner can change the plan.",
    "Roles",
)
ROTATE = kb(
    "kb-rotate",
    "Rotating a key replaces it while the old key keeps working for a grace period.\n\n"
    "To rotate a key without downtime:\n\n"
    "1. Roll the key with a grace period of 24 hours.\n"
    "2. Deploy the new key to every server.\n"
    "3. Revoke the old key once it is no longer used.",
    "Rotation",
)


def _draft(subject: str, body: str, *passages: Passage) -> Draft:
    return OfflineEngine().draft(Ticket("T-1", subject, body), hits(*passages))


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("How long does Acme remember a key?", AnswerKind.DURATION),
        ("What is the minimum Python version?", AnswerKind.VERSION),
        ("Which role can download invoices?", AnswerKind.NAME),
        ("How many characters can a key have?", AnswerKind.NUMBER),
        ("How do I rotate a key?", AnswerKind.PROCEDURE),
        ("Where do I add our VAT ID?", AnswerKind.LOCATION),
        ("Can I use the sandbox for free?", AnswerKind.YES_NO),
        ("Why did my text cost more?", AnswerKind.REASON),
    ],
)
def test_question_kinds(text: str, kind: AnswerKind) -> None:
    assert classify_question(text).kind is kind


def test_several_questions_in_one_ticket_and_no_split_at_or() -> None:
    ticket = Ticket(
        "T-1",
        "SDK",
        "Hi, what is the minimum Python version, and what's the pip install command? "
        "Will you keep trying, or are they lost?\n\nThanks,\nAna",
    )
    texts = [q.text for q in ticket_questions(ticket)]
    assert texts == [
        "what is the minimum Python version",
        "what's the pip install command?",
        "Will you keep trying, or are they lost?",
    ]


@pytest.mark.parametrize(
    ("question", "passages", "needle", "not_needle"),
    [
        ("What is the minimum Python version for the SDK?", (SDK,), "3.9 or newer", "4.2.0"),
        ("How long does Acme remember an idempotency key?", (KEYS,), "24 hours", "255"),
        ("Which role can download invoices?", (ROLES,), "Billing Admin", "Members"),
        ("What's the pip install command?", (SDK,), "pip install acme-sdk", "4.2.0"),
    ],
)
def test_the_sentence_that_answers_is_quoted(
    question: str, passages: tuple[Passage, ...], needle: str, not_needle: str
) -> None:
    draft = _draft("Question", question, *passages)
    text = " ".join(s.text for s in draft.sentences)
    assert needle in text
    assert not_needle not in text
    assert all(s.citations == (passages[0].id,) for s in draft.sentences)


def test_two_questions_get_one_answer_each() -> None:
    draft = _draft(
        "Keys",
        "How long does Acme remember a key, and what happens if we reuse a key with a different "
        "body?",
        KEYS,
    )
    text = " ".join(s.text for s in draft.sentences)
    assert "24 hours" in text and "409" in text


def test_a_procedure_is_quoted_whole_and_in_order() -> None:
    draft = _draft("Rotation", "How do I rotate a key without downtime?", ROTATE)
    texts = [s.text for s in draft.sentences]
    steps = [t for t in texts if t.startswith(("Roll", "Deploy", "Revoke"))]
    assert steps == [
        "Roll the key with a grace period of 24 hours.",
        "Deploy the new key to every server.",
        "Revoke the old key once it is no longer used.",
    ]
    units = evidence_units(hits(ROTATE))
    procedure = next(u for u in units if u.procedure)
    assert procedure.sentences[0] == "To rotate a key without downtime:"


VAT = kb(
    "kb-vat",
    "A business in the EU can add its VAT ID under Billing > Tax details. "
    "When a valid VAT ID is on file, the invoice uses the reverse charge.",
    "VAT",
)
VAT_CASE = rt(
    "RT-9",
    "We added our VAT ID but invoice INV-2026-0098 still has 19% VAT.",
    "Your VAT ID passed the VIES check, so from the next invoice the reverse charge applies. "
    "We have reissued INV-2026-0098 on 3 March. "
    "A VAT ID added after an invoice was issued does not change that invoice.",
)


def test_a_resolved_tickets_customer_specifics_are_never_quoted() -> None:
    question = VAT_CASE.text.partition("\n\n")[0]
    assert customer_specific("Your VAT ID passed the VIES check, so it applies.", question)
    assert customer_specific("We have reissued INV-2026-0098 on 3 March.", question)
    assert not customer_specific("A VAT ID added later does not change that invoice.", question)
    assert general_part("Hi Rosa, the trial lasts 14 days for every account.", "") == (
        "The trial lasts 14 days for every account."
    ) or general_part("Hi Rosa, the trial lasts 14 days for every account.", "") == (
        "the trial lasts 14 days for every account."
    )
    units = [u.text for u in evidence_units(hits(VAT_CASE))]
    assert units == ["A VAT ID added after an invoice was issued does not change that invoice."]
    draft = _draft(
        "VAT", "Where do we add our VAT ID so invoices use reverse charge?", VAT_CASE, VAT
    )
    text = " ".join(s.text for s in draft.sentences)
    assert "Billing > Tax details" in text
    assert "passed" not in text and "INV-2026-0098" not in text


def test_the_checker_refuses_a_draft_without_the_asked_for_value() -> None:
    ticket = Ticket("T-1", "Keys", "How long does Acme remember an idempotency key?")
    lacking = Draft(
        (DraftSentence("An idempotency key can be up to 255 characters long.", (KEYS.id,)),), 0.5
    )
    verdict = check_draft(ticket, lacking, hits(KEYS))
    assert not verdict.passed
    assert [p.code for p in verdict.problems] == ["missing_answer"]
    assert "duration" in verdict.problems[0].message
    answering = Draft(
        (DraftSentence("Acme remembers an idempotency key for 24 hours.", (KEYS.id,)),), 0.5
    )
    assert check_draft(ticket, answering, hits(KEYS)).passed


def test_the_checker_refuses_a_citation_that_does_not_contain_its_sentence() -> None:
    ticket = Ticket("T-1", "Keys", "How long does Acme remember an idempotency key?")
    draft = Draft(
        (DraftSentence("Acme remembers an idempotency key for 24 hours.", (SDK.id,)),), 0.5
    )
    verdict = check_draft(ticket, draft, hits(KEYS, SDK))
    assert "citation_mismatch" in [p.code for p in verdict.problems]


def test_an_unanswered_question_is_said_so_or_refused() -> None:
    ticket = Ticket(
        "T-1", "Keys", "How long does Acme remember a key, and which role can download invoices?"
    )
    draft = OfflineEngine().draft(ticket, hits(KEYS))
    assert "24 hours" in draft.answer
    assert draft.unanswered and "role" in draft.unanswered[0]
    assert "does not answer" in draft.answer and "partial_answer" in draft.flags
    assert check_draft(ticket, draft, hits(KEYS)).passed
    silent = Draft(draft.sentences, draft.confidence)
    verdict = check_draft(ticket, silent, hits(KEYS))
    assert [p.code for p in verdict.problems] == ["unanswered_question"]


def test_confidence_comes_with_a_plain_explanation() -> None:
    draft = _draft("Keys", "How long does Acme remember an idempotency key?", KEYS)
    assert 0 < draft.confidence <= 1
    assert draft.explanation.startswith(f"Confidence {draft.confidence:.2f}")
    assert "with a duration" in draft.explanation


def test_has_answer_shapes() -> None:
    q = classify_question
    assert has_answer("Wait the number of seconds in Retry-After.", q("How long should I wait?"))
    assert has_answer("It needs Android 10 or later.", q("What is the lowest Android version?"))
    assert not has_answer("Keys are random strings.", q("How long are keys kept?"))
