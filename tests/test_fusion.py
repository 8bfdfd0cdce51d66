"""Reciprocal Rank Fusion: a hand calculation, weights, ties, repeats, and properties."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from supportagent.retrieval.fusion import (
    DEFAULT_WEIGHTS,
    Fusion,
    reciprocal_rank_fusion,
    weighted_score_fusion,
)


def test_three_lists_by_hand() -> None:
    rankings = {
        "a": ["d1", "d2", "d3"],
        "b": ["d2", "d1", "d4"],
        "c": ["d1", "d4"],
    }
    # k = 60, 1-based ranks:
    # d1: a#1, b#2, c#1 -> 1/61 + 1/62 + 1/61 = 0.0327869 + 0.0161290 = 0.0489159
    # d2: a#2, b#1      -> 1/62 + 1/61        = 0.0161290 + 0.0163934 = 0.0325225
    # d4: b#3, c#2      -> 1/63 + 1/62        = 0.0158730 + 0.0161290 = 0.0320020
    # d3: a#3           -> 1/63               = 0.0158730
    expected = {
        "d1": Fraction(1, 61) + Fraction(1, 62) + Fraction(1, 61),
        "d2": Fraction(1, 62) + Fraction(1, 61),
        "d4": Fraction(1, 63) + Fraction(1, 62),
        "d3": Fraction(1, 63),
    }
    fused = reciprocal_rank_fusion(rankings, k=60)
    assert [item for item, _ in fused] == ["d1", "d2", "d4", "d3"]
    for item, score in fused:
        assert score == pytest.approx(float(expected[item]), rel=1e-12)
    assert fused[0][1] == pytest.approx(0.0489159, abs=1e-7)


def test_weights_scale_each_signal() -> None:
    rankings = {"body": ["x", "y"], "title": ["y", "x"]}
    # Equal weights: x = 1/61 + 1/62 = y, a tie.
    # body weight 2: x = 2/61 + 1/62 = 0.0489159 > y = 2/62 + 1/61 = 0.0486515
    fused = reciprocal_rank_fusion(rankings, weights={"body": 2.0})
    assert [item for item, _ in fused] == ["x", "y"]
    assert fused[0][1] == pytest.approx(2 / 61 + 1 / 62)
    assert fused[1][1] == pytest.approx(2 / 62 + 1 / 61)
    # title weight 0: only body counts, and an item only in title stays with score 0.
    fused = reciprocal_rank_fusion({"body": ["x"], "title": ["z"]}, weights={"title": 0})
    assert [item for item, _ in fused] == ["x", "z"]
    assert [score for _, score in fused] == pytest.approx([1 / 61, 0.0])


def test_ties_break_by_best_rank_then_id() -> None:
    # Same score: y and x each get 1/61 + 1/62, and both have best rank 1 -> by id.
    fused = reciprocal_rank_fusion({"a": ["y", "x"], "b": ["x", "y"]})
    assert [item for item, _ in fused] == ["x", "y"]
    # Same score, different best rank, with k = 1:
    # "z" is rank 1 in s (weight 1): 1/(1+1) = 0.5; "a" is rank 3 in t (weight 2): 2/(1+3) = 0.5
    # z's best rank (1) beats a's (3), although "a" sorts first by id.
    fused = reciprocal_rank_fusion(
        {"s": ["z"], "t": ["p", "q", "a"]}, k=1, weights={"s": 1.0, "t": 2.0}
    )
    scores = dict(fused)
    assert scores["z"] == scores["a"] == 0.5
    order = [item for item, _ in fused]
    assert order.index("z") < order.index("a")


def test_repeats_within_a_ranking_count_once() -> None:
    # x appears at 1 and 3: counted once, at rank 1 -> 1/61; y at rank 2 -> 1/62.
    fused = reciprocal_rank_fusion({"a": ["x", "y", "x"]})
    assert [item for item, _ in fused] == ["x", "y"]
    assert [score for _, score in fused] == pytest.approx([1 / 61, 1 / 62])


def test_empty_inputs() -> None:
    assert reciprocal_rank_fusion({}) == []
    assert reciprocal_rank_fusion({"a": [], "b": []}) == []


@pytest.mark.parametrize("k", [0, -1])
def test_k_must_be_positive(k: int) -> None:
    with pytest.raises(ValueError):
        reciprocal_rank_fusion({"a": ["x"]}, k=k)


@pytest.mark.parametrize("weight", [-0.1, math.nan, math.inf])
def test_weights_must_be_finite_and_non_negative(weight: float) -> None:
    with pytest.raises(ValueError):
        reciprocal_rank_fusion({"a": ["x"]}, weights={"a": weight})


# --- properties -------------------------------------------------------------------------------

ids = st.sampled_from([f"d{i}" for i in range(12)])
signal_names = st.sampled_from(["body", "title", "dense", "recency", "s5"])
rankings_st = st.dictionaries(signal_names, st.lists(ids, max_size=15), max_size=5)
ks = st.integers(min_value=1, max_value=200)
positive_weight = st.floats(min_value=0.01, max_value=10.0, allow_nan=False)
any_weight = st.floats(min_value=0.0, max_value=10.0, allow_nan=False)


@st.composite
def rankings_and_weights(
    draw: st.DrawFn, weight: st.SearchStrategy[float] = any_weight
) -> tuple[dict[str, list[str]], dict[str, float]]:
    rankings = draw(rankings_st)
    weights = {name: draw(weight) for name in rankings}
    return rankings, weights


@given(st.data(), ks)
def test_first_everywhere_is_fused_first(data: st.DataObject, k: int) -> None:
    rankings, weights = data.draw(rankings_and_weights(positive_weight))
    if not rankings:
        rankings = {"body": []}
        weights = {"body": 1.0}
    top = data.draw(ids)
    rankings = {name: [top, *items] for name, items in rankings.items()}
    fused = reciprocal_rank_fusion(rankings, k=k, weights=weights)
    assert fused[0][0] == top
    assert all(score < fused[0][1] for _, score in fused[1:])


@given(rankings_and_weights(), ks)
def test_scores_are_bounded(case: tuple[dict[str, list[str]], dict[str, float]], k: int) -> None:
    rankings, weights = case
    bound = sum(weights.values()) / (k + 1)
    for _, score in reciprocal_rank_fusion(rankings, k=k, weights=weights):
        assert 0.0 <= score <= bound * (1 + 1e-12)


@given(rankings_and_weights(), ks, ids, st.lists(ids, max_size=10), any_weight)
def test_a_signal_ranking_d_first_never_lowers_d(
    case: tuple[dict[str, list[str]], dict[str, float]],
    k: int,
    doc: str,
    rest: list[str],
    extra_weight: float,
) -> None:
    rankings, weights = case
    before = dict(reciprocal_rank_fusion(rankings, k=k, weights=weights)).get(doc, 0.0)
    more = {**rankings, "extra": [doc, *rest]}
    after = dict(reciprocal_rank_fusion(more, k=k, weights={**weights, "extra": extra_weight}))
    assert after[doc] >= before


@given(rankings_and_weights(), ks)
def test_output_is_a_permutation_of_the_union(
    case: tuple[dict[str, list[str]], dict[str, float]], k: int
) -> None:
    rankings, weights = case
    fused = reciprocal_rank_fusion(rankings, k=k, weights=weights)
    items = [item for item, _ in fused]
    union = {item for ranking in rankings.values() for item in ranking}
    assert len(items) == len(set(items))
    assert set(items) == union
    scores = [score for _, score in fused]
    assert scores == sorted(scores, reverse=True)


@given(rankings_and_weights(), ks)
def test_deterministic_whatever_the_mapping_order(
    case: tuple[dict[str, list[str]], dict[str, float]], k: int
) -> None:
    rankings, weights = case
    first = reciprocal_rank_fusion(rankings, k=k, weights=weights)
    assert reciprocal_rank_fusion(rankings, k=k, weights=weights) == first
    reversed_rankings = dict(reversed(list(rankings.items())))
    assert reciprocal_rank_fusion(reversed_rankings, k=k, weights=weights) == first


# --- weighted score fusion and the Fusion settings ---------------------------------------------


@st.composite
def aligned_signals(draw: st.DrawFn) -> dict[str, np.ndarray]:
    size = draw(st.integers(min_value=1, max_value=8))
    names = draw(st.sets(st.sampled_from(["body", "title", "dense"]), min_size=1))
    column = st.lists(
        st.floats(min_value=0.0, max_value=1.0, allow_nan=False), min_size=size, max_size=size
    )
    return {name: np.array(draw(column), dtype=np.float32) for name in sorted(names)}


def test_weighted_fusion_by_hand() -> None:
    normalized = {
        "body": np.array([0.5, 0.0, 0.25], dtype=np.float32),
        "dense": np.array([0.25, 0.75, 0.5], dtype=np.float32),
    }
    # item 0: 1 * 0.5 + 2 * 0.25 = 1.0; item 1: 0 + 2 * 0.75 = 1.5; item 2: 0.25 + 1.0 = 1.25
    fused = weighted_score_fusion(normalized, {"body": 1.0, "dense": 2.0})
    assert fused.tolist() == pytest.approx([1.0, 1.5, 1.25], abs=1e-12)
    # A signal without a weight adds nothing.
    assert weighted_score_fusion(normalized, {"body": 1.0}).tolist() == pytest.approx(
        [0.5, 0.0, 0.25]
    )


@given(aligned_signals(), st.dictionaries(st.sampled_from(["body", "title", "dense"]), any_weight))
def test_weighted_fusion_is_linear_and_order_free(
    signals: dict[str, np.ndarray], weights: dict[str, float]
) -> None:
    fused = weighted_score_fusion(signals, weights)
    expected = sum(
        (weights.get(name, 0.0) * values.astype(np.float64) for name, values in signals.items()),
        start=np.zeros(len(next(iter(signals.values())))),
    )
    assert np.allclose(fused, expected, rtol=1e-12, atol=1e-12)
    assert np.array_equal(weighted_score_fusion(dict(reversed(signals.items())), weights), fused)
    # Doubling every weight doubles every score: the ranking does not change.
    doubled = weighted_score_fusion(signals, {k: 2 * w for k, w in weights.items()})
    assert np.allclose(doubled, 2 * fused)


@given(aligned_signals(), st.data())
def test_raising_one_signal_never_lowers_an_item(
    signals: dict[str, np.ndarray], data: st.DataObject
) -> None:
    weights = {name: 1.0 for name in signals}
    name = data.draw(st.sampled_from(sorted(signals)))
    item = data.draw(st.integers(min_value=0, max_value=len(signals[name]) - 1))
    before = weighted_score_fusion(signals, weights)
    raised = {**signals, name: signals[name].copy()}
    raised[name][item] += np.float32(0.5)
    after = weighted_score_fusion(raised, weights)
    assert after[item] > before[item]
    others = [i for i in range(len(before)) if i != item]
    assert np.array_equal(after[others], before[others])


def test_weighted_fusion_rejects_misaligned_or_bad_input() -> None:
    with pytest.raises(ValueError):
        weighted_score_fusion({"a": np.zeros(2, np.float32), "b": np.zeros(3, np.float32)}, {})
    with pytest.raises(ValueError):
        weighted_score_fusion({"a": np.zeros(2, np.float32)}, {"a": -1.0})
    assert weighted_score_fusion({}, {}).size == 0


def test_fusion_settings() -> None:
    default = Fusion()
    assert default.method == "weighted"
    assert {s: default.weight(s) for s in ("body", "title", "dense")} == DEFAULT_WEIGHTS
    assert Fusion("rrf").weight("dense") == 1.0
    assert Fusion("rrf", {"body": 1.0}).weight("dense") == 0.0  # not named: not used
    assert Fusion("rrf", {"body": 1.0, "dense": 1.0}).describe() == "rrf(k=60) body+dense"
    assert default.describe() == "weighted body=1 dense=3 title=0.5"
    for bad in (
        lambda: Fusion("borda"),  # type: ignore[arg-type]
        lambda: Fusion(rrf_k=0),
        lambda: Fusion(weights={"body": math.inf}),
        lambda: Fusion(weights={"body": math.nan}),
    ):
        with pytest.raises(ValueError):
            bad()
