"""Personal data found in an inbox and its evidence: every placeholder, to check by eye.

Run: .venv/bin/python bench/redaction.py            (the demo: tickets, resolved tickets, KB)
     .venv/bin/python bench/redaction.py --stub     (also the whole inbox through the llm
                                                     engine against the tests' stub server)
Options: --data DIR (a product folder: kb/, resolved.jsonl, inbox.jsonl or tickets.jsonl).

The first part lists each value the redactor replaces in each ticket (subject and body), each
resolved ticket and each KB article, with its kind. With ``--stub`` the inbox runs through the
pipeline on the llm engine; the report gives the placeholders each ticket's prompts carried
(the ticket's own values and those of the evidence it was shown) and checks that no value
found in the first part appears in any request the stub received.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from llm_calls import open_store, read_product, stub_classifier

from supportagent.agent.knowledge import Knowledge
from supportagent.redact import KINDS, find_personal_data
from supportagent.runtime import build_engine, build_pipeline, demo_path


def report_findings(label: str, items: list[tuple[str, str]]) -> tuple[Counter[str], set[str]]:
    """Print each finding of each (id, text); the count per kind and the values found."""
    kinds: Counter[str] = Counter()
    values: set[str] = set()
    with_data = 0
    for item_id, text in items:
        found = {(f.kind, f.value) for f in find_personal_data(text)}
        with_data += bool(found)
        for kind, value in sorted(found):
            print(f"  {label} {item_id}: {kind} {value!r}")
            kinds[kind] += 1
            values.add(value)
    summary = ", ".join(f"{k} {kinds[k]}" for k in KINDS if kinds[k]) or "none"
    print(f"{label}: {sum(kinds.values())} values in {with_data} of {len(items)} ({summary})\n")
    return kinds, values


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=None, help="a product folder (demo default)")
    parser.add_argument("--stub", action="store_true", help="run the inbox against the stub")
    args = parser.parse_args()
    documents, tickets, labels = read_product(args.data or demo_path())
    _, ticket_values = report_findings(
        "ticket", [(t.id, f"{t.subject}\n{t.body}") for t in tickets]
    )
    by_kind: dict[str, list[tuple[str, str]]] = {str(d.kind): [] for d in documents}
    for d in documents:
        by_kind[str(d.kind)].append((d.id, f"{d.title}\n{d.body}"))
    corpus_values: set[str] = set()
    for kind, items in by_kind.items():
        corpus_values |= report_findings(kind, items)[1]
    if not args.stub:
        return
    on = run_stub(documents, tickets, labels, redact=True)
    off = run_stub(documents, tickets, labels, redact=False)
    total: Counter[str] = Counter()
    for ticket in tickets:
        counts = on["counts"][ticket.id]
        total.update(counts)
        if counts:
            print(f"  prompts of {ticket.id}: {counts}; staged: {on['staged'][ticket.id][0]}")
    leaked = sorted(v for v in ticket_values | corpus_values if any(v in b for b in on["bodies"]))
    sent_off = sorted(v for v in ticket_values if any(v in b for b in off["bodies"]))
    differ = [t.id for t in tickets if on["staged"][t.id] != off["staged"][t.id]]
    summary = ", ".join(f"{k} {total[k]}" for k in KINDS if total[k]) or "none"
    print(
        f"llm engine (stub): {len(on['bodies'])} requests for {len(tickets)} tickets; "
        f"placeholders in their prompts: {sum(total.values())} ({summary}); "
        f"raw values in any request: {len(leaked)} {leaked or ''}\n"
        f"with SUPPORTAGENT_REDACT_PII=0: {len(off['bodies'])} requests; ticket values sent "
        f"raw: {len(sent_off)}; tickets whose staged status or answer differs: "
        f"{len(differ)} {differ or ''}"
    )


def run_stub(
    documents: list[Any], tickets: list[Any], labels: dict[str, Any], *, redact: bool
) -> dict[str, Any]:
    """The inbox through the llm engine against the stub: request bodies, placeholders per
    ticket, and each ticket's staged status and answer (as the reviewer sees it)."""
    from llm_stub import EvidenceModel, StubLLM, stub_settings

    with (
        tempfile.TemporaryDirectory() as tmp,
        StubLLM(EvidenceModel(stub_classifier(labels, tickets))) as stub,
    ):
        settings = stub_settings(stub, Path(tmp) / "home", redact_pii=redact)
        store = open_store(settings, documents, tickets)
        engine = build_engine(settings)
        pipeline = build_pipeline(settings, store, engine, Knowledge.from_store(store))
        counts, staged = {}, {}
        for ticket in tickets:
            outcome = pipeline.run(ticket.id)
            counts[ticket.id] = engine.redacted_counts(ticket.id)  # type: ignore[attr-defined]
            answer = outcome.draft.answer if outcome.draft is not None else None
            staged[ticket.id] = (outcome.status.value, answer)
        store.close()
        bodies = [json.dumps(r.body, ensure_ascii=False) for r in stub.requests]
    return {"bodies": bodies, "counts": counts, "staged": staged}


if __name__ == "__main__":
    main()
