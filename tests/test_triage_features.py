"""The triage model's hand features: issue-tracker marks and hashed words, read in prose."""

import numpy as np

from supportagent.domain import Ticket
from supportagent.engines.triage_model import (
    HEAD_WORDS,
    ISSUE_PATTERNS,
    LAYOUT_PATTERNS,
    SHAPE_SCALE,
    TriageModel,
    shape_features,
    word_features,
)

QUESTION, PROPOSAL, REPORT = range(3)


def _issue_marks(text: str) -> list[float]:
    shape = shape_features(Ticket("t", "", text), [])
    start = len(shape) - len(ISSUE_PATTERNS) - len(LAYOUT_PATTERNS) - 2
    return [v / SHAPE_SCALE for v in shape[start : start + len(ISSUE_PATTERNS)]]


def _layout_marks(text: str) -> list[float]:
    shape = shape_features(Ticket("t", "", text), [])
    end = len(shape) - 2
    return [v / SHAPE_SCALE for v in shape[end - len(LAYOUT_PATTERNS) : end]]


def test_a_question_to_the_maintainers_is_marked_without_a_question_mark() -> None:
    marks = _issue_marks("I am trying to run the exporter behind a proxy and I am not sure how")
    assert marks[QUESTION] == 1.0
    assert _issue_marks("The exporter writes empty files behind a proxy.")[QUESTION] == 0.0


def test_proposals_and_reports_are_marked() -> None:
    assert _issue_marks("It would be nice to add an option to skip hidden files.")[PROPOSAL]
    assert _issue_marks("The build fails to compile after upgrading to 3.2.")[REPORT]
    assert not _issue_marks("Where are the logs kept?")[REPORT]


def test_identifiers_inside_code_set_no_mark() -> None:
    in_code = "Calling `how_to_install_feature()` returns 3.\n\n```\nenhancement = question\n```"
    assert _issue_marks(in_code) == [0.0, 0.0, 0.0]


def test_layout_marks_an_issue_template() -> None:
    template = "### Environment\n- [x] I searched the issues\nVersion 2.4.1, see setup.py"
    assert _layout_marks(template) == [1.0, 1.0, 1.0, 1.0]
    assert _layout_marks("How do I change my password?") == [0.0, 0.0, 0.0, 0.0]


def test_word_features_are_a_unit_vector_of_prose_words_only() -> None:
    plain = word_features("how do I export reports")
    assert np.isclose(np.linalg.norm(plain), 1.0)
    assert np.array_equal(word_features("how do I export reports `render_pdf_now`"), plain)
    assert not np.array_equal(word_features("the export fails with reports"), plain)
    assert not word_features("```\nonly_code()\n```").any()


def test_head_words_read_only_the_opening() -> None:
    opening = " ".join(f"w{chr(97 + i)}" for i in range(HEAD_WORDS))
    assert np.array_equal(
        word_features(opening + " and much more after it", HEAD_WORDS),
        word_features(opening, HEAD_WORDS),
    )


def test_the_shipped_model_reads_these_features() -> None:
    model = TriageModel.load()
    assert model.meta["word_slots"] * 2 + 3 * 384 + len(shape_features(Ticket("t", "", "x"), [])) == (
        model.weights.shape[0]
    )
