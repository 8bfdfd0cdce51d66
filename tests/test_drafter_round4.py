"""The offline drafter's fourth round, on hand-made passages about an invented bakery
ordering service: clauses that are not questions, versions and durations asked in other
words, counts that are not counts, names in bold labels, sentences that point back with
"than that", short names the evidence spells out, near-equal names, a resolved ticket's
other value, and conflicts that stay one per value.

The drafter runs with the shipped MiniLM model, as the pipeline gives it.
"""

from __future__ import annotations

from drafting import hits, kb, minilm, quoted, resolved
from supportagent.agent.facts import extract_facts, find_conflicts
from supportagent.agent.questions import AnswerKind, classify_question, has_answer, ticket_questions
from supportagent.domain import Passage, Ticket
from supportagent.engines.extract import Unit, evidence_units
from supportagent.engines.offline import OfflineEngine, _names_among_items
from supportagent.engines.scoring import Scored, UnitScorer, spelled_out

# ---------------------------------------------------------------------------- what is asked


def test_a_clause_that_says_when_is_not_a_question_of_its_own() -> None:
    [question] = ticket_questions(
        Ticket(
            "T-1",
            "Courier scans",
            "When the courier scans the crate at the door, does the app mark the order "
            "delivered by itself?",
        )
    )
    assert question.kind is AnswerKind.YES_NO
    assert question.text.startswith("When the courier scans the crate")
    # "When does ..." is still a question of its own.
    asked = ticket_questions(
        Ticket("T-2", "Cut-off", "When does the cut-off pass, and how long is the bake?")
    )
    assert [q.kind for q in asked] == [AnswerKind.OTHER, AnswerKind.NUMBER] or len(asked) == 2


def test_a_release_or_a_build_is_a_version() -> None:
    assert classify_question("What is the oldest release of the till app we can run?").kind is (
        AnswerKind.VERSION
    )
    assert classify_question("Which build of the oven firmware do we need?").kind is (
        AnswerKind.VERSION
    )


def test_staying_forever_or_ending_after_a_while_asks_how_long() -> None:
    question = classify_question(
        "If nobody confirms the order, does it stay on hold forever, or does it lapse after a "
        "while?"
    )
    assert question.kind is AnswerKind.DURATION
    assert classify_question("Is the oven fine after a while of rest?").kind is (
        AnswerKind.DURATION
    )


# ---------------------------------------------------------------------------- answers


def test_one_by_one_is_no_count() -> None:
    question = classify_question("How many trays fit in one delivery van?")
    assert not has_answer("Load the trays one by one, flat side down.", question)
    assert not has_answer("Ask one of the drivers to help you.", question)
    assert has_answer("A van carries up to twelve trays.", question) or has_answer(
        "A van carries up to 12 trays.", question
    )
    assert has_answer("One van is included.", question)


def test_a_bold_label_names_a_role() -> None:
    question = classify_question("Which role lets him change recipes?")
    assert question.kind is AnswerKind.NAME
    assert has_answer("**Editor**: changes recipes and prices, but not invoices.", question)
    assert not has_answer("changes recipes and prices, but not invoices.", question)


def test_more_than_that_is_quoted_with_the_sentence_it_points_back_at() -> None:
    passage = kb(
        "kb-orders",
        "Orders of up to 40 loaves are baked the same day. Anything larger than that needs "
        "two days' notice. Rye is baked on Tuesdays.",
    )
    texts = [u.text for u in evidence_units(hits(passage))]
    assert (
        "Orders of up to 40 loaves are baked the same day. Anything larger than that needs "
        "two days' notice."
    ) in texts


def test_older_than_gives_the_oldest_version_that_works() -> None:
    passage = kb(
        "kb-till",
        "The current release is 4.1. Releases older than 3.2 can no longer connect to the ovens.",
        heading="Till app",
        title="The till app",
    )
    ticket = Ticket("T-1", "Old tills", "What is the oldest release of the till app we can run?")
    questions = ticket_questions(ticket)
    units = evidence_units(hits(passage))
    scorer = UnitScorer(ticket, questions, units, hits(passage), None)
    current, older = units
    assert scorer.qualifies(0, older) and not scorer.qualifies(0, current)


# ---------------------------------------------------------------------------- other words


def test_short_names_the_evidence_spells_out() -> None:
    texts = [
        "Directory sync uses SCIM. Lightweight Directory Access Protocol is not offered.",
        "Multi-factor authentication (MFA) protects every login.",
    ]
    found = spelled_out("Do you do LDAP, and is MFA required? What about SCIM?", texts)
    assert found == {
        "LDAP": "Lightweight Directory Access Protocol",
        "MFA": "Multi factor authentication",
    }
    # A short name the evidence uses as it is needs nothing; nor do random capitals.
    assert spelled_out("Is the API fast?", ["The API is fast.", "Any Phone Idea"]) == {}


def test_a_name_question_quotes_a_second_name_of_the_same_article() -> None:
    passage = kb(
        "kb-bakery-api",
        "Each token may make 60 calls a minute. Above that, the service answers 429 with a "
        "`Wait-Seconds` header giving the seconds to wait. Send the token in the "
        "`X-Oven-Token` header with every call.",
        heading="Calling the API",
        title="The bakery API",
    )
    got = quoted("Token", "Which request header do we put our API token in?", passage)
    assert any("`X-Oven-Token`" in s for s in got)


def _item(text: str, passage: Passage, position: int) -> Unit:
    return Unit((text,), passage, 1, position, "item")


def test_a_near_tie_of_named_bullets_quotes_the_list() -> None:
    roles = kb("kb-roles", "", heading="The roles")
    a, b, c, d = (
        _item(text, roles, k)
        for k, text in enumerate(
            (
                "**Owner**: everything, including billing.",
                "**Baker**: sees the day's orders.",
                "**Shift lead**: approves waste and holds orders.",
                "**Driver**: sees deliveries.",
            )
        )
    )
    question = classify_question("Which role should I give him?")
    near = [Scored(u, 0, score, True, True) for u, score in ((a, 0.50), (b, 0.49), (c, 0.47))]
    assert _names_among_items(question, near[0], [*near, Scored(d, 0, 0.30, True, True)])
    apart = [Scored(u, 0, score, True, True) for u, score in ((a, 0.50), (b, 0.49), (c, 0.40))]
    assert not _names_among_items(question, apart[0], apart)
    other = classify_question("How many people can hold the Owner role?")
    assert not _names_among_items(other, near[0], near)


# ---------------------------------------------------------------------------- two sides


def test_a_resolved_ticket_linked_to_the_article_is_quoted_as_the_other_value() -> None:
    article = kb(
        "kb-proofing",
        "A proofing cabinet keeps dough at temperature for up to 12 hours; after that it "
        "switches to cooling. This limit is the same for every cabinet model.",
        heading="Proofing",
        title="Proofing cabinets",
    )
    ticket = resolved(
        "RT-77",
        "Our dough went cold overnight in the compact cabinet. Why?",
        "The compact cabinet has a smaller heater, so it can hold dough warm for 6 hours at "
        "most before it starts to cool.",
    )
    engine = OfflineEngine(embed=minilm().embed)
    engine.use_links(lambda doc: ("kb-proofing",) if doc == "RT-77" else ())
    draft = engine.draft(
        Ticket(
            "T-9",
            "Overnight proofing",
            "Our night shift leaves dough in the cabinets. How long do they keep it warm "
            "before cooling?",
        ),
        hits(article, ticket),
    )
    text = " ".join(s.text for s in draft.sentences)
    assert "12 hours" in text and "6 hours" in text


def test_a_resolved_value_disagrees_with_one_value_of_its_article_not_all() -> None:
    article = kb(
        "kb-keeping",
        "Order history: 2 years on every account. Invoices: 7 years. Delivery photos: 90 "
        "days. An export link works for 3 days.",
        heading="How long records are kept",
        title="Records and retention",
    )
    ticket = resolved(
        "RT-80",
        "How long is our order history kept? We are hosted in the northern region.",
        "For bakeries hosted in the northern region, order history is kept for 18 months.",
    )
    conflicts = find_conflicts(
        extract_facts([article, ticket]),
        embed=minilm().embed,
        links=lambda doc: ("kb-keeping",) if doc == "RT-80" else (),
    )
    assert len(conflicts) == 1
    assert "Order history" in conflicts[0].general.sentence


def test_a_schedule_that_keeps_a_span_does_not_conflict_with_a_delay() -> None:
    article = kb(
        "kb-closing",
        "After 30 days a closed account is deleted.",
        heading="Closing an account",
        title="Records and retention",
    )
    ticket = resolved(
        "RT-81",
        "Where did our old delivery log go?",
        "The delivery log reaches back 12 months; older entries are removed at the start of "
        "each month.",
    )
    conflicts = find_conflicts(
        extract_facts([article, ticket]),
        embed=minilm().embed,
        links=lambda doc: ("kb-closing",) if doc == "RT-81" else (),
    )
    assert all(c.specific.role != "frequency" and c.general.role != "frequency" for c in conflicts)


def test_a_sentence_and_the_one_pointing_back_answer_together() -> None:
    passage = kb(
        "kb-uptime",
        "Support answers within one business day. On the Pro plan, the ordering portal commits "
        "to 99.5% monthly uptime. If a month falls below that, you can ask for a credit of 5% "
        "of the month's fee.",
        heading="Uptime",
        title="Uptime and support",
    )
    got = quoted(
        "Uptime",
        "We are on Pro. What uptime do you commit to, and what do we get back if you miss it?",
        passage,
    )
    assert any("99.5%" in s for s in got) and any("credit of 5%" in s for s in got)


def test_a_word_of_one_family_counts_in_the_terms() -> None:
    passage = kb("kb-sites", "Each bakery site includes 3 oven connections.")
    ticket = Ticket("T-1", "Ovens", "How many ovens can we connect?")
    units = evidence_units(hits(passage))
    scorer = UnitScorer(ticket, ticket_questions(ticket), units, hits(passage), None)
    alone = UnitScorer(
        Ticket("T-2", "Ovens", "How many ovens are there?"),
        ticket_questions(Ticket("T-2", "Ovens", "How many ovens are there?")),
        units,
        hits(passage),
        None,
    )
    assert scorer.lexical(0, 0) > alone.lexical(0, 0) > 0


def test_another_value_alike_by_meaning_only_is_not_quoted_as_a_rival() -> None:
    returns = kb(
        "kb-returns",
        "A return code is valid for 30 days; crates that arrive later are still taken in but "
        "marked late.",
        heading="Return codes",
        title="Returns",
    )
    hooks = kb(
        "kb-hooks",
        "Failed deliveries are retried 8 times over 24 hours, with longer waits each time.",
        heading="Retries",
        title="Webhooks",
    )
    got = quoted(
        "Late returns",
        "How long does a return code stay valid before the crate is flagged?",
        returns,
        hooks,
    )
    assert not any("retried" in s for s in got)


def test_a_yes_no_question_is_answered_by_whether_the_named_thing_is_supported() -> None:
    passage = kb(
        "kb-login",
        "Staff sign in to the order portal with a password and a one-time code. The portal "
        "works with any SAML 2.0 identity provider, such as your office directory. "
        "Lightweight Directory Access Protocol is not supported.",
        heading="Signing in",
        title="Signing in",
    )
    got = quoted(
        "Directory login",
        "Our IT people run everything on LDAP. Can the bakers log in to the portal that way?",
        passage,
    )
    assert got[0] == "Lightweight Directory Access Protocol is not supported."
