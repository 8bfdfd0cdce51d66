"""Recall@k, MRR and nDCG@k against values worked out by hand."""

from __future__ import annotations

import math

import pytest

from supportagent.retrieval.metrics import (
    evaluate,
    mean,
    ndcg_at_k,
    recall_at_k,
    reciprocal_rank,
)

RANKED = ["a", "b", "c", "d", "e"]
RELEVANT = {"b", "d", "x"}  # "x" is relevant but never retrieved

LOG2_3 = math.log2(3)  # discount at rank 2
LOG2_4 = 2.0  # discount at rank 3
LOG2_5 = math.log2(5)  # discount at rank 4


@pytest.mark.parametrize(
    ("k", "expected"),
    [
        (1, 0.0),  # top 1 = [a]: no relevant doc
        (2, 1 / 3),  # top 2 = [a, b]: b, one of three relevant
        (3, 1 / 3),  # still only b
        (4, 2 / 3),  # b and d
        (5, 2 / 3),  # e adds nothing; x is never found
        (50, 2 / 3),  # k beyond the ranking
    ],
)
def test_recall_at_k(k: int, expected: float) -> None:
    assert recall_at_k(RANKED, RELEVANT, k) == pytest.approx(expected)


def test_reciprocal_rank() -> None:
    # The first relevant document, b, is at rank 2: RR = 1/2.
    assert reciprocal_rank(RANKED, RELEVANT) == pytest.approx(0.5)
    assert reciprocal_rank(["b"], RELEVANT) == 1.0
    # Relevant document at rank 4: RR = 1/4.
    assert reciprocal_rank(["p", "q", "r", "d"], RELEVANT) == pytest.approx(0.25)


def test_ndcg_at_5() -> None:
    # DCG@5: b at rank 2 and d at rank 4 -> 1/log2(3) + 1/log2(5) = 0.63093 + 0.43068 = 1.06161
    # IDCG@5: min(5, |relevant| = 3) = 3 ideal hits -> 1 + 1/log2(3) + 1/log2(4) = 2.13093
    # nDCG@5 = 1.06161 / 2.13093 = 0.49819
    dcg = 1 / LOG2_3 + 1 / LOG2_5
    idcg = 1 + 1 / LOG2_3 + 1 / LOG2_4
    assert ndcg_at_k(RANKED, RELEVANT, 5) == pytest.approx(dcg / idcg)
    assert ndcg_at_k(RANKED, RELEVANT, 5) == pytest.approx(0.49819, abs=1e-5)


def test_ndcg_at_3_and_1() -> None:
    # DCG@3 = 1/log2(3) = 0.63093; IDCG@3 = 2.13093 (three relevant docs) -> 0.29608
    assert ndcg_at_k(RANKED, RELEVANT, 3) == pytest.approx(0.29608, abs=1e-5)
    # DCG@1 = 0 (a is not relevant)
    assert ndcg_at_k(RANKED, RELEVANT, 1) == 0.0


def test_ndcg_ideal_uses_min_of_k_and_relevant() -> None:
    # One relevant doc at rank 1: DCG = 1, IDCG over min(10, 1) = 1 position = 1 -> 1.0
    assert ndcg_at_k(["b", "a"], {"b"}, 10) == 1.0
    # One relevant doc at rank 2: DCG = 1/log2(3), IDCG = 1 -> 0.63093
    assert ndcg_at_k(["a", "b"], {"b"}, 10) == pytest.approx(1 / LOG2_3)


def test_perfect_ranking_scores_one() -> None:
    assert recall_at_k(["b", "d", "x"], RELEVANT, 3) == 1.0
    assert ndcg_at_k(["b", "d", "x", "a"], RELEVANT, 4) == pytest.approx(1.0)
    assert reciprocal_rank(["x"], RELEVANT) == 1.0


def test_no_relevant_document_retrieved() -> None:
    ranked = ["p", "q", "r"]
    assert recall_at_k(ranked, RELEVANT, 3) == 0.0
    assert reciprocal_rank(ranked, RELEVANT) == 0.0
    assert ndcg_at_k(ranked, RELEVANT, 3) == 0.0


def test_relevant_beyond_k() -> None:
    ranked = ["p", "q", "r", "b"]  # b at rank 4
    assert recall_at_k(ranked, {"b"}, 3) == 0.0
    assert ndcg_at_k(ranked, {"b"}, 3) == 0.0
    assert recall_at_k(ranked, {"b"}, 4) == 1.0
    # ndcg@4 = (1/log2(5)) / 1 = 0.43068
    assert ndcg_at_k(ranked, {"b"}, 4) == pytest.approx(1 / LOG2_5)
    assert reciprocal_rank(ranked, {"b"}) == pytest.approx(0.25)


def test_empty_ranking() -> None:
    assert recall_at_k([], RELEVANT, 5) == 0.0
    assert reciprocal_rank([], RELEVANT) == 0.0
    assert ndcg_at_k([], RELEVANT, 5) == 0.0


def test_repeats_count_once_and_are_dropped_before_the_cut() -> None:
    # [b, b, d] is read as [b, d]: recall@2 = 2/2, DCG@2 = 1 + 1/log2(3) = IDCG@2 -> 1.0
    assert recall_at_k(["b", "b", "d"], {"b", "d"}, 2) == 1.0
    assert ndcg_at_k(["b", "b", "d"], {"b", "d"}, 2) == pytest.approx(1.0)
    # A relevant doc repeated cannot push recall above 1 or nDCG above 1.
    assert recall_at_k(["b", "b"], {"b"}, 2) == 1.0
    assert ndcg_at_k(["b", "b"], {"b"}, 2) == 1.0


def test_invalid_arguments() -> None:
    with pytest.raises(ValueError):
        recall_at_k(RANKED, RELEVANT, 0)
    with pytest.raises(ValueError):
        ndcg_at_k(RANKED, RELEVANT, 0)
    with pytest.raises(ValueError):
        recall_at_k(RANKED, set(), 3)
    with pytest.raises(ValueError):
        ndcg_at_k(RANKED, set(), 3)
    # RR needs no denominator: nothing relevant means nothing found.
    assert reciprocal_rank(RANKED, set()) == 0.0


def test_mean() -> None:
    assert mean([1.0, 0.0, 0.5]) == 0.5
    assert mean(x for x in (0.25,)) == 0.25
    with pytest.raises(ValueError):
        mean([])


def test_evaluate_hand_computed() -> None:
    run = {"q1": ["a", "b"], "q2": ["c"], "q9": ["z"]}
    qrels = {"q1": {"b"}, "q2": {"x"}, "q3": {"c"}, "q4": set()}
    # q4 has no relevant doc and is skipped; q3 is missing from the run (empty ranking);
    # q9 is not judged and is ignored.
    # recall@1: q1 0, q2 0, q3 0 -> 0;   recall@3: q1 1, q2 0, q3 0 -> 1/3
    # ndcg@3:   q1 (1/log2(3))/1 = 0.63093, q2 0, q3 0 -> 0.21031
    # mrr:      q1 1/2, q2 0, q3 0 -> 1/6
    result = evaluate(run, qrels, ks=(3, 1))
    assert list(result) == ["recall@1", "recall@3", "ndcg@1", "ndcg@3", "mrr"]
    assert result["recall@1"] == 0.0
    assert result["recall@3"] == pytest.approx(1 / 3)
    assert result["ndcg@1"] == 0.0
    assert result["ndcg@3"] == pytest.approx((1 / LOG2_3) / 3)
    assert result["mrr"] == pytest.approx(1 / 6)


def test_evaluate_default_cutoffs_and_errors() -> None:
    result = evaluate({"q": ["d"]}, {"q": ["d"]})
    assert set(result) == {
        "recall@1",
        "recall@3",
        "recall@5",
        "recall@10",
        "ndcg@1",
        "ndcg@3",
        "ndcg@5",
        "ndcg@10",
        "mrr",
    }
    assert all(value == 1.0 for value in result.values())
    with pytest.raises(ValueError):
        evaluate({}, {"q": set()})
    with pytest.raises(ValueError):
        evaluate({"q": ["d"]}, {"q": {"d"}}, ks=(0,))


def test_passage_rankings_by_hand_at_the_eval_cutoffs() -> None:
    # The eval command ranks passages and scores documents: "a" appears as two passages.
    run = {
        "q1": ["a", "a", "b", "c"],  # documents a, b, c: relevant b at rank 2
        "q2": [f"x{i}" for i in range(10)] + ["r"],  # relevant r at rank 11: beyond @10
    }
    qrels = {"q1": {"b"}, "q2": {"r", "s"}}
    result = evaluate(run, qrels, ks=(1, 3, 10))
    # recall@3: q1 1, q2 0 -> 0.5;  recall@10: q2 still 0 -> 0.5
    assert result["recall@1"] == 0.0
    assert result["recall@3"] == result["recall@10"] == 0.5
    # nDCG@10: q1 (1/log2(3)) / 1 = 0.63093; q2 0 -> 0.31546
    assert result["ndcg@10"] == pytest.approx((1 / LOG2_3) / 2)
    assert result["ndcg@10"] == pytest.approx(0.31546, abs=1e-5)
    # MRR: q1 1/2, q2 1/11 (reciprocal rank has no cut-off) -> (0.5 + 0.0909) / 2 = 0.29545
    assert result["mrr"] == pytest.approx((1 / 2 + 1 / 11) / 2)
