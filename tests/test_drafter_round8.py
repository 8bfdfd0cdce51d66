"""The offline drafter's eighth round, on hand-made passages about an invented bicycle-dock
rental service: a model name the customer's question writes the way the resolved answer does
("the Trellis M3 docks") is not that customer's case; names of the asked-for kind are known
from the evidence (the roles its role list labels, the plans it names); a short follow-up
("is it different for ...?") asks for what the question before it asked for; "the most" and
"the highest" give a maximum.

The drafter runs with the shipped MiniLM model, as the pipeline gives it.
"""

from __future__ import annotations

from drafting import hits, kb, quoted, resolved
from supportagent.agent.questions import AnswerKind, classify_question, ticket_questions
from supportagent.domain import Ticket
from supportagent.engines.extract import customer_specific, evidence_units
from supportagent.engines.scoring import SCOPE_BONUS, UnitScorer


def test_a_model_name_the_question_shares_is_not_the_customers_case() -> None:
    question = "Our Trellis M3 docks at the harbour stopped unlocking bikes. What happened?"
    # "M3" has a digit and the customer wrote it, but it names a kind of dock, not a case.
    assert not customer_specific(
        "Those Trellis M3 docks keep a local list of riders for 12 hours only.", question
    )
    # An amount, a count or an id the customer gave is still theirs.
    assert customer_specific("The 14 docks you listed were reset.", "Our 14 docks are down.")
    assert customer_specific("Ticket AB-2231 was closed.", "About ticket AB-2231: why?")


def test_a_resolved_answer_about_a_named_model_is_quoted_beside_the_rule() -> None:
    rule = kb(
        "kb-docks",
        "If a station loses its connection, the docks keep unlocking bikes for riders for up to "
        "48 hours on every dock model, and the rides are uploaded when it returns.",
        "When the connection drops",
        "Docks",
    )
    answer = resolved(
        "RT-1",
        "Our station near the pier lost its link and riders were stuck by evening. "
        "The docks there are the old Trellis M3 ones. Why?",
        "Those Trellis M3 docks keep a local list of riders for 12 hours only once the "
        "station's link drops. Newer docks do not have this limit.",
    )
    got = quoted(
        "Network work at the pier",
        "Our provider will cut the line at the pier station next week. The docks there are "
        "Trellis M3. How long will riders still be able to unlock bikes while it is down?",
        rule,
        answer,
    )
    assert any("12 hours" in s for s in got)


ROLES = [
    kb("kb-staff", text, "The five roles", "Staff and roles")
    for text in (
        "- **Station Lead**: runs one or more stations: docks, prices and repairs.",
        "- **Treasurer**: invoices, payouts and refunds at every station.",
        "- **Mechanic**: sees docks and bikes and marks bikes out of service.",
    )
]
REPORTS = kb(
    "kb-reports",
    "Payout reports are made each night. Payout reports can be downloaded by the Owner, a "
    "Station Lead or the Treasurer. A report link works for 3 days.",
    "Payout reports",
    "Reports",
)


def test_names_the_evidence_lists_as_roles_answer_which_roles() -> None:
    # The reports sentence never says "role", but the roles section labels the names it gives.
    got = quoted(
        "Reports",
        "Which roles are allowed to download the payout reports?",
        REPORTS,
        *ROLES,
    )
    assert got[0] == (
        "Payout reports can be downloaded by the Owner, a Station Lead or the Treasurer."
    )


FEES = [
    kb("kb-pay", text, "Fees", "Payments")
    for text in (
        "Card rentals cost 1.9% plus $0.20 each.",
        "Wallet top-ups cost 0.5%, capped at $2 per top-up.",
        "Riders pay by card or from a wallet topped up in the app.",
    )
]


def test_a_follow_up_asks_for_what_the_question_before_asked() -> None:
    questions = ticket_questions(
        Ticket(
            "T-1",
            "Fees",
            "What do you charge for each card rental, and is it different when riders pay "
            "from a wallet?",
        )
    )
    assert [(q.kind, q.focus) for q in questions] == [
        (AnswerKind.NUMBER, "money"),
        (AnswerKind.NUMBER, "money"),
    ]
    got = quoted(
        "Fees",
        "What do you charge for each card rental, and is it different when riders pay "
        "from a wallet?",
        *FEES,
    )
    assert "Wallet top-ups cost 0.5%, capped at $2 per top-up." in got


def test_what_a_purchase_adds_to_the_bill_asks_for_a_price() -> None:
    question = classify_question("What will the extra station add to our monthly bill?")
    assert (question.kind, question.focus) == (AnswerKind.NUMBER, "money")


def test_the_plan_a_customer_says_they_are_on_is_known_at_the_start_of_a_sentence() -> None:
    # "On Hub, ..." opens its sentence: the customer's "We're on Hub" names a plan all the same.
    prices = [
        kb("kb-plans", text, "The plans", "Plans")
        for text in (
            "- **Kiosk**, $39 a month: one station, up to 40 docks.",
            "- **Hub**, $129 a month: three stations included, up to 400 docks.",
            "- **Metro**, $299 a month: up to 20 stations and unlimited docks.",
        )
    ]
    extra = kb(
        "kb-plans",
        "On Hub, each station beyond the three included costs $35 a month.",
        "Extra stations",
        "Plans",
    )
    other = kb(
        "kb-plans",
        "On Metro, each station beyond the twenty included costs $25 a month.",
        "More stations",
        "Plans",
    )
    got = quoted(
        "A fourth station",
        "We're on Hub with three stations and want a fourth. What will the extra station add "
        "to our monthly bill?",
        *prices,
        other,
        extra,
    )
    assert got[0] == "On Hub, each station beyond the three included costs $35 a month."
    body = "We're on Hub with three stations. What will the extra station add to our bill?"
    ticket = Ticket("T-1", "A fourth station", body)
    evidence = hits(*prices, other, extra)
    units = evidence_units(evidence)
    scorer = UnitScorer(ticket, ticket_questions(ticket), units, evidence, None)
    fits = {u.text: scorer.scope_fit(u) for u in units if u.passage is extra}
    assert fits == {extra.text: SCOPE_BONUS}


def test_the_most_or_the_highest_gives_a_maximum() -> None:
    cover = kb(
        "kb-cover",
        "Riders choose a cover level when they rent. The highest level, $2,500, is the most "
        "one bike can be covered for.",
        "Cover levels",
        "Theft cover",
    )
    stations = kb(
        "kb-wallet",
        "A single rider's wallet can hold up to $500 at a time.",
        "Wallet limits",
        "Wallets",
    )
    got = quoted(
        "Best cover",
        "What's the largest amount of theft cover a single bike can get?",
        stations,
        cover,
    )
    assert got[0] == "The highest level, $2,500, is the most one bike can be covered for."


def test_a_short_no_comes_with_what_happens_instead() -> None:
    repairs = kb(
        "kb-repairs",
        "Dockwise does not repair bikes itself. Stations book repairs with our partner "
        "Spokeworks from the bike's page; the booking carries the fault and photos. The repair "
        "price is added to the station's monthly invoice.",
        "Repairs",
        "Bikes",
    )
    got = quoted(
        "Who fixes the bikes?",
        "When a bike is reported broken, does Dockwise repair it for us?",
        repairs,
    )
    assert got[:2] == [
        "Dockwise does not repair bikes itself.",
        "Stations book repairs with our partner Spokeworks from the bike's page; the booking "
        "carries the fault and photos.",
    ]


def test_an_articles_steps_that_give_the_value_replace_a_resolved_ticket_saying_it() -> None:
    steps = kb(
        "kb-waitlist",
        "When a dock frees up at a full station, it is offered to the first rider on the list:\n"
        "1. The rider receives a text with a link.\n"
        "2. The dock is held for them for 30 minutes.\n"
        "3. If they do not unlock a bike, the offer goes to the next rider.",
        "Offers to waiting riders",
        "Waitlists",
    )
    answer = resolved(
        "RT-2",
        "A rider says the dock offer vanished. How long is an offer held?",
        "Each waitlist offer for a dock is held for 30 minutes before it moves on.",
    )
    got = quoted(
        "Dock offers",
        "When a dock opens up and the first rider on the waitlist gets the offer, how long do "
        "they have to take it before it moves on?",
        answer,
        steps,
    )
    assert "The dock is held for them for 30 minutes." in got
    assert not any(s.startswith("Each waitlist offer") for s in got)


def test_the_cheapest_plan_is_the_listed_plan_with_the_lowest_price() -> None:
    plans = [
        kb("kb-plans", text, "The three plans", "Plans and prices")
        for text in (
            "- **Metro**, $299 a month: up to 20 stations, unlimited docks.",
            "- **Kiosk**, $39 a month: one station, up to 40 docks.",
            "- **Hub**, $129 a month: three stations, up to 400 docks.",
        )
    ]
    cover = kb(
        "kb-cover",
        "The highest level, $2,500, is the most one dock can be insured for on any plan.",
        "Cover levels",
        "Dock insurance",
    )
    got = quoted(
        "Starting out",
        "We have a yard by the river and about 30 bikes so far. We'd like to start on the cheapest "
        "plan. How many docks can that plan hold before we'd have to move up?",
        cover,
        *plans,
    )
    assert got[0] == "**Kiosk**, $39 a month: one station, up to 40 docks."
    ticket = Ticket("T-1", "Starting out", "We'd like to start on the cheapest plan. How many?")
    evidence = hits(cover, *plans)
    units = evidence_units(evidence)
    scorer = UnitScorer(ticket, ticket_questions(ticket), units, evidence, None)
    fits = {u.text.split(",")[0]: scorer.scope_fit(u) for u in units if u.shape == "item"}
    assert fits == {"**Metro**": -SCOPE_BONUS, "**Kiosk**": SCOPE_BONUS, "**Hub**": -SCOPE_BONUS}
