"""The retrieval eval's report as the shared :class:`EvalResult`, so `eval report` can show it.

Every variant's every score becomes one metric named ``<variant>.<score>`` (``hybrid
(default).mrr``); the whole report goes into ``details``.
"""

from __future__ import annotations

from supportagent.evals.results import EvalResult, Metric
from supportagent.retrieval.eval import EvalReport


def retrieval_result(report: EvalReport, dataset: str | None = None) -> EvalResult:
    """Recall@k, MRR and nDCG of each variant (all higher-is-better), named by ``dataset``
    (the path given on the command line, like the other evals) or the report's own name."""
    metrics = {
        f"{variant}.{score}": Metric(float(value))
        for variant, values in report.metrics.items()
        for score, value in values.items()
    }
    return EvalResult("retrieval", dataset or report.dataset, metrics, report.to_json())
