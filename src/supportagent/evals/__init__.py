"""Evaluations: one module per eval (triage, retrieval, checker, run, injection).

Every eval returns an :class:`~supportagent.evals.results.EvalResult`; `eval report` and
`eval compare` read only that shape, so a new eval needs no change to either.
"""
