"""The offline drafter's second round, on hand-made passages about an invented greenhouse
controller: what a ticket asks (a lead-in, "and how?", "is there a switch"), numbers of the
right kind, labelled bullets, plans, two sources that disagree, sentences that point back, an
article that carries a resolved ticket's value, and the conflict check's new readings.

The drafter runs with the shipped MiniLM model, as the pipeline gives it.
"""

from __future__ import annotations

from drafting import hits, minilm, quoted
from supportagent.agent.facts import extract_facts, find_conflicts, quantities, scope_of
from supportagent.agent.questions import (
    AnswerKind,
    classify_question,
    has_answer,
    ticket_questions,
)
from supportagent.domain import DocKind, Hit, Passage, Ticket
from supportagent.engines.extract import customer_specific, evidence_units
from supportagent.engines.scoring import SCOPE_BONUS, TWIN_SIMILARITY, UnitScorer, in_context


def kb(doc: str, text: str, heading: str = "Section", title: str = "Article") -> Passage:
    return Passage(
        f"{doc}#{heading.lower().replace(' ', '-')}", doc, DocKind.KB, title, (heading,), text
    )


def resolved(doc: str, question: str, answer: str) -> Passage:
    return Passage(f"{doc}#answer", doc, DocKind.RESOLVED, question, (), f"{question}\n\n{answer}")


# ---------------------------------------------------------------------------- what is asked


def test_a_lead_in_before_the_questions_does_not_swallow_the_first() -> None:
    ticket = Ticket(
        "T-1",
        "Hub questions",
        "Two things: how long is the warranty on a hub, and how many sensors can one hub take?",
    )
    questions = ticket_questions(ticket)
    assert [q.kind for q in questions] == [AnswerKind.DURATION, AnswerKind.NUMBER]
    assert questions[0].text == "how long is the warranty on a hub"


def test_and_how_turns_a_whether_question_into_a_procedure() -> None:
    ticket = Ticket("T-1", "Reports", "Can the hub email me a weekly summary, and how?")
    (question,) = ticket_questions(ticket)
    assert question.kind is AnswerKind.PROCEDURE
    assert question.text == "Can the hub email me a weekly summary, and how?"


def test_is_there_a_switch_asks_for_a_setting() -> None:
    question = classify_question("Is there a toggle somewhere that hides the prices?")
    assert question.kind is AnswerKind.NAME
    assert question.focus == "setting"
    plain = classify_question("Is there a charge for extra hubs?")
    assert plain.kind is not AnswerKind.NAME


def test_a_question_about_room_wants_a_size_and_one_about_price_an_amount() -> None:
    room = classify_question("How much storage does each hub get?")
    assert (room.kind, room.focus) == (AnswerKind.NUMBER, "size")
    assert has_answer("Each hub stores up to 2 GB of readings.", room)
    assert not has_answer("Photos are resized to 800 pixels.", room)
    price = classify_question("What does the camera add-on cost?")
    assert (price.kind, price.focus) == (AnswerKind.NUMBER, "money")
    assert has_answer("The camera add-on is $3 a month per hub.", price)
    assert not has_answer("Snapshots arrive within 5 minutes.", price)
    # How many of a thing: a count, which any number but a price, share or time gives.
    anything = classify_question("How many sensors can one hub take?")
    assert anything.focus == "count"
    assert has_answer("A hub takes 12 sensors.", anything)


# ---------------------------------------------------------------------------- units


def test_a_labelled_bullet_is_a_unit_and_is_read_under_its_heading() -> None:
    passage = kb("kb-storage", "- Basic: 2 GB\n- Pro: 10 GB\n- ok", heading="Storage per plan")
    units = evidence_units(hits(passage))
    assert [u.text for u in units] == ["Basic: 2 GB", "Pro: 10 GB"]  # "ok" is no fact
    assert in_context(units[1]) == "Storage per plan: Pro: 10 GB"


def test_a_sentence_that_points_back_is_quoted_with_the_one_before() -> None:
    passage = kb(
        "kb-guests",
        "By default, guests see the dashboard but cannot change a schedule. An owner can change "
        "this with the setting **Guest editing** under **Settings > Sharing**.",
        heading="Guests",
    )
    units = evidence_units(hits(passage))
    assert [len(u.sentences) for u in units] == [1, 2]
    got = quoted(
        "Guests can't edit",
        "Our gardeners log in as guests and can't change the watering schedule. Is there a "
        "switch that lets them do it?",
        passage,
    )
    assert got[-1].startswith("An owner can change this with the setting **Guest editing**")
    assert got[0].startswith("By default, guests see the dashboard")


# ---------------------------------------------------------------------------- plans


PLANS = kb(
    "kb-storage",
    "Each plan includes storage for sensor readings and photos.\n\n"
    "- Basic: 2 GB\n- Pro: 10 GB\n- Max: 50 GB\n\n"
    "Photos you upload are resized to 800 pixels on the longest side.",
    heading="Storage per plan",
    title="Storage",
)


def test_the_customers_plan_named_before_the_question_picks_its_bullet() -> None:
    got = quoted(
        "Storage",
        "We're on the Pro plan. How much room is there for readings and photos?",
        PLANS,
    )
    assert "Pro: 10 GB" in got
    assert not {"Basic: 2 GB", "Max: 50 GB"} & set(got)
    assert not any("800 pixels" in s for s in got)  # a number, but not a size


def test_a_value_limited_to_a_plan_the_ticket_does_not_name_loses() -> None:
    general = kb("kb-readings", "Readings are kept for 12 months.", heading="Retention")
    scoped = kb("kb-archive", "On the Max plan, readings are kept for 5 years.", heading="Archive")
    ticket = Ticket("T-1", "Readings", "How long do you keep our sensor readings?")
    evidence = hits(general, scoped)
    units = evidence_units(evidence)
    scorer = UnitScorer(ticket, ticket_questions(ticket), units, evidence, minilm().embed)
    assert [scorer.scope_fit(u) for u in units] == [0.0, -SCOPE_BONUS]
    on_max = Ticket("T-2", "Readings", "We're on Max. How long do you keep our sensor readings?")
    scorer = UnitScorer(on_max, ticket_questions(on_max), units, evidence, minilm().embed)
    assert [scorer.scope_fit(u) for u in units] == [0.0, SCOPE_BONUS]
    # Mentioning a plan is not being limited to it.
    trial = kb("kb-trial", "The trial runs for 21 days with the features of the Max plan.")
    assert scorer.plans_of(evidence_units(hits(trial))[0]) == frozenset()


# ---------------------------------------------------------------------------- disagreements


def test_two_articles_that_give_different_counts_are_both_quoted() -> None:
    pairing = kb(
        "kb-pairing",
        "Each hub can be paired with a new phone up to 3 times.",
        heading="Pairing limits",
        title="Pairing a hub",
    )
    app = kb(
        "kb-app",
        "A hub can be paired with a new phone two times at most, from the app or the web.",
        heading="Re-pairing",
        title="The phone app",
    )
    got = quoted("Pairing", "How many times can a hub be paired with a new phone?", pairing, app)
    assert got == [pairing.text, app.text]


def test_an_article_with_the_resolved_tickets_value_stands_in_for_it() -> None:
    ticket_answer = resolved(
        "RT-1",
        "What Android do the phones need?",
        "Any phone with Android 12 or later works, and we suggest 4 GB of memory so photo "
        "uploads stay quick.",
    )
    article = kb(
        "kb-phones",
        "- **Android phones**: Android 12 or later, with a camera.\n"
        "- **iPhones**: iOS 16 or later.",
        heading="Supported phones",
        title="Phone requirements",
    )
    ticket = Ticket("T-1", "Android", "What is the oldest Android version the app runs on?")
    evidence = hits(ticket_answer, article)
    units = evidence_units(evidence)
    scorer = UnitScorer(ticket, ticket_questions(ticket), units, evidence, minilm().embed)
    rt, android, _ = units
    # Worded too differently to say the same by meaning, but it gives the asked-for value.
    assert (scorer.alike(rt, android) or 0.0) < TWIN_SIMILARITY
    twin = scorer.article_twin(scorer.score(0, 0))
    assert twin is not None and twin.unit is android
    got = quoted(
        "Android",
        "What is the oldest Android version the app runs on?",
        *evidence_passages(evidence),
    )
    assert got == ["**Android phones**: Android 12 or later, with a camera."]


def evidence_passages(evidence: list[Hit]) -> list[Passage]:
    return [h.passage for h in evidence]


# ---------------------------------------------------------------------------- facts


def test_days_that_count_only_when_open_are_a_duration() -> None:
    (found,) = quantities("kept aside for five opening days")
    assert (found.dimension, found.value) == ("duration", 5)


def test_the_same_for_every_x_claims_to_hold_everywhere() -> None:
    assert scope_of("The window is the same for every greenhouse on the service.")[1]
    assert not scope_of("The window is the same as last year.")[1]


def test_a_resolved_ticket_and_its_article_conflict_by_meaning_without_shared_words() -> None:
    article = kb(
        "kb-alerts",
        "An alert that nobody acknowledges is repeated every 30 minutes until someone does.",
        heading="Acknowledging",
        title="Alerts",
    )
    ticket_answer = resolved(
        "RT-2",
        "Why did my phone buzz again about the frost warning?",
        "On the Pro plan, an unacknowledged alert is sent again every 2 hours until it is seen.",
    )
    facts = extract_facts([article, ticket_answer])
    links = {"RT-2": ("kb-alerts",)}
    found = find_conflicts(facts, embed=minilm().embed, links=lambda d: links.get(d, ()))
    assert [(c.general.passage_id, c.specific.passage_id) for c in found] == [
        ("kb-alerts#acknowledging", "RT-2#answer")
    ]
    # Without the link, two sentences sharing no words are not taken as one subject.
    assert find_conflicts(facts, embed=minilm().embed) == []


def test_what_the_other_customer_has_is_theirs() -> None:
    question = "Our old tablets stopped syncing - why?"
    assert customer_specific(
        "Tablets need Android 12; yours run Android 9, which is too old.", question
    )
    assert not customer_specific("Tablets need Android 12 or later.", question)
