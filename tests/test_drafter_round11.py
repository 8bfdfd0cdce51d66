"""Round 11 of issue 12 (ninth session; from Echofold, released as tune data): a question for
the system software a phone needs asks for a version, and a name question is not answered by
a capitalised word the question already says (the product's own name).

Sentences written for these tests, about an invented rowing-club app; in no data file.
"""

from __future__ import annotations

import pytest

from supportagent.agent.questions import AnswerKind, classify_question, has_answer


@pytest.mark.parametrize(
    "text",
    [
        "What system software does an Android phone need for the Oarlock app?",
        "Which operating system is required to run the desktop timer?",
        "What's the minimum OS the tablet needs to run it?",
    ],
)
def test_system_software_asked_for_is_a_version(text: str) -> None:
    assert classify_question(text).kind is AnswerKind.VERSION


def test_a_plain_which_question_is_not_a_version() -> None:
    assert classify_question("Which boat does the coach need for the Sunday crew?").kind is not (
        AnswerKind.VERSION
    )


def test_the_products_own_name_does_not_answer_a_name_question() -> None:
    question = classify_question("Which role can close our Oarlock club account?")
    assert question.kind is AnswerKind.NAME
    assert not has_answer("Every Oarlock club has members, each with one role.", question)
    assert has_answer("Only the Captain can close the club account.", question)
    assert has_answer("Only the `captain` role can close it.", question)


def test_a_name_the_question_offers_still_counts_when_bold() -> None:
    question = classify_question("Which role, Coach or Captain, can close the account?")
    assert has_answer("Only the **Captain** can close the account.", question)
