"""The retrieval eval's report as the shared :class:`EvalResult`, so `eval report` can show it.

The headline scores are the ones `eval retrieval` prints: Recall@k at the cut-offs asked for,
MRR and nDCG@10, each variant's named ``<variant>.<score>`` (``hybrid (default).mrr``), the
default variant first. The whole report, every cut-off included, goes into ``details``.
"""

from __future__ import annotations

from supportagent.evals.results import EvalResult, Metric
from supportagent.retrieval.eval import DEFAULT_VARIANT, EvalReport


def retrieval_result(report: EvalReport, dataset: str | None = None) -> EvalResult:
    """All higher-is-better; named by ``dataset`` (the path given on the command line, like
    the other evals) or else by the report's own name."""
    scores = [*(f"recall@{k}" for k in report.ks), "mrr", "ndcg@10"]
    variants = sorted(report.metrics, key=lambda name: name != DEFAULT_VARIANT)
    metrics = {
        f"{variant}.{score}": Metric(float(report.metrics[variant][score]))
        for variant in variants
        for score in scores
        if score in report.metrics[variant]
    }
    return EvalResult("retrieval", dataset or report.dataset, metrics, report.to_json())
