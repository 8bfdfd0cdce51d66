"""The offline drafter's fifth round, on hand-made passages about an invented allotment
garden booking service: deadlines and lengths asked as durations, a name asked for in a
second sentence, a lead-in that says what "it" is, labels in bold inside a sentence, "the
setting is ..." pointing back, and citations: a sentence of another document is not quoted
for its label alone, a resolved ticket's unrelated value is no rival, and the article says
what a resolved ticket says when it keeps the asked-for value.

The drafter runs with the shipped MiniLM model, as the pipeline gives it.
"""

from __future__ import annotations

from drafting import hits, minilm, quoted
from supportagent.agent.questions import AnswerKind, classify_question, has_answer, ticket_questions
from supportagent.domain import DocKind, Passage, Ticket, resolved_body
from supportagent.engines.extract import evidence_units
from supportagent.engines.offline import OfflineEngine


def kb(doc: str, text: str, heading: str = "Section", title: str = "Article") -> Passage:
    return Passage(
        f"{doc}#{heading.lower().replace(' ', '-')}", doc, DocKind.KB, title, (heading,), text
    )


def resolved(rid: str, question: str, answer: str) -> Passage:
    return Passage(
        f"{rid}#answer", rid, DocKind.RESOLVED, question, (), resolved_body(question, answer)
    )


# ---------------------------------------------------------------------------- what is asked


def test_a_deadline_a_timeout_or_a_length_of_time_asks_how_long() -> None:
    for text in (
        "What's the deadline for a plot holder to confirm the swap?",
        "Is there a timeout on the gate code?",
        "What is the usual booking length for a shared greenhouse bench?",
    ):
        assert classify_question(text).kind is AnswerKind.DURATION, text
    # The length of a text is a count of characters, not a time.
    assert classify_question("What is the maximum length of a notice message?").kind is (
        AnswerKind.NUMBER
    )


def test_whats_it_called_asks_the_name_for_the_question_before() -> None:
    questions = ticket_questions(
        Ticket(
            "T-1",
            "Holiday cover",
            "Can a neighbour water my plot while I'm away? What is it called?",
        )
    )
    assert len(questions) == 1
    assert questions[0].kind is AnswerKind.NAME
    assert questions[0].text.startswith("Can a neighbour water my plot")


def test_a_lead_in_before_a_colon_is_what_it_refers_to() -> None:
    [question] = ticket_questions(
        Ticket("T-2", "Gate", "The number we punch in at the gate: how long does it keep working?")
    )
    assert question.kind is AnswerKind.DURATION
    assert question.context == "The number we punch in at the gate"


def test_a_bold_label_inside_a_sentence_is_a_name() -> None:
    question = classify_question("Which setting lets neighbours water a plot?")
    assert has_answer("Once **Holiday cover** is ticked, a neighbour can water it.", question)
    assert not has_answer("A neighbour can water it once you agree.", question)


# ---------------------------------------------------------------------------- what is quoted


def test_the_setting_is_points_back_at_the_sentence_before() -> None:
    passage = kb(
        "kb-sheds",
        "Shed bookings limit how many tools one member can borrow at a time. The setting "
        "is **Tools per member**, from 1 to 9.",
    )
    sentences = [u.sentences for u in evidence_units(hits(passage))]
    assert (
        "Shed bookings limit how many tools one member can borrow at a time.",
        "The setting is **Tools per member**, from 1 to 9.",
    ) in sentences
    assert ("The setting is **Tools per member**, from 1 to 9.",) not in sentences


def test_a_label_from_an_unrelated_article_is_not_quoted_for_a_setting_question() -> None:
    watering = kb(
        "kb-watering",
        "Watering slots spread out how many members use the standpipe in one hour.",
        heading="Watering slots",
        title="Water",
    )
    invoices = kb(
        "kb-invoices",
        "Invoices appear under **Money > Invoices** within 3 days of the payment.",
        heading="Invoices",
        title="Billing",
    )
    text = " ".join(
        quoted(
            "Standpipe queue",
            "Which setting limits how many members can use the standpipe in the same hour?",
            watering,
            invoices,
        )
    )
    assert "Invoices" not in text


def test_a_resolved_ticket_with_another_kind_of_value_is_no_rival() -> None:
    article = kb(
        "kb-alerts",
        "Frost alerts that cannot be delivered are sent again 4 times over 6 hours, then the "
        "member is flagged as unreachable.",
        heading="Frost alerts",
        title="Alerts",
    )
    ticket = resolved(
        "RT-41",
        "Our phone was off last night. Did we miss the frost alert?",
        "Alerts are sent again over several hours, so a 2-hour gap in signal is covered.",
    )
    engine = OfflineEngine(embed=minilm().embed)
    engine.use_links(lambda doc: ("kb-alerts",) if doc == "RT-41" else ())
    draft = engine.draft(
        Ticket(
            "T-3",
            "Frost alert",
            "How many times do you send a frost alert again when it does not get through?",
        ),
        hits(article, ticket),
    )
    text = " ".join(s.text for s in draft.sentences)
    assert "4 times" in text
    assert "2-hour" not in text
    assert all(s.citations == ("kb-alerts#frost-alerts",) for s in draft.sentences)


def test_the_article_is_quoted_over_a_resolved_ticket_that_keeps_the_asked_value() -> None:
    article = kb(
        "kb-plotbook-app",
        "The Plotbook tablet app is made for Android tablets. It needs Android 12 or "
        "later and 2 GB of free space.",
        heading="Tablet app",
        title="Plotbook on tablets",
    )
    ticket = resolved(
        "RT-52",
        "The Plotbook app will not install on our tablet.",
        "Please update the Plotbook app on the tablet to the current 5.1; it needs Android 12 or "
        "later and 2 GB of free space.",
    )
    draft = OfflineEngine(embed=minilm().embed).draft(
        Ticket(
            "T-4",
            "Plotbook on the tablet",
            "We want Plotbook on the committee's tablet. Which Android release does it need?",
        ),
        hits(ticket, article),
    )
    assert [s.text for s in draft.sentences] == [
        "It needs Android 12 or later and 2 GB of free space."
    ]
    assert draft.sentences[0].citations == ("kb-plotbook-app#tablet-app",)
