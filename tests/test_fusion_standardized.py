"""Standardized fusion of bench/fusion_standardized.py, on rankings computed by hand."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from fusion_loo import Scored
from fusion_standardized import spread, standardized_mrr


def _scored(arrays: dict[str, list[float]], relevant: list[int]) -> Scored:
    """Two queries over the same three one-passage documents A, B, C; the first query's
    relevant document is ``relevant[0]``, the second's ``relevant[1]``."""
    s = Scored.__new__(Scored)
    s.starts = np.array([0, 1, 2])
    s.docs = ["A", "B", "C"]
    s.queries = ["q1", "q2"]
    s.relevant = [np.arange(3) == r for r in relevant]
    s.arrays = [{k: np.array(v) for k, v in arrays.items()} for _ in relevant]
    return s


def test_a_sharp_weak_signal_outweighs_a_flat_strong_one() -> None:
    # Body is small but singles out A; dense prefers B by a little. Unstandardized
    # (0.5 * body + dense) ranks B first: 0.56 against 0.525. Standardized, by hand: body's
    # std is 0.05 * sqrt(2) / 3 = 0.02357, dense's 0.11116, so A scores
    # 0.5 * 0.05 / 0.02357 + 0.50 / 0.11116 = 5.559 and B 0.56 / 0.11116 = 5.038: A first.
    arrays = {"body": [0.05, 0.0, 0.0], "title": [0.0, 0.0, 0.0], "dense": [0.50, 0.56, 0.30]}
    both = _scored(arrays, relevant=[0, 1])  # A is first (1), B second (1/2)
    assert standardized_mrr(both, ("all", 0.5, 0.0)) == pytest.approx(0.75)
    assert both.mrr({"body": 0.5, "dense": 1.0}) == pytest.approx(0.75)  # B 1, A 1/2
    only_a = _scored(arrays, relevant=[0, 0])
    assert standardized_mrr(only_a, ("all", 0.5, 0.0)) == pytest.approx(1.0)
    assert only_a.mrr({"body": 0.5, "dense": 1.0}) == pytest.approx(0.5)
    # A title signal that is the same for every passage has no spread and adds nothing.
    assert standardized_mrr(only_a, ("all", 0.5, 0.5)) == pytest.approx(1.0)
    # With a small enough body weight dense decides again: 0.1 * 2.1213 + 4.498 < 5.038.
    assert standardized_mrr(only_a, ("all", 0.1, 0.0)) == pytest.approx(0.5)


def test_spread_over_the_hundred_best_passages() -> None:
    scores = np.arange(150, dtype=np.float64)
    assert spread(scores, "all") == pytest.approx(np.std(np.arange(150)))
    assert spread(scores, "top100") == pytest.approx(np.std(np.arange(50, 150)))
    assert spread(scores[:80], "top100") == pytest.approx(np.std(np.arange(80)))
