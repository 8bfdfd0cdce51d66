"""What the semantic safety screening adds per ticket, on the offline engine.

    python bench/safety_speed.py [--rounds 3] [--threads 1]

Two measurements, in one run, on the demo inbox and our second product's tickets:

- **the screen alone**: the rules, and the rules with the semantic detector;
- **the offline engine's decision** (``evals.triage.decide``: the screen, then the offline
  classifier when the screen lets the ticket through), with the rules-only screen and with the
  full one. The classifier's triage model and the search that follows embed the ticket's text
  and its sentences with the same MiniLM; vectors the screen computed are not computed again
  (the process memo), so the difference is what the semantic screening adds to the engine.

Every variant meets each ticket as new text (the MiniLM memo is cleared before each), and the
variants take turns ticket by ticket (the order alternates), so that a change in the machine's
load touches all of them alike. Wall time and CPU time are reported: with ``--threads 1``
ONNX runs in the calling thread (and multilingual-e5 on one OpenMP thread), so CPU time
(``time.process_time``) counts the work of this process only, however busy the machine is.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from supportagent.domain import SafetyResult, Ticket
from supportagent.ingest import read_tickets
from supportagent.retrieval import dense
from supportagent.runtime import demo_path

ROOT = Path(__file__).resolve().parents[1]
SCREEN_RULES = "screen: rules"
VARIANTS = (
    "screen: rules + semantic",
    "engine: rules-only screen",
    "engine: full screen",
)
#: The MiniLM batch planners compared: before this change, and now.
PLANNERS = ("greedy", "planned")


def greedy_batches(lengths: Sequence[int], *, max_size: int = dense.BATCH_SIZE) -> list[range]:
    """The batching before ``dense.plan_batches``: add the next longer text while the run's
    padded tokens stay within TOKENS_PER_BATCH (kept here to compare the two in one run)."""
    runs, start = [], 0
    while start < len(lengths):
        width, size = lengths[start], 1
        while size < min(len(lengths) - start, max_size):
            width = max(width, lengths[start + size])
            if (size + 1) * width > dense.TOKENS_PER_BATCH:
                break
            size += 1
        runs.append(range(start, start + size))
        start += size
    return runs


def tickets() -> list[Ticket]:
    out = list(read_tickets(demo_path() / "inbox.jsonl").records)
    own = ROOT / "eval" / "brightwrench" / "tickets.jsonl"
    if own.exists():
        out.extend(read_tickets(own).records)
    return out


class TokenCount:
    """Counts the tokens MiniLM reads (padding included): work that no load can change."""

    def __init__(self, runtime: dense._MiniLMRuntime) -> None:
        self.tokens = 0
        self._run = runtime.session.run
        runtime.session.run = self

    def __call__(self, outputs: Any, feeds: dict[str, Any]) -> Any:
        self.tokens += int(feeds["input_ids"].size)
        return self._run(outputs, feeds)


def timed(run: Callable[[], object], count: TokenCount) -> tuple[float, float, int]:
    """(wall ms, CPU ms, MiniLM tokens) of one call, the ticket's text new to the process."""
    dense._MEMO._items.clear()
    tokens = count.tokens
    start, start_cpu = time.perf_counter(), time.process_time()
    run()
    wall, cpu = (time.perf_counter() - start) * 1000, (time.process_time() - start_cpu) * 1000
    return wall, cpu, count.tokens - tokens


def quantiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="ONNX intra-op threads (0: ORT)")
    args = parser.parse_args()
    if args.threads:
        # Read once, when the engine loads: set before anything loads it.
        os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    # The process's one MiniLM session (every OnnxMiniLM of the process shares it).
    count = TokenCount(dense.OnnxMiniLM(threads=args.threads or None)._runtime())

    from supportagent.agent.safety import SafetyScreen
    from supportagent.agent.safety_semantic import default_semantic_safety
    from supportagent.engines.classifier import Classifier
    from supportagent.evals.triage import decide

    batch = tickets()
    rules, full = SafetyScreen(), SafetyScreen(semantic=default_semantic_safety())
    classifier = Classifier()
    runs: dict[str, Callable[[Ticket], object]] = {
        VARIANTS[0]: full,
        VARIANTS[1]: lambda t: decide(t, rules, classifier.classify),
        VARIANTS[2]: lambda t: decide(t, full, classifier.classify),
    }
    planners = {"greedy": greedy_batches, "planned": dense.plan_batches}
    names = [SCREEN_RULES] + [f"{v} [{p}]" for p in PLANNERS for v in VARIANTS]

    def call(name: str, ticket: Ticket) -> object:
        if name == SCREEN_RULES:
            return rules(ticket)
        variant, planner = name[:-1].split(" [")
        dense.plan_batches = planners[planner]  # type: ignore[assignment]
        try:
            return runs[variant](ticket)
        finally:
            dense.plan_batches = planners["planned"]  # type: ignore[assignment]

    paths = {t.id: path_of(t, full, classifier) for t in batch}
    for ticket in batch[:5]:  # load models and exemplar vectors outside the measurement
        for name in names:
            call(name, ticket)
    wall: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    tokens: dict[str, list[float]] = {name: [] for name in names}
    path: list[str] = []
    for turn in range(args.rounds * len(batch)):
        ticket = batch[turn % len(batch)]
        path.append(paths[ticket.id])
        for name in names if turn % 2 == 0 else names[::-1]:
            w, c, n = timed(lambda name=name, ticket=ticket: call(name, ticket), count)
            wall[name].append(w)
            cpu[name].append(c)
            tokens[name].append(n)
    print(
        f"{len(batch)} tickets x {args.rounds} rounds; ONNX threads {args.threads or 'default'}; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print("paths:", dict(Counter(paths.values())))
    for clock, values, unit in (("wall", wall, "ms"), ("cpu", cpu, "ms"), ("tok", tokens, "")):
        for name in names:
            p50, p95 = quantiles(values[name])
            print(f"{clock:4}  {name:37} p50 {p50:7.2f} {unit:2}  p95 {p95:7.2f} {unit}")
        for planner in PLANNERS:
            for label, plain, semantic in (
                ("added to the screen", SCREEN_RULES, f"{VARIANTS[0]} [{planner}]"),
                ("added to the engine", f"{VARIANTS[1]} [{planner}]", f"{VARIANTS[2]} [{planner}]"),
            ):
                added = [s - p for s, p in zip(values[semantic], values[plain], strict=True)]
                p50, p95 = quantiles(added)
                print(
                    f"{clock:4}  {label + ' [' + planner + ']':37} "
                    f"p50 {p50:7.2f} {unit:2}  p95 {p95:7.2f} {unit}"
                )
                if label.endswith("engine") and planner == "planned":
                    for kind in sorted(set(path)):
                        part = [d for d, k in zip(added, path, strict=True) if k == kind]
                        p50, _ = quantiles(part)
                        print(f"{clock:4}    {kind:35} p50 {p50:7.2f} {unit:2}  ({len(part)})")


def path_of(ticket: Ticket, screen: Callable[[Ticket], SafetyResult], classifier: Any) -> str:
    """Which way the engine takes a ticket: what decides whether the screen's work is shared."""
    from supportagent.agent.safety_semantic import default_semantic_safety
    from supportagent.engines.classifier import sure_by_rules

    if default_semantic_safety().model_for(ticket) != "minilm":
        return "not English (multilingual-e5)"
    safety = screen(ticket)
    if safety.auto_escalate:
        return f"escalated by the {safety.detector or 'rules'} screen"
    if sure_by_rules(ticket, safety) is not None:
        return "classifier rules decide"
    return "triage model decides"


if __name__ == "__main__":
    main()
