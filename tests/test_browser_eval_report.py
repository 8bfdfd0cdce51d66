"""The eval report page in a real browser (Debian's chromium through Playwright), from a file."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, expect

from browser_support import browser, page, shot, unload_prompts  # noqa: F401 (fixtures)
from supportagent.evals.report import write_report
from supportagent.evals.results import EvalResult, Metric

HOSTILE = "<script>alert(1)</script>"


def test_the_report_renders_offline_and_runs_nothing(page: Page, tmp_path: Path) -> None:
    results = [
        EvalResult("triage", HOSTILE, {"accuracy": Metric(0.9), "false_alarm_rate": Metric(0.05)}),
        EvalResult("run", "demo/inbox.jsonl", {"ms_per_ticket": Metric(41.5, False)}),
    ]
    html_path, _ = write_report(results, tmp_path)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(html_path.as_uri())
    expect(page.locator("h1")).to_have_text("SupportAgent eval report")
    # The hostile name is shown as text (the page fixture fails the test on any dialog).
    expect(page.locator("h3").first).to_have_text(f"triage: {HOSTILE}")
    expect(page.locator("section").first.locator("svg rect")).to_have_count(2)
    width = page.locator("section").first.locator("svg rect").first.get_attribute("width")
    assert width is not None and float(width) == 0.9 * 360
    assert page.evaluate("document.scripts.length") == 0
    assert requests == [html_path.as_uri()]  # nothing fetched but the page itself
    shot(page, "eval-report")
