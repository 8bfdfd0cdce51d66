"""Model calls and tokens per answerable ticket: the demo inbox through the llm engine.

Run: .venv/bin/python bench/llm_calls.py            (against the local stub server of the tests)
     .venv/bin/python bench/llm_calls.py --real     (against the endpoint your settings name;
                                                     this spends real calls and tokens)

Against the stub, the answers come from tests/llm_stub.py's evidence model, which quotes the
passages it is sent and knows the demo labels, and tokens are counted as characters / 4. The
call counts are the engine's own; the token counts are an estimate of what a real endpoint
would bill for the same prompts. A second pass over the same tickets shows the cache.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from supportagent.agent.knowledge import Knowledge
from supportagent.config import Settings, load_settings
from supportagent.domain import Status
from supportagent.labels import read_labels
from supportagent.runtime import (
    build_engine,
    build_pipeline,
    demo_path,
    describe_engine,
    load_demo,
    open_store,
)
from supportagent.store.llm_records import model_call_records, model_call_totals


@contextmanager
def stub_endpoint(home: Path) -> Iterator[Settings]:
    from llm_stub import EvidenceModel, StubLLM, demo_classifier, stub_settings

    with StubLLM(EvidenceModel(demo_classifier())) as stub:
        yield stub_settings(stub, home)


def summarise(label: str, values: list[int]) -> str:
    if not values:
        return f"{label}: none"
    return (
        f"{label}: n={len(values)}, mean {statistics.mean(values):.2f}, "
        f"median {statistics.median(values):g}, min {min(values)}, max {max(values)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--real", action="store_true", help="use the configured endpoint")
    args = parser.parse_args()
    answerable = {
        t
        for t, label in read_labels(demo_path() / "labels.jsonl").items()
        if label.expected_bucket.value == "answerable"
    }
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        endpoint: Any = (
            nullcontext(load_settings(home=home, engine="llm"))
            if args.real
            else stub_endpoint(home)
        )
        with endpoint as settings:
            store = open_store(settings)
            load_demo(store)
            knowledge = Knowledge.from_store(store)
            engine = build_engine(settings)
            print(f"engine: {describe_engine(engine)}")
            pipeline = build_pipeline(settings, store, engine, knowledge)
            for ticket_id in store.unhandled_ticket_ids():
                pipeline.run(ticket_id)
            first = model_call_totals(store)
            staged = {r.ticket.id: r for r in store.staged()}
            outcomes = Counter(
                (staged[t].status.value, staged[t].reason_code) for t in sorted(answerable)
            )
            calls: dict[str, list[int]] = {"all": [], "first_pass": [], "revised": []}
            prompt_tokens: list[int] = []
            completion_tokens: list[int] = []
            for ticket_id in sorted(answerable):
                records = model_call_records(store, ticket_id)
                sent = [r for r in records if not r["cache_hit"] and r["status"] != "refused"]
                calls["all"].append(len(sent))
                prompt_tokens.append(sum(r["prompt_tokens"] for r in sent))
                completion_tokens.append(sum(r["completion_tokens"] for r in sent))
                drafts = sum(1 for r in sent if r["stage"] == "draft")
                if staged[ticket_id].status is Status.PENDING_REVIEW:
                    calls["first_pass" if drafts == 1 else "revised"].append(len(sent))
            # Second pass: the same tickets again, on the same evidence.
            for ticket_id in sorted(answerable):
                pipeline.run(ticket_id)
            second = model_call_totals(store)
            store.close()
    print(f"answerable demo tickets: {len(answerable)}; outcomes: {dict(outcomes)}")
    print(summarise("calls per answerable ticket", calls["all"]))
    print(summarise("calls per ticket whose first draft passed", calls["first_pass"]))
    print(summarise("calls per ticket that needed a revision", calls["revised"]))
    print(summarise("prompt tokens per answerable ticket", prompt_tokens))
    print(summarise("completion tokens per answerable ticket", completion_tokens))
    print(
        f"whole inbox: {first['calls']} calls, {first['prompt_tokens']} prompt + "
        f"{first['completion_tokens']} completion tokens"
    )
    print(
        f"second pass over the answerable tickets: {second['calls'] - first['calls']} calls, "
        f"{second['cache_hits'] - first['cache_hits']} cache hits"
    )


if __name__ == "__main__":
    main()
