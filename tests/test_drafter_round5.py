"""The offline drafter's fifth round, on hand-made passages about an invented allotment
garden booking service: deadlines and lengths asked as durations, a name asked for in a
second sentence, a lead-in that says what "it" is, labels in bold inside a sentence, "the
setting is ..." pointing back, and citations: a sentence of another document is not quoted
for its label alone, a resolved ticket's unrelated value is no rival, and the article says
what a resolved ticket says when it keeps the asked-for value.

The drafter runs with the shipped MiniLM model, as the pipeline gives it.
"""

from __future__ import annotations

from drafting import hits, kb, minilm, quoted, resolved
from supportagent.agent.questions import AnswerKind, classify_question, has_answer, ticket_questions
from supportagent.domain import Ticket
from supportagent.engines.extract import evidence_units
from supportagent.engines.offline import OfflineEngine, _rival
from supportagent.engines.scoring import Scored, UnitScorer

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


# ---------------------------------------------------------------------------- round 5, part 2


def test_can_each_leans_on_the_sentence_before() -> None:
    t = Ticket(
        "T-5",
        "Two sites",
        "We run allotments in Leeds and in Lyon under one login. Can each take fees in its "
        "own money?",
    )
    questions = ticket_questions(t)
    evidence = hits(kb("kb-fees", "Plot fees are collected through GardenPay."))
    scorer = UnitScorer(t, questions, evidence_units(evidence), evidence, minilm().embed)
    assert "Leeds and in Lyon" in scorer._lead(questions[0])
    # "each" before a noun names no one: "each plot" is clear.
    plain = Ticket("T-6", "Fees", "We like the app. Can each plot have its own fee?")
    [question] = ticket_questions(plain)
    scorer = UnitScorer(plain, [question], evidence_units(evidence), evidence, minilm().embed)
    assert "We like the app" not in scorer._lead(question)


def test_a_procedure_comes_with_the_warning_after_it() -> None:
    passage = kb(
        "kb-plots",
        "Two plots can be joined into one. To join them:\n\n"
        "1. Open the first plot and choose **Join**.\n"
        "2. Pick the second plot.\n"
        "3. Confirm.\n\n"
        "Joining cannot be undone. Plot numbers are kept.",
        heading="Joining plots",
    )
    text = quoted("Joining", "How do I join two plots into one?", passage)
    assert "Joining cannot be undone." in text
    assert "Plot numbers are kept." not in text


def test_which_things_work_with_it_asks_for_names_not_a_procedure() -> None:
    question = classify_question("Which label printers work with the plot map?")
    assert question.kind is AnswerKind.NAME and question.focus == "printers"
    printing = kb(
        "kb-maps",
        "1. Open **Plots** and choose **Map**.\n2. Click **Print map**.\n3. Pick the printer.",
        heading="Printing the map",
        title="Plot maps",
    )
    printers = kb(
        "kb-maps",
        "Supported printers are those that can print a PDF on A4 paper.",
        heading="Printers",
        title="Plot maps",
    )
    text = quoted("Printers", "Which label printers work with the plot map?", printing, printers)
    assert "Supported printers are those that can print a PDF on A4 paper." in text


def test_a_deadline_question_prefers_a_duration_given_as_a_deadline() -> None:
    passage = kb(
        "kb-sensors",
        "Soil sensors that miss a reading are asked again 3 times over 2 hours. A sensor must "
        "answer a reading request within 30 seconds.",
        heading="Soil sensors",
    )
    text = quoted("Sensors", "What's the deadline for a soil sensor to answer?", passage)
    assert text[0] == "A sensor must answer a reading request within 30 seconds."


def test_a_linked_resolved_duration_is_a_rival_whatever_its_role() -> None:
    """The link says the resolved ticket is about the article's topic, and the roles the
    heuristics read are often wrong across wordings, so its other duration is quoted: one
    sentence too many for the reviewer costs less than one side of a conflict stated alone."""
    article = kb(
        "kb-gates",
        "A gate code must be typed within 20 seconds of the first key.",
        heading="Gate codes",
        title="Gates",
    )
    ticket = resolved(
        "RT-60",
        "The gate would not take our code. Is the keypad broken?",
        "The keypad restarts by itself, so an hour without power is covered.",
    )
    evidence = hits(article, ticket)
    t = Ticket("T-6", "Gate code", "What's the time limit for typing the gate code?")
    questions = ticket_questions(t)
    units = evidence_units(evidence)
    scorer = UnitScorer(t, questions, units, evidence, minilm().embed)
    by_doc = {u.passage.doc_id: u for u in units}
    best = Scored(by_doc["kb-gates"], 0, 0.6, True, True)
    ranked = [best, Scored(by_doc["RT-60"], 0, 0.58, True, True)]

    def linked(doc: str) -> tuple[str, ...]:
        return ("kb-gates",) if doc == "RT-60" else ()

    other = _rival(best, ranked, [best], scorer, linked)
    assert other is not None and other.unit.passage.doc_id == "RT-60"


def test_an_unlinked_duration_of_another_role_is_no_rival() -> None:
    deadline = kb(
        "kb-gates",
        "A gate code must be typed within 20 seconds of the first key.",
        heading="Gate codes",
        title="Gates",
    )
    span = kb(
        "kb-keypads",
        "A gate code typed on a keypad stays valid for an hour.",
        heading="Gate codes on keypads",
        title="Keypads",
    )
    evidence = hits(deadline, span)
    t = Ticket("T-7", "Gate code", "What's the time limit for typing the gate code?")
    questions = ticket_questions(t)
    units = evidence_units(evidence)
    scorer = UnitScorer(t, questions, units, evidence, minilm().embed)
    by_doc = {u.passage.doc_id: u for u in units}
    best = Scored(by_doc["kb-gates"], 0, 0.6, True, True)
    ranked = [best, Scored(by_doc["kb-keypads"], 0, 0.58, True, True)]
    # Alike by meaning and sharing "gate code" with the question, but a deadline and a span
    # of validity are not two answers to one thing.
    assert _rival(best, ranked, [best], scorer, None) is None


def test_how_much_above_asks_for_a_margin_not_a_price() -> None:
    question = classify_question(
        "How much over the booked hours can a member stay before a warden has to approve?"
    )
    assert question.kind is AnswerKind.NUMBER and question.focus == "margin"
    assert has_answer("Members may stay up to 10% over the booked time.", question)
    assert has_answer("Up to 2 more hours are allowed.", question)
    assert not has_answer("**Plus**: $12 a month, up to 4 plots.", question)
