"""Round 24 of the offline drafter (twenty-fourth session): a question that names the measure it
asks for ("what figure does it assume ...?", "what weight is used ...?", "what capacity does it
assume ...?", "what number of seats ...?") asks for a number, and a draft for it must carry one.
Before this round such a question had no kind, so a sentence of the right section without the
value could answer it (Windlog's WL-001 quoted "enter their actual weight if you know it"). A
price named elsewhere in it does not make it a question about money ("at what weight does it
start adding the extra charge?" is answered by a weight).

The sentences are written for these tests and appear in no data file.
"""

from __future__ import annotations

import pytest

from drafting import kb, quoted
from supportagent.agent.questions import AnswerKind, Question, classify_question, has_answer


@pytest.mark.parametrize(
    "text",
    [
        "When nobody fills in the bag weight, what figure does the app assume for each bag?",
        "What weight does the planner use for a child?",
        "What number of guests comes with the Family pass?",
        "What distance is allowed between two stops?",
        "What storage capacity does the app assume for a new freezer?",
    ],
)
def test_a_value_asked_for_by_its_name_is_a_number_question(text: str) -> None:
    assert classify_question(text).kind is AnswerKind.NUMBER


@pytest.mark.parametrize(
    "text",
    [
        "What phone number should I call?",
        "What value should the Status field have?",
        "What amount is refunded if I cancel?",
        "What size does the jacket come in?",
        "How do I change the default weight unit?",
    ],
)
def test_a_name_or_a_procedure_stays_what_it_was(text: str) -> None:
    assert classify_question(text).kind is not AnswerKind.NUMBER


def test_a_measure_named_is_asked_for_even_beside_a_price() -> None:
    question = classify_question(
        "At what weight does the courier start adding the heavy parcel fee?"
    )
    assert question.kind is AnswerKind.NUMBER
    assert has_answer("Parcels over 20 kg carry the heavy parcel fee.", question)


def test_a_number_question_needs_a_number_in_the_answer() -> None:
    question = Question("What figure does the app assume for each bag?", AnswerKind.NUMBER)
    assert has_answer("Without a weight, each bag is counted as 23 kg.", question)
    assert not has_answer("Enter each bag's real weight if you have it.", question)


def test_the_draft_quotes_the_sentence_with_the_value_not_its_neighbours() -> None:
    article = kb(
        "kb-boat-load",
        "Each skipper's weight is taken from their crew profile. For guests, enter their actual "
        "weight if you know it. When a guest's actual weight isn't entered, the load check uses "
        "a standard weight of 80 kg per adult and 30 kg per child.",
        heading="People aboard",
        title="Boat load",
    )
    sentences = quoted(
        "Blank guest weights",
        "We run trips from Oban. When a skipper leaves the guests' weights empty on the trip "
        "sheet, what figure does the app assume for each grown-up aboard?",
        article,
    )
    assert any("80 kg" in s for s in sentences), sentences
    assert not any("crew profile" in s for s in sentences), sentences
