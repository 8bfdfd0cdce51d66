"""Model calls, valid replies, tokens and time per stage and per ticket, through the llm engine.

Run: .venv/bin/python bench/llm_calls.py              (the demo inbox, against the local stub
                                                       server of the tests)
     .venv/bin/python bench/llm_calls.py --real       (against the endpoint your settings name;
                                                       this spends real calls and tokens)
Options: --data DIR (a product folder: kb/, resolved.jsonl, inbox.jsonl or tickets.jsonl, and
labels.jsonl unless tickets.jsonl carries expected_bucket), --split tune|test, --tickets
T-1,T-2, --limit N, --offline (the offline engine on the same tickets, for comparison),
--out FILE.json (every ticket's row).

Against the stub, the answers come from tests/llm_stub.py's evidence model, which quotes the
passages it is sent and knows the labels, and tokens are counted as characters / 4: the call
counts are the engine's own, the token counts an estimate of what an endpoint would bill for
the same prompts. A second pass over the same tickets shows the cache (stub only).

"Valid on the first try": a call whose first reply validated, out of the calls that got a
reply (a repair is the second try of the same call).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from supportagent.agent.knowledge import Knowledge
from supportagent.config import Settings, load_settings
from supportagent.engines.llm import REASON_CODES
from supportagent.ingest import read_kb, read_resolved, read_tickets
from supportagent.runtime import build_engine, build_pipeline, demo_path, describe_engine
from supportagent.runtime import open_store as open_store_for
from supportagent.store.llm_records import model_call_records, model_call_totals
from supportagent.store.store import Store


def read_product(root: Path) -> tuple[list[Any], list[Any], dict[str, dict[str, Any]]]:
    """Documents, tickets and each ticket's label row (expected bucket, docs, facts, split)."""
    kb, resolved = read_kb(root / "kb"), read_resolved(root / "resolved.jsonl")
    inbox = root / "inbox.jsonl" if (root / "inbox.jsonl").exists() else root / "tickets.jsonl"
    tickets = read_tickets(inbox).records
    label_file = root / "labels.jsonl" if (root / "labels.jsonl").exists() else inbox
    labels = {}
    for line in label_file.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            labels[str(row["id"])] = row
    return [*kb.records, *resolved.records], tickets, labels


def stub_classifier(labels: dict[str, dict[str, Any]], tickets: list[Any]) -> Callable[..., Any]:
    """Bucket and reason code for each ticket, by subject, from its label (the stub's oracle)."""
    codes = {"answerable": "question", "not_a_question": "feedback", "needs_human": "unclear"}
    by_subject = {t.subject.strip(): labels.get(t.id, {}) for t in tickets}

    def classify(subject: str, _body: str) -> tuple[str, str]:
        row = by_subject.get(subject.strip(), {})
        bucket = row.get("expected_bucket", "answerable")
        code = row.get("expected_reason") or codes[bucket]
        return bucket, code if code in REASON_CODES else codes[bucket]

    return classify


@contextmanager
def stub_endpoint(home: Path, classifier: Callable[..., Any]) -> Iterator[Settings]:
    from llm_stub import EvidenceModel, StubLLM, stub_settings

    with StubLLM(EvidenceModel(classifier)) as stub:
        yield stub_settings(stub, home)


def first_tries(records: list[dict[str, Any]]) -> list[tuple[str, bool]]:
    """(stage, valid) of each call's first reply; a repair follows an invalid reply."""
    tries, after_invalid = [], False
    for r in records:
        if r["cache_hit"] or r["status"] not in {"ok", "invalid"}:
            after_invalid = False
            continue
        if not after_invalid:
            tries.append((r["stage"], r["status"] == "ok"))
        after_invalid = r["status"] == "invalid" and not after_invalid
    return tries


def facts_found(answer: str | None, groups: list[list[str]] | None) -> bool | None:
    if not groups:
        return None
    text = (answer or "").casefold()
    return all(any(alt.casefold() in text for alt in group) for group in groups)


def run_tickets(
    store: Store,
    pipeline: Any,
    ids: list[str],
    labels: dict[str, dict[str, Any]],
    partial: Path | None = None,
) -> list[dict[str, Any]]:
    """Run each ticket; its row goes to ``partial`` (JSONL) as soon as it is staged, so that a
    run stopped early keeps every finished ticket (``--report`` reads the file back)."""
    rows = []
    for ticket_id in ids:
        started = time.perf_counter()
        pipeline.run(ticket_id)
        [row] = ticket_rows(store, [ticket_id], labels, {ticket_id: time.perf_counter() - started})
        rows.append(row)
        print(
            f"  {ticket_id}: {row['status']} {row['reason']} ({row['seconds']:.1f} s)", flush=True
        )
        if partial is not None:
            with partial.open("a", encoding="utf-8") as out:
                out.write(json.dumps(row, default=str) + "\n")
    return rows


def classify_tickets(
    pipeline: Any,
    tickets: list[Any],
    labels: dict[str, dict[str, Any]],
    partial: Path | None = None,
) -> list[dict[str, Any]]:
    """The safety gate and the classify stage only, per ticket: the cheap call, over every
    ticket, for the valid-reply rate where a whole run would take hours on a small model."""
    rows = []
    for ticket in tickets:
        started = time.perf_counter()
        safety = pipeline.screen(ticket)
        bucket = reason = None
        if safety.auto_escalate:
            bucket, reason = "needs_human", safety.reason_code
        else:
            try:
                decided = pipeline.engine.classify(ticket, safety)
                bucket, reason = decided.bucket.value, decided.reason_code
            except Exception as error:  # a call that failed is a row too: it is what we measure
                reason = getattr(error, "reason_code", type(error).__name__)
        calls = [c.to_json() for c in pipeline.engine.take_calls(ticket.id)]
        sent = [c for c in calls if not c["cache_hit"] and c["status"] in {"ok", "invalid"}]
        row = {
            "id": ticket.id,
            "expected": labels.get(ticket.id, {}).get("expected_bucket"),
            "bucket": bucket,
            "status": "classified",
            "reason": reason,
            "calls": len(sent),
            "requests": sum(int(c.get("requests") or 0) for c in calls),
            "drafts": 0,
            "prompt_tokens": sum(c["prompt_tokens"] for c in sent),
            "completion_tokens": sum(c["completion_tokens"] for c in sent),
            "model_seconds": round(sum(c["latency_ms"] for c in sent) / 1000, 2),
            "seconds": round(time.perf_counter() - started, 2),
            "cites_expected_doc": None,
            "facts": None,
            "answer": None,
            "tries": first_tries(calls),
            "stages": [(c["stage"], c["status"]) for c in calls],
            "calls_detail": [{k: c.get(k) for k in CALL_FIELDS} for c in calls],
            "profile": sorted({str(c.get("profile")) for c in calls}),
        }
        rows.append(row)
        print(f"  {ticket.id}: {bucket} {reason} ({row['seconds']:.1f} s)", flush=True)
        if partial is not None:
            with partial.open("a", encoding="utf-8") as out:
                out.write(json.dumps(row, default=str) + "\n")
    return rows


def ticket_rows(
    store: Store, ids: list[str], labels: dict[str, dict[str, Any]], seconds: dict[str, float]
) -> list[dict[str, Any]]:
    rows = []
    for ticket_id in ids:
        record = store.latest_outcome(ticket_id)
        label = labels.get(ticket_id, {})
        calls = model_call_records(store, ticket_id)
        sent = [r for r in calls if not r["cache_hit"] and r["status"] not in {"refused"}]
        draft = record.draft if record else None
        cited = {c.split("#", 1)[0] for c in (draft or {}).get("citations", [])}
        expected_docs = set(label.get("expected_docs") or [])
        model_steps = [e["detail"] for e in store.trace(ticket_id) if e["stage"] == "model"]
        rows.append(
            {
                "id": ticket_id,
                "expected": label.get("expected_bucket"),
                "bucket": record.bucket if record else None,
                "status": record.status.value if record else None,
                "reason": record.reason_code if record else None,
                "calls": len(sent),
                "requests": sum(int(r.get("retries") or 0) + 1 for r in sent),
                "drafts": sum(1 for r in sent if r["stage"] == "draft" and r["status"] == "ok"),
                "prompt_tokens": sum(r["prompt_tokens"] for r in sent),
                "completion_tokens": sum(r["completion_tokens"] for r in sent),
                "model_seconds": round(sum(r["latency_ms"] for r in sent) / 1000, 2),
                "seconds": round(seconds.get(ticket_id, 0.0), 2),
                "cites_expected_doc": bool(cited & expected_docs) if expected_docs else None,
                "facts": facts_found(
                    draft.get("answer") if draft else None, label.get("expected_facts")
                ),
                "answer": draft.get("answer") if draft else None,
                "tries": first_tries(calls),
                "stages": [(r["stage"], r["status"]) for r in calls],
                "calls_detail": [{k: r.get(k) for k in CALL_FIELDS} for r in calls],
                "profile": sorted({str(d.get("profile")) for d in model_steps}),
            }
        )
    return rows


CALL_FIELDS = (
    "stage",
    "status",
    "cache_hit",
    "prompt_tokens",
    "completion_tokens",
    "latency_ms",
    "retries",
    "error",
    "reply",
)


def summarise(label: str, values: list[float]) -> str:
    if not values:
        return f"{label}: none"
    return (
        f"{label}: n={len(values)}, mean {statistics.mean(values):,.1f}, "
        f"median {statistics.median(values):,g}, min {min(values):,g}, max {max(values):,g}"
    )


def report(rows: list[dict[str, Any]]) -> None:
    answerable = [r for r in rows if r["expected"] == "answerable"]
    print(
        f"tickets: {len(rows)}; outcomes: {dict(Counter((r['status'], r['reason']) for r in rows))}"
    )
    buckets = [r for r in rows if r["expected"]]
    right = sum(1 for r in buckets if r["bucket"] == r["expected"])
    print(f"bucket accuracy: {right}/{len(buckets)}")
    tries = [t for r in rows for t in r["tries"]]
    valid = sum(ok for _, ok in tries)
    print(
        f"replies valid on the first try: {valid}/{len(tries)}"
        + (f" = {valid / len(tries):.1%}" if tries else "")
    )
    per_stage: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        for r in row["calls_detail"]:
            per_stage[r["stage"]].append(r)
    stage_tries: dict[str, list[bool]] = defaultdict(list)
    for stage, ok in tries:
        stage_tries[stage].append(ok)
    print("stage        calls  valid 1st  prompt/call  completion/call  seconds/call  seconds")
    for stage, records in sorted(per_stage.items()):
        sent = [r for r in records if not r["cache_hit"] and r["status"] in {"ok", "invalid"}]
        if not sent:
            continue
        ok = stage_tries[stage]
        seconds = [r["latency_ms"] / 1000 for r in sent]
        print(
            f"{stage:<12} {len(sent):>5}  {sum(ok):>4}/{len(ok):<4}  "
            f"{statistics.mean(r['prompt_tokens'] for r in sent):>11,.0f}  "
            f"{statistics.mean(r['completion_tokens'] for r in sent):>15,.0f}  "
            f"{statistics.mean(seconds):>12.1f}  {sum(seconds):>7.0f}"
        )
    first_pass = [r for r in answerable if r["status"] == "pending_review" and r["drafts"] == 1]
    print(summarise("calls per answerable ticket", [r["calls"] for r in answerable]))
    print(
        summarise("prompt tokens per answerable ticket", [r["prompt_tokens"] for r in answerable])
    )
    print(
        summarise(
            "prompt tokens per answerable ticket whose first draft passed",
            [r["prompt_tokens"] for r in first_pass],
        )
    )
    print(
        summarise(
            "completion tokens per answerable ticket", [r["completion_tokens"] for r in answerable]
        )
    )
    print(summarise("seconds per answerable ticket", [r["seconds"] for r in answerable]))
    judged = [r for r in answerable if r["facts"] is not None]
    if judged:
        print(
            f"answerable tickets staged for review with every expected fact: "
            f"{sum(1 for r in judged if r['status'] == 'pending_review' and r['facts'])}"
            f"/{len(judged)}"
        )
    cited = [r for r in answerable if r["cites_expected_doc"] is not None]
    print(
        f"answerable tickets staged for review citing an expected document: "
        f"{sum(1 for r in cited if r['status'] == 'pending_review' and r['cites_expected_doc'])}"
        f"/{len(cited)}"
    )
    sent = [c for r in rows for c in r["calls_detail"] if not c["cache_hit"]]
    sent = [c for c in sent if c["status"] in {"ok", "invalid"}]
    print(
        f"all: {len(sent)} calls, {sum(c['prompt_tokens'] for c in sent):,} prompt + "
        f"{sum(c['completion_tokens'] for c in sent):,} completion tokens, "
        f"{sum(r['model_seconds'] for r in rows):,.0f} s in the model, "
        f"{sum(r['seconds'] for r in rows):,.0f} s in all"
    )


def open_store(settings: Settings, documents: list[Any], tickets: list[Any]) -> Store:
    store = open_store_for(settings)
    store.upsert_documents(documents)
    store.add_tickets(tickets)
    return store


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--real", action="store_true", help="use the configured endpoint")
    parser.add_argument("--data", type=Path, default=None, help="a product folder (demo default)")
    parser.add_argument("--split", default=None, help="only tickets of this split")
    parser.add_argument("--tickets", default=None, help="comma-separated ticket ids")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--offline", action="store_true", help="compare the offline engine")
    parser.add_argument("--out", type=Path, default=None, help="write every ticket's row here")
    parser.add_argument("--report", type=Path, default=None, help="report a rows JSONL file")
    parser.add_argument(
        "--classify-only", action="store_true", help="only the safety gate and the classify call"
    )
    args = parser.parse_args()
    if args.report:
        rows = [json.loads(line) for line in args.report.read_text().splitlines() if line]
        report(rows)
        return
    documents, tickets, labels = read_product(args.data or demo_path())
    if args.split:
        tickets = [t for t in tickets if labels.get(t.id, {}).get("split") == args.split]
    if args.tickets:
        wanted = set(args.tickets.split(","))
        tickets = [t for t in tickets if t.id in wanted]
    tickets = tickets[: args.limit]
    ids = [t.id for t in tickets]
    partial = args.out.with_suffix(".jsonl") if args.out else None
    if partial is not None:
        partial.write_text("", encoding="utf-8")
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if args.offline:  # first: it takes seconds, and the llm run may be stopped early
            print("offline engine:")
            settings = load_settings(home=Path(tmp) / "offline", engine="offline")
            store = open_store(settings, documents, tickets)
            pipeline = build_pipeline(settings, store, build_engine(settings))
            out["offline"] = run_tickets(store, pipeline, ids, labels)
            report(out["offline"])
            store.close()
            if args.out:
                args.out.write_text(json.dumps(out, indent=1, default=str), encoding="utf-8")
        home = Path(tmp) / "home"
        endpoint: Any = (
            nullcontext(load_settings(home=home, engine="llm"))
            if args.real
            else stub_endpoint(home, stub_classifier(labels, tickets))
        )
        with endpoint as settings:
            store = open_store(settings, documents, tickets)
            knowledge = Knowledge.from_store(store)
            engine = build_engine(settings)
            print(f"\nengine: {describe_engine(engine)}; {len(ids)} tickets")
            pipeline = build_pipeline(settings, store, engine, knowledge)
            started = time.perf_counter()
            if args.classify_only:
                out["llm"] = classify_tickets(pipeline, tickets, labels, partial)
            else:
                out["llm"] = run_tickets(store, pipeline, ids, labels, partial)
            wall = time.perf_counter() - started
            report(out["llm"])
            print(f"wall time: {wall:,.0f} s; {engine.budget.used().describe()}")
            if not args.real:
                before = model_call_totals(store)
                for ticket_id in ids:
                    if labels.get(ticket_id, {}).get("expected_bucket") == "answerable":
                        pipeline.run(ticket_id)
                after = model_call_totals(store)
                print(
                    f"second pass over the answerable tickets: "
                    f"{after['calls'] - before['calls']} calls, "
                    f"{after['cache_hits'] - before['cache_hits']} cache hits"
                )
            store.close()
    if args.out:
        args.out.write_text(json.dumps(out, indent=1, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
