"""Issue 12: a draft that states one value where its sources give two is one-sided.

``grounding.one_sided_values`` holds each value a draft sentence states (answering a ticket's
question that asks for a duration or a number) against the other documents the draft cites
(or, for the wider net, passages it was given and did not cite). Hand-made passages about
invented services: a tool-lending library, a charity discount, listing photos.
"""

from __future__ import annotations

from collections.abc import Sequence

from drafting import kb, resolved
from supportagent.agent.grounding import DIFFERING_VALUES, differing_flags, one_sided_values
from supportagent.agent.questions import ticket_questions
from supportagent.domain import Draft, DraftSentence, Passage, Ticket

RULE = "Every member may keep a borrowed drill or saw for up to 14 days, whichever branch lent it."
CASE = (
    "Those cordless saws go out from a shared rack, so a member may keep a saw for 7 days at most."
)
ASKS = "I want to borrow a cordless saw for a deck. How long can I keep it?"


def _rule() -> Passage:
    return kb("kb-loans", RULE, "Loan length", "Borrowing tools")


def _case() -> Passage:
    return resolved("RT-1", "How long can I have the cordless saw?", CASE)


def _pairs(
    body: str,
    sentences: Sequence[tuple[str, Sequence[Passage]]],
    evidence: Sequence[Passage],
    uncited: Sequence[Passage] = (),
) -> list[tuple[str, str, str]]:
    draft = Draft(tuple(DraftSentence(t, tuple(p.id for p in ps)) for t, ps in sentences), 0.5)
    questions = ticket_questions(Ticket("T-1", "A question", body))
    found = one_sided_values(draft, evidence, questions, uncited=uncited)
    return [(a.quantity.raw, b.quantity.raw, b.passage_id) for a, b in found]


# ------------------------------------------------------------------------- one side told


def test_a_value_held_against_another_cited_document_is_a_pair() -> None:
    rule, case = _rule(), _case()
    pairs = _pairs(
        ASKS, [(RULE, [rule]), ("That is the same for every tool.", [case])], [rule, case]
    )
    assert pairs == [("14 days", "7 days", "RT-1#answer")]


def test_one_sentence_citing_both_documents_is_held_against_the_one_without_its_value() -> None:
    rule, case = _rule(), _case()
    assert _pairs(ASKS, [(RULE, [rule, case])], [rule, case]) == [
        ("14 days", "7 days", "RT-1#answer")
    ]


def test_the_scoped_side_alone_is_held_against_the_rule() -> None:
    rule, case = _rule(), _case()
    pairs = _pairs(ASKS, [(CASE, [case]), ("Staff can renew a loan.", [rule])], [rule, case])
    assert pairs == [("7 days", "14 days", "kb-loans#loan-length")]


def test_a_percentage_in_other_words_is_a_pair() -> None:
    general = "Registered charities get 20% off the monthly price of every plan."
    scoped = "Because your charity is registered in Ireland, the discount on your invoices is 35%."
    a = kb("kb-discounts", general, "Charity discount", "Discounts")
    b = resolved("RT-2", "What discount do Irish charities get?", scoped)
    pairs = _pairs(
        "We are a registered charity. How much of a discount do we get?",
        [(general, [a]), ("This applies to every charity.", [b])],
        [a, b],
    )
    assert pairs == [("20%", "35%", "RT-2#answer")]


def test_a_size_in_other_words_is_a_pair() -> None:
    general = "Each photo you attach to a listing can be up to 25 MB."
    scoped = "The older bulk importer turns away any photo larger than 8 MB, so resize them first."
    a = kb("kb-photos", general, "Photo size", "Listings")
    b = resolved("RT-3", "Why were my photos rejected by the importer?", scoped)
    pairs = _pairs(
        "How big can each listing photo be?",
        [(general, [a]), ("That holds for the bulk importer too.", [b])],
        [a, b],
    )
    assert pairs == [("25 MB", "8 MB", "RT-3#answer")]
    draft = Draft((DraftSentence(general, (a.id, b.id)),), 0.5)
    found = one_sided_values(draft, [a, b], ticket_questions(Ticket("T-1", "Photos", "How big?")))
    assert differing_flags(draft, found) == (DIFFERING_VALUES,)


# ------------------------------------------------------------------------- not one-sided


def test_another_passage_of_the_same_document_is_no_pair() -> None:
    rule = _rule()
    other = kb("kb-loans", CASE, "Saws", "Borrowing tools")
    pairs = _pairs(ASKS, [(RULE, [rule]), ("Saws share a rack.", [other])], [rule, other])
    assert pairs == []


def test_the_same_value_in_the_other_document_is_no_pair() -> None:
    rule = _rule()
    same = resolved("RT-1", "How long can I have the saw?", "You may keep the saw for 14 days.")
    assert _pairs(ASKS, [(RULE, [rule]), ("Saws are popular.", [same])], [rule, same]) == []


def test_a_document_that_states_both_values_gives_cases_not_a_pair() -> None:
    rule = _rule()
    both = resolved(
        "RT-1",
        "How long can I have the saw?",
        f"{CASE} A drill from the same branch can stay out for up to 14 days.",
    )
    assert _pairs(ASKS, [(RULE, [rule]), ("Saws are popular.", [both])], [rule, both]) == []


def test_a_draft_that_tells_both_sides_is_left_to_differing_values() -> None:
    rule, case = _rule(), _case()
    assert _pairs(ASKS, [(RULE, [rule]), (CASE, [case])], [rule, case]) == []


def test_a_question_of_another_kind_gives_no_pair() -> None:
    rule, case = _rule(), _case()
    sentences = [(RULE, [rule]), ("That is the same for every tool.", [case])]
    assert _pairs("How do I reserve a cordless saw online?", sentences, [rule, case]) == []


def test_a_value_of_another_kind_gives_no_pair() -> None:
    rule = _rule()
    count = resolved(
        "RT-4", "How many saws do you have?", "The shared rack holds 12 cordless saws in all."
    )
    sentences = [(RULE, [rule]), ("The saws share a rack.", [count])]
    assert _pairs(ASKS, sentences, [rule, count]) == []


# ------------------------------------------------------------------------- the wider net


def test_the_wider_net_holds_the_value_against_an_uncited_passage() -> None:
    rule, case = _rule(), _case()
    assert _pairs(ASKS, [(RULE, [rule])], [rule]) == []
    assert _pairs(ASKS, [(RULE, [rule])], [rule], uncited=[case]) == [
        ("14 days", "7 days", "RT-1#answer")
    ]
