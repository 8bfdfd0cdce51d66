"""The retrieval eval's report as the shared :class:`EvalResult`, so `eval report` can show it.

The headline scores are the ones `eval retrieval` prints: Recall@k at the cut-offs asked for,
MRR and nDCG@10, each variant's named ``<variant>.<score>`` (``hybrid (default).mrr``).
The whole report, every cut-off included, goes into ``details``.
"""

from __future__ import annotations

from supportagent.evals.results import EvalResult, Metric
from supportagent.retrieval.eval import EvalReport


def retrieval_result(report: EvalReport, dataset: str | None = None) -> EvalResult:
    """All higher-is-better; named by ``dataset`` (the path given on the command line, like
    the other evals) or else by the report's own name."""
    scores = [*(f"recall@{k}" for k in report.ks), "mrr", "ndcg@10"]
    metrics = {
        f"{variant}.{score}": Metric(float(values[score]))
        for variant, values in report.metrics.items()
        for score in scores
        if score in values
    }
    return EvalResult("retrieval", dataset or report.dataset, metrics, report.to_json())
