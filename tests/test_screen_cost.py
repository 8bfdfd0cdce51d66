"""What the safety screen's MiniLM work costs: how texts are batched, and what the engine reuses."""

from __future__ import annotations

from itertools import combinations, pairwise
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from supportagent.agent.safety import SafetyScreen
from supportagent.agent.safety import screen as rules_screen
from supportagent.agent.safety_semantic import default_semantic_safety
from supportagent.domain import SafetyResult, Ticket
from supportagent.engines.triage_model import ticket_features
from supportagent.retrieval import dense
from supportagent.retrieval.dense import OnnxMiniLM, plan_batches
from supportagent.sentences import ticket_sentences

# --- batch plans ------------------------------------------------------------------------------


def _cost(lengths: list[int], runs: list[range], run_cost: int) -> int:
    return sum(run_cost + len(r) * lengths[r.stop - 1] for r in runs)


def _cheapest(lengths: list[int], max_size: int, max_tokens: int, run_cost: int) -> int:
    """Every way to cut the sorted texts into neighbouring runs, tried one by one."""
    n, best = len(lengths), None
    for k in range(n):
        for cuts in combinations(range(1, n), k):
            bounds = [0, *cuts, n]
            runs = [range(a, b) for a, b in pairwise(bounds)]
            if any(
                len(r) > max_size or (len(r) > 1 and len(r) * lengths[r.stop - 1] > max_tokens)
                for r in runs
            ):
                continue
            cost = _cost(lengths, runs, run_cost)
            best = cost if best is None else min(best, cost)
    assert best is not None
    return best


def test_a_long_text_runs_apart_from_short_sentences() -> None:
    # The triage model embeds a ticket's whole text with its sentences: padding four
    # 12-token sentences to the text's 90 tokens cost more than a second run.
    assert plan_batches([12, 12, 13, 14, 90]) == [range(0, 4), range(4, 5)]


def test_similar_sentences_share_one_run() -> None:
    assert plan_batches([10, 11, 11, 12, 12, 13]) == [range(0, 6)]


def test_limits_hold() -> None:
    runs = plan_batches([20] * 10, max_size=4, max_tokens=512)
    assert len(runs) == 3
    assert max(len(r) for r in runs) == 4
    assert plan_batches([300, 300]) == [range(0, 1), range(1, 2)]  # 600 padded tokens > 512
    assert plan_batches([600]) == [range(0, 1)]  # a text longer than a batch runs alone
    assert plan_batches([]) == []


def test_unsorted_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="ascending"):
        plan_batches([30, 10])


@given(
    st.lists(st.integers(min_value=1, max_value=200), min_size=1, max_size=8).map(sorted),
    st.integers(min_value=1, max_value=5),
    st.sampled_from([64, 256, 512]),
    st.sampled_from([0, 12, 40]),
)
def test_the_plan_covers_every_text_once_at_least_cost(
    lengths: list[int], max_size: int, max_tokens: int, run_cost: int
) -> None:
    runs = plan_batches(lengths, max_size=max_size, max_tokens=max_tokens, run_cost=run_cost)
    assert [i for r in runs for i in r] == list(range(len(lengths)))
    assert all(len(r) <= max_size for r in runs)
    assert all(len(r) == 1 or len(r) * lengths[r.stop - 1] <= max_tokens for r in runs)
    assert _cost(lengths, runs, run_cost) == _cheapest(lengths, max_size, max_tokens, run_cost)


# --- the screen's vectors are the engine's ----------------------------------------------------

TICKET = Ticket(
    id="cost-1",
    subject="Exporting the quarterly report",
    body=(
        "Hi team,\n\nHow do I export the quarterly report as a spreadsheet? The export button "
        "is greyed out for my role. Our finance lead needs the file by Friday.\n\nThanks,\nAna"
    ),
)


class _Runs:
    """Records the texts MiniLM's ONNX session is run on (the real session, unchanged)."""

    def __init__(self, session: Any) -> None:
        self.widths: list[tuple[int, int]] = []
        self._session, self._run = session, session.run

    def __call__(self, outputs: Any, feeds: dict[str, Any]) -> Any:
        self.widths.append(feeds["input_ids"].shape)
        return self._run(outputs, feeds)

    def __enter__(self) -> _Runs:
        self._session.run = self
        return self

    def __exit__(self, *_: object) -> None:
        self._session.run = self._run


def test_the_engine_reuses_the_screens_sentence_vectors() -> None:
    detector = default_semantic_safety()
    minilm = OnnxMiniLM()
    sentences = ticket_sentences(TICKET)
    assert len(sentences) >= 3
    dense._MEMO._items.clear()
    runtime = minilm._runtime()
    with _Runs(runtime.session) as screened:
        assert detector.detect(TICKET) is None
    assert sum(rows for rows, _ in screened.widths) == len(sentences)
    from_screen = minilm.embed(sentences)
    with _Runs(runtime.session) as engine:
        ticket_features(TICKET, [], minilm)
    # The triage model (and the search after it) runs MiniLM on the whole text only: the
    # subject is the screen's first sentence, the other sentences the screen embedded.
    assert sum(rows for rows, _ in engine.widths) == 1
    # What the screen left behind is what the engine would have computed for itself.
    dense._MEMO._items.clear()
    fresh = np.vstack([minilm.embed([s]) for s in sentences])
    np.testing.assert_allclose(from_screen, fresh, atol=1e-5)


# --- when the semantic detector is not asked -----------------------------------------------


def _screened(text: str) -> tuple[SafetyResult, int]:
    """The full screen's verdict on a new ticket, and how many texts MiniLM ran on."""
    screen = SafetyScreen(semantic=default_semantic_safety())
    ticket = Ticket(id="cost-2", subject="Account", body=text)
    dense._MEMO._items.clear()
    with _Runs(OnnxMiniLM()._runtime().session) as runs:
        result = screen(ticket)
    return result, sum(rows for rows, _ in runs.widths)


def test_a_self_harm_rule_decides_without_the_semantic_detector() -> None:
    result, embedded = _screened(
        "My account was hacked last night. I want to end my life, I can't take this anymore."
    )
    assert (result.category, result.detector) == ("self_harm_risk", "rules")
    assert embedded == 0


def test_a_less_urgent_rule_still_asks_the_semantic_detector() -> None:
    # A legal rule can be outranked by a self-harm sentence the rules do not know.
    text = (
        "I will be contacting my lawyer about these charges. Honestly everyone would be "
        "better off if I just disappeared for good."
    )
    assert rules_screen(text).category == "legal_threat"
    result, embedded = _screened(text)
    assert embedded > 0
    assert (result.category, result.detector) == ("self_harm_risk", "semantic")
