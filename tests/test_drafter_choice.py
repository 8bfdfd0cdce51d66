"""Which sentences the offline drafter picks, on hand-made passages: what a question leans on,
two near-equal sentences of one article, a section of bullets explained whole, headings.

The drafter runs with the shipped MiniLM model, as the pipeline gives it, so these are the
choices it makes in use.
"""

from __future__ import annotations

from drafting import hits, quoted
from supportagent.agent.questions import (
    AnswerKind,
    Question,
    asks_explanation,
    classify_question,
    ticket_questions,
)
from supportagent.domain import DocKind, Passage, Ticket
from supportagent.engines.extract import bullet_run, evidence_units
from supportagent.engines.offline import _close_second
from supportagent.engines.scoring import (
    LEAD_TERMS,
    Scored,
    UnitScorer,
    _framed_by_subject,
    _weights,
)


def kb(pid: str, text: str, heading: str = "Section", title: str = "Article") -> Passage:
    return Passage(f"{pid}#s", pid, DocKind.KB, title, (heading,), text)


# ---------------------------------------------------------------------------- what is asked


def test_a_vague_whether_question_is_answered_by_the_question_beside_it() -> None:
    ticket = Ticket(
        "T-1",
        "ERP",
        "We want our ERP told when a job is done. Is that possible and what is the event called?",
    )
    assert [q.text for q in ticket_questions(ticket)] == ["what is the event called?"]
    # Alone, it stays: it is all the ticket asks.
    alone = Ticket("T-2", "ERP", "We want our ERP told when a job is done. Is that possible?")
    assert [q.text for q in ticket_questions(alone)] == ["Is that possible?"]


def test_a_pronoun_in_a_later_question_leans_on_the_first() -> None:
    ticket = Ticket(
        "T-1",
        "Trial",
        "We are a small crew. How long is the trial, and does it include the dispatch board?",
    )
    first, second = ticket_questions(ticket)
    assert first.context == "We are a small crew."
    assert second.context == "How long is the trial"


def test_a_subject_that_is_a_question_speaks_for_one_question_only() -> None:
    questions = [
        classify_question("How long does Acme remember a key"),
        classify_question("what happens if we reuse a key with a different body?"),
    ]
    assert _framed_by_subject("How long are idempotency keys stored?", questions) == [True, False]
    # A topic frames every question; so does any subject of a one-question ticket.
    assert _framed_by_subject("Idempotency keys", questions) == [True, True]
    assert _framed_by_subject("How long are keys stored?", questions[1:]) == [True]


def test_how_does_it_work_asks_for_an_explanation() -> None:
    assert asks_explanation(classify_question("How does your phishing protection work?"))
    assert not asks_explanation(classify_question("How long does a session last?"))
    assert not asks_explanation(Question("How does billing work?", AnswerKind.PROCEDURE))


# ---------------------------------------------------------------------------- ranking

CREDITS = kb(
    "kb-credits",
    "Extra credits are sold in packs of 500 texts for $15. "
    "When the monthly texts run out, texts stop until the next month starts. "
    "Bought credits never expire while the account is open.",
    "Text credits",
)


def test_the_questions_own_words_outweigh_the_sentence_before_it() -> None:
    # "ran out last month" is said before the question; "expire" is what is asked.
    texts = quoted(
        "SMS credits",
        "Our texts ran out last month. How much is an extra pack, and do the ones we buy expire?",
        CREDITS,
    )
    assert "Bought credits never expire while the account is open." in texts
    assert "When the monthly texts run out, texts stop until the next month starts." not in texts


def test_a_sentence_is_read_under_its_heading() -> None:
    phishing = kb(
        "kb-security",
        "Security keys cannot be used on a look-alike website.",
        "How we protect you from phishing",
    )
    other = kb("kb-other", "Sessions end after 12 hours without activity.", "Sessions")
    ticket = Ticket("T-1", "Question", "What protects us against phishing?")
    questions = ticket_questions(ticket)
    units = evidence_units(hits(phishing, other))
    scorer = UnitScorer(ticket, questions, units, hits(phishing, other), None)
    assert scorer.lexical(0, 0) > 0  # "phishing" and "protect" are the heading's words
    assert scorer.lexical(0, 1) == 0


# ---------------------------------------------------------------------------- choosing

SIZES = kb(
    "kb-limits",
    "A single file uploaded in the web app can be up to 100 MB. "
    "A single file uploaded from the phone app can be up to 25 MB. "
    "A job can hold up to 500 attachments.",
    "File sizes",
)


def test_two_nearly_equal_sentences_of_one_article_are_both_quoted() -> None:
    texts = quoted("Uploads", "What is the biggest file we can upload?", SIZES)
    assert "A single file uploaded in the web app can be up to 100 MB." in texts
    assert "A single file uploaded from the phone app can be up to 25 MB." in texts
    assert "A job can hold up to 500 attachments." not in texts


def test_no_second_sentence_about_a_name_the_ticket_does_not_use() -> None:
    plans = kb(
        "kb-rates",
        "The Growth plan allows 50 requests per second. "
        "The Starter plan allows 10 requests per second.",
        "Limits per plan",
    )
    ticket = Ticket("T-1", "Rate limit", "We are on Growth. How many requests per second?")
    units = evidence_units(hits(plans))
    growth, starter = units
    scorer = UnitScorer(ticket, ticket_questions(ticket), units, hits(plans), None)
    assert scorer.names(growth) == (frozenset({"growth"}), frozenset())
    assert scorer.names(starter) == (frozenset(), frozenset({"starter"}))
    # The best names the customer's plan: another plan's value is not quoted beside it.
    best, other = Scored(growth, 0, 0.8, True, True), Scored(starter, 0, 0.75, True, True)
    assert _close_second(0, best, [best, other], [best], scorer) is None
    # The best names no plan of theirs: the one that does is quoted too.
    best, other = Scored(starter, 0, 0.8, True, True), Scored(growth, 0, 0.75, True, True)
    assert _close_second(0, best, [best, other], [best], scorer) == other
    # Too far behind: not quoted.
    far = Scored(growth, 0, 0.65, True, True)
    assert _close_second(0, best, [best, far], [best], scorer) is None


def test_subject_words_weigh_half_the_questions_own() -> None:
    rarity = {"expir": 2.0, "monthly": 2.0, "text": 1.0}
    weights = _weights("do the ones we buy expire?", rarity, "Monthly texts run out")
    assert weights["expir"] == 2.0 > weights["monthly"]  # equally rare, but not what is asked
    assert weights["monthly"] == 2.0 * LEAD_TERMS and weights["text"] == 1.0 * LEAD_TERMS


def test_no_second_sentence_without_the_minimum_that_was_asked() -> None:
    sdk = kb(
        "kb-sdk",
        "The Python SDK requires Python 3.9 or newer. The current version of the Python SDK is "
        "4.2.0.",
        "Python",
    )
    texts = quoted("SDK", "What is the minimum Python version for the Python SDK?", sdk)
    assert texts == ["The Python SDK requires Python 3.9 or newer."]


PHISHING = kb(
    "kb-security",
    "- Email from Acme is sent only from addresses ending in `@acme.example`, so a message from "
    "any other address is fake.\n"
    "- We will never ask for your password by email, chat or phone, so a message that asks for "
    "it is phishing.\n"
    "- Security keys protect you from phishing: they cannot be used on a look-alike website.",
    "How we protect you from phishing",
)


def test_a_question_asking_how_something_works_gets_the_bullets_whole_and_in_order() -> None:
    texts = quoted("Phishing", "How does your phishing protection work?", PHISHING)
    assert texts == [u.text for u in evidence_units(hits(PHISHING))]
    assert len(texts) == 3
    # A precise question about one bullet still gets that bullet alone.
    texts = quoted("Passwords", "Will you ever ask for my password by email?", PHISHING)
    assert texts == [
        "We will never ask for your password by email, chat or phone, so a message that asks "
        "for it is phishing."
    ]


def test_a_bullet_run_is_the_bullets_around_one_item() -> None:
    units = evidence_units(hits(PHISHING))
    assert [u.shape for u in units] == ["item", "item", "item"]
    run = bullet_run(units[1], units)
    assert run.shape == "bullets" and run.sentences == tuple(u.text for u in units)
    sentence = evidence_units(hits(SIZES))[0]
    assert bullet_run(sentence, [sentence]) is sentence


SLA = kb(
    "kb-sla",
    "On the Pro plan, we commit to 99.9% monthly uptime. On the Max plan the commitment is 99.95%.",
    "Uptime",
)
CREDIT = Passage(
    "kb-sla#credits",
    "kb-sla",
    DocKind.KB,
    "Article",
    ("Service credits",),
    "If monthly uptime falls below the commitment, you can claim a credit of 10% of the fee.",
)


def test_a_sentence_that_says_the_commitment_brings_what_it_is_on_the_customers_plan() -> None:
    texts = quoted(
        "Downtime",
        "We're on Pro. If monthly uptime is poor, what credit can we claim?",
        CREDIT,
        SLA,
    )
    assert texts[:2] == [
        "On the Pro plan, we commit to 99.9% monthly uptime.",
        "If monthly uptime falls below the commitment, you can claim a credit of 10% of the fee.",
    ]
    assert "On the Max plan the commitment is 99.95%." not in texts
    # Without a plan in the ticket there is nothing to say which commitment: the credit alone.
    texts = quoted("Downtime", "If monthly uptime is poor, what credit can we claim?", CREDIT, SLA)
    assert "On the Pro plan, we commit to 99.9% monthly uptime." not in texts
