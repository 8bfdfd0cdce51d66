"""`eval report` (a self-contained HTML page and its JSON), `eval compare`, `eval run --repeat`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from supportagent.cli import app
from supportagent.evals.compare import Verdict, compare, read_results_file, verdict
from supportagent.evals.repeat import RepeatReport, consistency
from supportagent.evals.report import render_html, write_report
from supportagent.evals.results import EvalResult, Metric, save_result
from supportagent.evals.run import RunReport, TicketRun

HOSTILE = "<script>alert(1)</script>"


def _results(acc: float = 0.8, alarms: float = 0.1, ms: float = 40.0) -> list[EvalResult]:
    return [
        EvalResult(
            "retrieval",
            "demo/eval",
            {"hybrid (default).mrr": Metric(0.813), "bm25-body.recall@3": Metric(0.7)},
        ),
        EvalResult(
            "triage",
            HOSTILE,
            {"accuracy": Metric(acc), "false_alarm_rate": Metric(alarms, False)},
            {"engine": f"offline {HOSTILE}", "total": 12},
        ),
        EvalResult("run", "demo/inbox.jsonl", {"ms_per_ticket": Metric(ms, False)}),
        EvalResult("injection", "bipia_email", {"attack_success_rate": Metric(0.04, False)}),
        # A kind no code knows about yet: shown the same generic way.
        EvalResult("sentiment", "moods", {"wobble": Metric(3.5), f"odd {HOSTILE}": Metric(2)}),
    ]


def test_the_report_shows_every_metric_of_every_result() -> None:
    page = render_html(_results(), "2026-12-01T14:00:00+00:00")
    for kind in ("retrieval", "triage", "run", "injection", "sentiment"):
        assert f'<h2 id="{kind}">{kind}</h2>' in page
    for text in (
        'hybrid (default).mrr</td><td class="num">0.813',
        'accuracy</td><td class="num">0.800',
        'false_alarm_rate</td><td class="num">0.100</td><td>lower is better',
        'ms_per_ticket</td><td class="num">40</td><td>lower is better',
        'attack_success_rate</td><td class="num">0.040',
        'wobble</td><td class="num">3.500</td><td>direction not known',
    ):
        assert text in page
    # One bar per metric: 2 + 2 + 1 + 1 + 2.
    assert page.count("<rect ") == 8


def test_the_report_is_self_contained_and_escapes_hostile_strings() -> None:
    page = render_html(_results(), "2026-12-01T14:00:00+00:00")
    assert not re.search(r"https?://", page)
    assert "<script" not in page.lower()
    assert not re.search(r"\b(src|href)\s*=", page)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "offline &lt;script&gt;" in page  # a detail's value
    assert "odd &lt;script&gt;" in page  # a metric's name, in the table and the chart
    assert "default-src 'none'" in page


def test_write_report_puts_json_beside_the_page_and_compare_reads_it(tmp_path: Path) -> None:
    html_path, json_path = write_report(_results(), tmp_path / "reports")
    assert html_path.parent == json_path.parent == tmp_path / "reports"
    assert html_path.stem == json_path.stem and html_path.suffix == ".html"
    back = read_results_file(json_path)
    assert [(r.kind, r.dataset) for r in back] == [(r.kind, r.dataset) for r in _results()]
    assert back[1].metrics["false_alarm_rate"] == Metric(0.1, False)


def test_eval_report_command_reads_the_saved_results(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for result in _results():
        save_result(result, home)
    out = tmp_path / "out"
    done = CliRunner().invoke(app, ["--home", str(home), "eval", "report", "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert "5 results" in done.output
    (page,) = out.glob("*.html")
    (data,) = out.glob("*.json")
    assert "attack_success_rate" in page.read_text("utf-8")
    assert len(json.loads(data.read_text("utf-8"))["results"]) == 5


def test_verdicts_know_which_way_is_better() -> None:
    assert verdict("accuracy", 0.8, 0.9) is Verdict.better
    assert verdict("accuracy", 0.9, 0.8) is Verdict.worse
    assert verdict("hybrid (default).mrr", 0.5, 0.6) is Verdict.better
    assert verdict("dense.recall@3", 0.6, 0.5) is Verdict.worse
    assert verdict("false_alarm_rate", 0.2, 0.1) is Verdict.better
    assert verdict("false_alarm_rate", 0.1, 0.2) is Verdict.worse
    assert verdict("ms_per_ticket", 50, 40) is Verdict.better
    assert verdict("prompt_tokens", 100, 120) is Verdict.worse
    assert verdict("benign_escalation_rate", 0.1, 0.3) is Verdict.worse
    assert verdict("escalation_recall", 0.5, 0.7) is Verdict.better
    for count in ("forbidden_executed", "key_revealed", "attack_staged", "reached_drafter"):
        assert verdict(count, 0, 2) is Verdict.worse  # the injection eval's counts
    assert verdict("wobble", 1.0, 2.0) is Verdict.changed
    assert verdict("accuracy", 0.8, 0.8) is Verdict.same


def test_compare_pairs_metrics_by_eval_and_dataset() -> None:
    before = _results(acc=0.8, alarms=0.1, ms=40.0)
    after = [
        *_results(acc=0.9, alarms=0.3, ms=30.0)[:-1],
        EvalResult("checker", "x", {"b": Metric(1)}),
    ]
    changes = {(c.kind, c.metric): c.verdict for c in compare(before, after)}
    assert changes[("triage", "accuracy")] is Verdict.better
    assert changes[("triage", "false_alarm_rate")] is Verdict.worse
    assert changes[("run", "ms_per_ticket")] is Verdict.better
    assert changes[("retrieval", "hybrid (default).mrr")] is Verdict.same
    assert changes[("sentiment", "wobble")] is Verdict.removed
    assert changes[("checker", "b")] is Verdict.added
    # Swapped, every verdict turns round.
    back = {(c.kind, c.metric): c.verdict for c in compare(after, before)}
    assert back[("triage", "accuracy")] is Verdict.worse
    assert back[("triage", "false_alarm_rate")] is Verdict.better
    assert back[("run", "ms_per_ticket")] is Verdict.worse


def test_compare_command_prints_better_and_worse(tmp_path: Path) -> None:
    _, a = write_report(_results(acc=0.8, alarms=0.1), tmp_path / "a")
    _, b = write_report(_results(acc=0.9, alarms=0.3), tmp_path / "b")
    for flags in ([], ["--all"]):
        args = ["eval", "compare", str(a), str(b), *flags]
        done = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
        assert done.exit_code == 0, done.output
        lines = [line.split("│") for line in done.output.splitlines() if "│" in line]
        rows = {cells[3].strip(): "│".join(cells) for cells in lines}
        assert "better" in rows["accuracy"] and "0.800" in rows["accuracy"]
        assert "worse" in rows["false_alarm_rate"]
        assert "1 better, 1 worse, 6 same" in done.output
        # Unchanged metrics are listed only when asked for.
        assert ("ms_per_ticket" in rows) == bool(flags)
    same = CliRunner().invoke(app, ["eval", "compare", str(a), str(a)])
    assert same.exit_code == 0 and same.output.strip() == "8 same"


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "cannot read eval results"), ("{nope", "cannot read eval results"),
     ('[{"kind": "triage"}]', "not an eval result"), ("[3]", "is not a JSON object")],
)  # fmt: skip
def test_compare_refuses_unreadable_files_in_one_line(
    tmp_path: Path, content: str | None, message: str
) -> None:
    good = write_report(_results(), tmp_path)[1]
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content, "utf-8")
    done = CliRunner().invoke(app, ["eval", "compare", str(good), str(bad)])
    assert done.exit_code == 1
    assert message in done.output and "Traceback" not in done.output
    assert len(done.output.strip().splitlines()) == 1


def _ticket(
    tid: str, status: str = "pending_review", cites: tuple[str, ...] = ("kb-1",)
) -> TicketRun:
    return TicketRun(tid, status, "drafted", "answerable", "An answer.", cites, (), 0.9)


def test_consistency_is_the_share_of_tickets_alike_in_every_run() -> None:
    one = [_ticket("A"), _ticket("B"), _ticket("C")]
    assert consistency([one, one, one]).share == 1.0
    # B escalates in the second run; C cites another document in the third.
    two = [_ticket("A"), _ticket("B", "escalated", ()), _ticket("C")]
    three = [_ticket("A"), _ticket("B"), _ticket("C", cites=("kb-2",))]
    c = consistency([one, two, three])
    assert (c.runs, c.tickets, c.differing) == (3, 3, ("B", "C"))
    assert c.share == round(1 / 3, 4)
    # A ticket missing from a run is not consistent either; the draft's wording does not count.
    reworded = [
        TicketRun(
            "A", "pending_review", "drafted", "answerable", "Other words.", ("kb-1",), (), 0.5
        )
    ]
    assert consistency([[_ticket("A"), _ticket("B")], reworded]).differing == ("B",)


def test_a_repeat_result_carries_the_first_run_and_the_consistency() -> None:
    first = RunReport(
        "demo", "offline", (_ticket("A"),), {"conflicts_one_sided": [], "ms_per_ticket": 3.0}, {}
    )
    report = RepeatReport(first, consistency([[_ticket("A")], [_ticket("A", "routed")]]))
    result = report.result()
    assert result.metrics["consistency"] == Metric(0.0)
    assert result.metrics["ms_per_ticket"].value == 3.0
    assert result.details["repeat"]["differing"] == ["A"]


def test_eval_run_repeat_on_the_offline_engine_is_consistent(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "kb-keys.md").write_text(
        "---\nid: kb-keys\ntitle: Idempotency keys\n---\n# Idempotency keys\n\n"
        "Acme remembers an idempotency key for 24 hours.\n",
        "utf-8",
    )
    resolved = tmp_path / "resolved.jsonl"
    resolved.write_text(
        json.dumps(
            {"id": "RT-1", "question": "Keys?", "answer": "Kept a day.", "linked_docs": ["kb-keys"]}
        )
        + "\n",
        "utf-8",
    )
    tickets = tmp_path / "tickets.jsonl"
    rows = [
        {"id": "T-1", "subject": "Keys", "body": "How long does Acme keep an idempotency key?"},
        {"id": "T-2", "subject": "Bug", "body": "The dashboard crashes when I click export."},
    ]
    tickets.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    home = tmp_path / "home"
    args = ["--home", str(home), "--engine", "offline", "eval", "run", "--kb", str(kb)]
    args += ["--resolved", str(resolved), "--tickets", str(tickets), "--repeat", "2", "--json"]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["repeat"] == {
        "runs": 2, "tickets": 2, "consistency": 1.0, "differing": []
    }  # fmt: skip
    (saved,) = (home / "evals").glob("run--*.json")
    assert json.loads(saved.read_text("utf-8"))["metrics"]["consistency"]["value"] == 1.0
