"""What the semantic safety screening adds per ticket, on the offline engine.

    python bench/safety_speed.py [--rounds 3]

Runs the demo inbox and our second product's tickets through the safety screen twice: rules
only, and rules with the semantic detector. Each ticket's text is new to the process in the
first round (the MiniLM memo is cleared between variants), as a fresh ticket is in production.
Reports p50 and p95 of the screen alone, and the difference, per ticket.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from supportagent.agent.safety import SafetyScreen
from supportagent.agent.safety_semantic import default_semantic_safety
from supportagent.domain import Ticket
from supportagent.ingest import read_tickets
from supportagent.retrieval import dense
from supportagent.runtime import demo_path

ROOT = Path(__file__).resolve().parents[1]


def tickets() -> list[Ticket]:
    out = list(read_tickets(demo_path() / "inbox.jsonl").records)
    own = ROOT / "eval" / "brightwrench" / "tickets.jsonl"
    if own.exists():
        out.extend(read_tickets(own).records)
    return out


def timed(screen: SafetyScreen, batch: list[Ticket]) -> tuple[list[float], list[float]]:
    """Wall time and CPU time (all threads of the process) per ticket, in ms.

    CPU time holds steady on a busy machine where wall time does not: on two cores shared
    with other work, wall time measures the queue as much as the code.
    """
    wall, cpu = [], []
    for ticket in batch:
        dense._MEMO._items.clear()  # every ticket is new text, as in production
        start, start_cpu = time.perf_counter(), time.process_time()
        screen(ticket)
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    return wall, cpu


def quantiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    batch = tickets()
    rules, both = SafetyScreen(), SafetyScreen(semantic=default_semantic_safety())
    timed(both, batch[:5])  # load the models once, outside the measurement
    runs: dict[str, list[float]] = {"wall": [], "cpu": [], "wall+": [], "cpu+": []}
    for _ in range(args.rounds):
        wall, cpu = timed(rules, batch)
        runs["wall"] += wall
        runs["cpu"] += cpu
        wall, cpu = timed(both, batch)
        runs["wall+"] += wall
        runs["cpu+"] += cpu
    print(f"{len(batch)} tickets x {args.rounds} rounds; load average {os.getloadavg()[0]:.1f}")
    for clock in ("wall", "cpu"):
        plain, semantic = runs[clock], runs[clock + "+"]
        added = [s - p for s, p in zip(semantic, plain, strict=True)]
        for name, values in (("rules only", plain), ("rules + semantic", semantic)):
            p50, p95 = quantiles(values)
            print(f"{clock:4}  {name:17} p50 {p50:7.2f} ms  p95 {p95:7.2f} ms")
        p50, p95 = quantiles(added)
        print(f"{clock:4}  {'added per ticket':17} p50 {p50:7.2f} ms  p95 {p95:7.2f} ms")


if __name__ == "__main__":
    main()
