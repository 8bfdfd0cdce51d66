"""The evidence gate on our products: their answerable tickets against questions they do not cover.

    python bench/evidence_products.py [--products tidewell,pickwren,...] [--json OUT]

In scope: each product's answerable tickets that name expected documents (planted conflicts
left out). Out of scope: `eval/out_of_scope/questions.jsonl`, questions a customer of each
product could ask that its knowledge base does not answer (written for this bench from the
articles' titles). For each text the first search is run as the pipeline runs it
(`evidence_calibration.search`) and the gate's signals are kept; then every rule of a small
grid is scored on them: the shipped one (similarity at least the threshold) and ones that also
pass a ticket whose similarity falls short by at most ``slack`` when BM25 and dense agree on
the top passage and the ticket's key terms are covered at least ``coverage``. The demo's
in-scope and out-of-scope questions (`bench/evidence_calibration.py`) are scored beside them.
Blind products are never named here.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evidence_calibration import first_look, texts

from supportagent.agent.evidence import DEFAULT_SIMILARITY_THRESHOLD
from supportagent.agent.knowledge import Knowledge
from supportagent.domain import Ticket
from supportagent.ingest import read_kb, read_resolved, read_tickets
from supportagent.runtime import load_demo
from supportagent.store.store import Store

ROOT = Path(__file__).resolve().parents[1]
PRODUCTS = ("tidewell", "pickwren", "forkline", "echofold", "pawledger", "hivecast")
SLACKS = (0.0, 0.02, 0.04, 0.06, 0.08)
COVERAGES = (0.5, 0.6, 0.7, 0.8)


def passes(look: dict[str, Any], slack: float, coverage: float) -> bool:
    """The gate's first look under a rule of the grid (``slack`` 0: the shipped rule)."""
    similarity = float(look["similarity"])
    if similarity >= DEFAULT_SIMILARITY_THRESHOLD:
        return True
    return (
        slack > 0
        and similarity >= DEFAULT_SIMILARITY_THRESHOLD - slack
        and bool(look["agree"])
        and float(look["coverage"]) >= coverage
    )


def product_groups(name: str, out_of_scope: list[dict[str, str]]) -> tuple[Store, dict]:
    folder = ROOT / "eval" / name
    tmp = Path(tempfile.mkdtemp(prefix=f"evidence-{name}-"))
    store = Store(f"sqlite:///{tmp / 'store.db'}")
    store.migrate()
    store.upsert_documents(
        [*read_kb(folder / "kb").records, *read_resolved(folder / "resolved.jsonl").records]
    )
    labels = {
        row["id"]: row
        for row in map(json.loads, (folder / "tickets.jsonl").read_text("utf-8").splitlines())
    }
    inside = [
        t
        for t in read_tickets(folder / "tickets.jsonl").records
        if labels[t.id].get("expected_bucket") == "answerable"
        and labels[t.id].get("expected_docs")
        and not labels[t.id].get("conflict")
    ]
    outside = [Ticket(q["id"], q["text"], q["text"]) for q in out_of_scope if q["product"] == name]
    return store, {"in": inside, "out": outside}


def score(looks: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for slack in SLACKS:
        for coverage in COVERAGES if slack else (0.0,):
            key = f"slack {slack:.2f} coverage {coverage:.1f}"
            out[key] = {
                name: sum(passes(look, slack, coverage) for look in rows)
                for name, rows in looks.items()
            }
    return out


def add(total: dict[str, dict[str, int]], part: Iterable[tuple[str, dict[str, int]]]) -> None:
    for key, counts in part:
        row = total.setdefault(key, {})
        for name, n in counts.items():
            row[name] = row.get(name, 0) + n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--products", default=",".join(PRODUCTS))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    questions = [
        json.loads(line)
        for line in (ROOT / "eval/out_of_scope/questions.jsonl").read_text("utf-8").splitlines()
    ]
    report: dict[str, Any] = {}
    total: dict[str, dict[str, int]] = {}
    sizes = {"in": 0, "out": 0}
    for name in args.products.split(","):
        store, groups = product_groups(name, questions)
        knowledge = Knowledge.from_store(store)
        looks = {g: [first_look(knowledge, t) for t in items] for g, items in groups.items()}
        store.close()
        scored = score(looks)
        report[name] = {"sizes": {g: len(v) for g, v in looks.items()}, "rules": scored}
        add(total, scored.items())
        for g, rows in looks.items():
            sizes[g] += len(rows)
        print(f"{name}: in scope {len(looks['in'])}, out of scope {len(looks['out'])}")
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{Path(tmp) / 'demo.db'}")
        store.migrate()
        load_demo(store)
        groups = texts(store)
        knowledge = Knowledge.from_store(store)
        demo = {
            "in": [first_look(knowledge, t) for t in [*groups["eval"], *groups["inbox"]]],
            "out": [first_look(knowledge, t) for t in groups["oos"]],
        }
        store.close()
    demo_scored = score(demo)
    report["demo"] = {"sizes": {g: len(v) for g, v in demo.items()}, "rules": demo_scored}
    print(
        f"\nproducts: in scope {sizes['in']}, out of scope {sizes['out']}; demo: "
        f"in {len(demo['in'])}, out {len(demo['out'])}"
    )
    print("rule: products in passed / out passed | demo in passed / out passed")
    for key, counts in total.items():
        d = demo_scored[key]
        print(f"  {key}: {counts['in']} / {counts['out']} | {d['in']} / {d['out']}")
    report["products"] = {"sizes": sizes, "rules": total}
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
