"""Throughput of the offline engine over the demo inbox (tickets per second, one process).

Run: .venv/bin/python bench/offline_inbox.py [--rounds N]
Each round loads the demo into a fresh SQLite store and handles the whole inbox; index build
time is reported apart from ticket time.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from supportagent.agent.knowledge import Knowledge
from supportagent.config import load_settings
from supportagent.engines.offline import OfflineEngine
from supportagent.runtime import build_pipeline, load_demo, open_store


def one_round() -> tuple[float, float, int, list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(home=Path(tmp))
        store = open_store(settings)
        load_demo(store)
        t0 = time.perf_counter()
        knowledge = Knowledge.from_store(store)
        build = time.perf_counter() - t0
        pipeline = build_pipeline(settings, store, OfflineEngine(), knowledge)
        per_ticket = []
        t1 = time.perf_counter()
        for ticket_id in store.unhandled_ticket_ids():
            s = time.perf_counter()
            pipeline.run(ticket_id)
            per_ticket.append(time.perf_counter() - s)
        total = time.perf_counter() - t1
        store.close()
    return build, total, len(per_ticket), per_ticket


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for r in range(args.rounds):
        build, total, n, per = one_round()
        per_ms = sorted(1000 * p for p in per)
        p95 = per_ms[int(0.95 * (len(per_ms) - 1))]
        print(
            f"round {r + 1}: index build {build * 1000:.0f} ms; {n} tickets in {total:.2f} s "
            f"= {n / total:.1f} tickets/s; per ticket p50 {statistics.median(per_ms):.1f} ms, "
            f"p95 {p95:.1f} ms"
        )


if __name__ == "__main__":
    main()
