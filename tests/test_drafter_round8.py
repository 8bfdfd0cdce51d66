"""The offline drafter's eighth round, on hand-made passages about an invented bicycle-dock
rental service: a model name the customer's question writes the way the resolved answer does
("the Trellis M3 docks") is not that customer's case; names of the asked-for kind are known
from the evidence (the roles its role list labels, the plans it names); a short follow-up
("is it different for ...?") asks for what the question before it asked for; "the most" and
"the highest" give a maximum.

The drafter runs with the shipped MiniLM model, as the pipeline gives it.
"""

from __future__ import annotations

from drafting import kb, quoted, resolved
from supportagent.engines.extract import customer_specific


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
