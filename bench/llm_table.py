"""Markdown tables of `bench/llm_calls.py --offline --out FILE.json` results: per ticket, the
offline and the llm outcome side by side, then the calls, tokens and seconds per stage, and
totals with the valid-reply rate. For docs/llm.md; reads only the JSON, calls nothing.

Run: .venv/bin/python bench/llm_table.py RESULT.json [RESULT.json ...]
(several files are one table: the same corpus run in parts).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

STAGES = ("classify", "assess", "reformulate", "draft", "check")


def outcome(row: dict[str, Any] | None) -> str:
    if row is None:
        return "not run"
    text = f"{row['status']} `{row['reason']}`"
    if row["status"] == "pending_review":
        marks = []
        if row.get("cites_expected_doc") is not None:
            marks.append("cites expected doc" if row["cites_expected_doc"] else "no expected doc")
        if row.get("facts") is not None:
            marks.append("all facts" if row["facts"] else "facts missing")
        if marks:
            text += f" ({', '.join(marks)})"
    return text


def sent(row: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in row["calls_detail"] if not c["cache_hit"] and c["status"] != "refused"]


def per_stage(row: dict[str, Any]) -> str:
    """``stage: calls, prompt+completion tokens, seconds`` for each stage the ticket reached."""
    parts = []
    by_stage: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in sent(row):
        by_stage[c["stage"]].append(c)
    for stage in sorted(by_stage, key=lambda s: STAGES.index(s) if s in STAGES else 99):
        calls = by_stage[stage]
        bad = sum(1 for c in calls if c["status"] != "ok")
        parts.append(
            f"{stage} {len(calls)}{f' ({bad} invalid/failed)' if bad else ''}: "
            f"{sum(c['prompt_tokens'] for c in calls):,}+"
            f"{sum(c['completion_tokens'] for c in calls):,} tok, "
            f"{sum(c['latency_ms'] for c in calls) / 1000:,.0f} s"
        )
    return "; ".join(parts) or "no call"


def main(paths: list[Path]) -> None:
    offline: dict[str, dict[str, Any]] = {}
    llm: list[dict[str, Any]] = []
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        offline.update({r["id"]: r for r in data.get("offline", [])})
        rows = data.get("llm")
        if rows is None:  # stopped early: the rows written as each ticket was staged
            partial = path.with_suffix(".jsonl")
            text = partial.read_text(encoding="utf-8") if partial.exists() else ""
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        llm.extend(rows)
    print(
        "| ticket | expected | offline | llm | calls | prompt + completion tokens | per stage | s |"
    )
    print("| --- | --- | --- | --- | ---: | ---: | --- | ---: |")
    for row in llm:
        print(
            f"| {row['id']} | {row['expected']} | {outcome(offline.get(row['id']))} | "
            f"{outcome(row)} | {row['calls']} | "
            f"{row['prompt_tokens']:,} + {row['completion_tokens']:,} | {per_stage(row)} | "
            f"{row['seconds']:,.0f} |"
        )
    calls = [c for r in llm for c in sent(r)]
    tries = [ok for r in llm for _, ok in r["tries"]]
    answered = [c for c in calls if c["status"] in {"ok", "invalid"}]
    repaired = sum(1 for r in llm for s, st in r["stages"] if st == "invalid")
    right = sum(1 for r in llm if r["bucket"] == r["expected"])
    right_off = sum(1 for r in llm if (offline.get(r["id"]) or {}).get("bucket") == r["expected"])
    print()
    print(
        f"{len(llm)} tickets; bucket right: llm {right}/{len(llm)}, "
        f"offline {right_off}/{len(llm)}; {len(calls)} calls sent "
        f"({len(answered)} with a reply, {len(calls) - len(answered)} failed); "
        f"{sum(c['prompt_tokens'] for c in calls):,} prompt + "
        f"{sum(c['completion_tokens'] for c in calls):,} completion tokens; "
        f"{sum(c['latency_ms'] for c in calls) / 1000:,.0f} s in the model, "
        f"{sum(r['seconds'] for r in llm):,.0f} s in all"
    )
    if tries:
        print(
            f"valid on the first try: {sum(tries)}/{len(tries)} = {sum(tries) / len(tries):.1%}; "
            f"replies that were invalid: {repaired}; calls valid in the end (after the repair): "
            f"{len(tries) - sum(1 for r in llm for s in _failed_twice(r))}/{len(tries)}"
        )
    stage_rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in calls:
        stage_rows[c["stage"]].append(c)
    print()
    print("| stage | replies | valid | prompt tokens / reply | completion / reply | s / reply |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for stage in sorted(stage_rows, key=lambda s: STAGES.index(s) if s in STAGES else 99):
        cs = stage_rows[stage]
        good = sum(1 for c in cs if c["status"] == "ok")
        prompt = sum(c["prompt_tokens"] for c in cs) / len(cs)
        print(
            f"| {stage} | {len(cs)} | {good} | {prompt:,.0f} | "
            f"{sum(c['completion_tokens'] for c in cs) / len(cs):,.0f} | "
            f"{sum(c['latency_ms'] for c in cs) / len(cs) / 1000:,.0f} |"
        )


def _failed_twice(row: dict[str, Any]) -> list[str]:
    """Stages where a call's reply and its repair were both invalid."""
    out, previous = [], None
    for stage, status in row["stages"]:
        if status == "invalid" and previous == (stage, "invalid"):
            out.append(stage)
            previous = None
            continue
        previous = (stage, status)
    return out


if __name__ == "__main__":
    main([Path(p) for p in sys.argv[1:]])
