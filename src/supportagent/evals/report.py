"""`eval report`: the latest result of every eval as one self-contained HTML page and its JSON.

The page needs nothing from elsewhere: no scripts at all, no fonts, no style sheets; the charts
are SVG drawn here. Every string that came from a result (a dataset's name, a metric's name, a
detail's value) is escaped, because dataset names and details are data, never markup. Any kind
of result is shown the same generic way, so a new eval appears without a change here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import Any

from supportagent import __version__
from supportagent.evals.compare import higher_is_better
from supportagent.evals.results import EvalResult

#: Bars per chart, and scalar details per result: enough to read, not a wall.
MAX_BARS = 40
MAX_DETAILS = 40
BAR_WIDTH = 360
ROW_HEIGHT = 18
LABEL_WIDTH = 260

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:64rem;padding:0 1rem;
color:#1d2330}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2.2rem;border-bottom:1px solid #ccd}
h3{font-size:1.05rem;margin:1.6rem 0 .3rem;overflow-wrap:anywhere}
table{border-collapse:collapse;margin:.4rem 0 1rem}
th,td{border:1px solid #d4d8e0;padding:.2rem .5rem;text-align:left;vertical-align:top;
overflow-wrap:break-word}
th{white-space:nowrap}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.meta{color:#566}.chart{max-width:100%;height:auto}
"""


def report_json(results: Sequence[EvalResult], generated_at: str) -> dict[str, Any]:
    """What the JSON file beside the page holds; `eval compare` reads its ``results``."""
    return {
        "generated_at": generated_at,
        "version": __version__,
        "results": [r.to_json() for r in results],
    }


def write_report(
    results: Sequence[EvalResult], out_dir: Path, now: datetime | None = None
) -> tuple[Path, Path]:
    """Write ``eval-<UTC time>.html`` and ``.json`` into ``out_dir``; returns both paths."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    stamp = moment.isoformat(timespec="seconds")
    out_dir.mkdir(parents=True, exist_ok=True)
    base = out_dir / f"eval-{moment.strftime('%Y%m%dT%H%M%SZ')}"
    html_path, json_path = base.with_suffix(".html"), base.with_suffix(".json")
    data = report_json(results, stamp)
    json_path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
    html_path.write_text(render_html(results, stamp), "utf-8")
    return html_path, json_path


# ---------------------------------------------------------------------------- the page


def render_html(results: Sequence[EvalResult], generated_at: str) -> str:
    """The whole page as one string."""
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        # Even if a string slipped through unescaped, this page could run nothing.
        '<meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>SupportAgent eval report</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>SupportAgent eval report</h1>",
        f'<p class="meta">Generated {_e(generated_at)} by SupportAgent {_e(__version__)}: '
        f"the latest saved result of each eval and dataset ({len(results)}).</p>",
    ]
    if not results:
        parts.append("<p>No eval results yet: run an eval first.</p>")
    else:
        parts.append(_overview(results))
    for kind, group in _by_kind(results).items():
        parts.append(f'<h2 id="{_e(kind)}">{_e(kind)}</h2>')
        parts.extend(_result_section(r) for r in group)
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _overview(results: Sequence[EvalResult]) -> str:
    rows = "".join(
        f"<tr><td>{_e(r.kind)}</td><td>{_e(r.dataset)}</td>"
        f'<td class="num">{len(r.metrics)}</td><td>{_e(_headline(r))}</td>'
        f"<td>{_e(r.created_at)}</td><td>{_e(r.version)}</td></tr>"
        for r in results
    )
    return (
        "<table><thead><tr><th>eval</th><th>dataset</th><th>metrics</th><th>first metric</th>"
        f"<th>run at</th><th>version</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def _headline(result: EvalResult) -> str:
    for name, metric in result.metrics.items():
        return f"{name} {format_value(metric.value)}"
    return "-"


def _by_kind(results: Iterable[EvalResult]) -> dict[str, list[EvalResult]]:
    groups: dict[str, list[EvalResult]] = {}
    for result in results:
        groups.setdefault(result.kind, []).append(result)
    return groups


def _result_section(result: EvalResult) -> str:
    engine = result.details.get("engine") or _nested(result.details, "summary", "engine")
    meta = f"run at {result.created_at}, version {result.version}"
    if isinstance(engine, str):
        meta += f", engine {engine}"
    parts = [
        f"<section><h3>{_e(result.kind)}: {_e(result.dataset)}</h3>",
        f'<p class="meta">{_e(meta)}</p>',
        _metric_table(result),
    ]
    rates = [(n, m.value) for n, m in result.metrics.items() if 0.0 <= m.value <= 1.0]
    others = [(n, m.value) for n, m in result.metrics.items() if not 0.0 <= m.value <= 1.0]
    if rates:
        parts.append(bar_chart(rates, f"{result.kind} {result.dataset}: scores from 0 to 1", 1.0))
    if others:
        parts.append(bar_chart(others, f"{result.kind} {result.dataset}: other values"))
    details = scalar_details(result.details)
    if details:
        rows = "".join(f"<tr><td>{_e(k)}</td><td>{_e(_text(v))}</td></tr>" for k, v in details)
        parts.append(f"<details><summary>details</summary><table>{rows}</table></details>")
    parts.append("</section>")
    return "\n".join(parts)


def _metric_table(result: EvalResult) -> str:
    ways = {True: "higher is better", False: "lower is better", None: "direction not known"}
    rows = "".join(
        f'<tr><td>{_e(name)}</td><td class="num">{_e(format_value(metric.value))}</td>'
        f"<td>{ways[higher_is_better(name)]}</td></tr>"
        for name, metric in result.metrics.items()
    )
    return (
        "<table><thead><tr><th>metric</th><th>value</th><th>which way</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )


def bar_chart(values: Sequence[tuple[str, float]], title: str, top: float | None = None) -> str:
    """A horizontal bar chart as inline SVG; bars scale to ``top`` (default: the largest)."""
    shown = list(values[:MAX_BARS])
    scale = top if top is not None else max((abs(v) for _, v in shown), default=0.0)
    height = ROW_HEIGHT * len(shown) + 8
    width = LABEL_WIDTH + BAR_WIDTH + 80
    rows = []
    for i, (name, value) in enumerate(shown):
        y = 4 + i * ROW_HEIGHT
        length = 0.0 if scale <= 0 else min(abs(value) / scale, 1.0) * BAR_WIDTH
        label = name if len(name) <= 40 else name[:39] + "…"
        rows.append(
            f'<text x="{LABEL_WIDTH - 6}" y="{y + 13}" text-anchor="end">{_e(label)}</text>'
            f'<rect x="{LABEL_WIDTH}" y="{y + 2}" width="{length:.1f}" height="{ROW_HEIGHT - 5}"'
            f' fill="#4a6fa5"><title>{_e(name)}: {_e(format_value(value))}</title></rect>'
            f'<text x="{LABEL_WIDTH + length + 4:.1f}" y="{y + 13}">'
            f"{_e(format_value(value))}</text>"
        )
    more = len(values) - len(shown)
    note = f'<p class="meta">{more} more in the table above.</p>' if more > 0 else ""
    return (
        f'<svg class="chart" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" '
        f'font-size="12" font-family="sans-serif"><title>{_e(title)}</title>'
        f"{''.join(rows)}</svg>{note}"
    )


def scalar_details(details: Mapping[str, Any], limit: int = MAX_DETAILS) -> list[tuple[str, Any]]:
    """Numbers, strings and booleans from ``details`` (two levels deep), not lists or tables."""
    out: list[tuple[str, Any]] = []
    for key, value in details.items():
        if isinstance(value, Mapping):
            out.extend(
                (f"{key}.{k}", v) for k, v in value.items() if isinstance(v, str | int | float)
            )
        elif isinstance(value, str | int | float):
            out.append((str(key), value))
    return out[:limit]


def format_value(value: float) -> str:
    if float(value).is_integer() and abs(value) >= 1:
        return str(int(value))
    if abs(value) < 10:
        return f"{value:.3f}"
    return f"{value:.1f}"


def _nested(data: Mapping[str, Any], *keys: str) -> Any:
    value: Any = data
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _text(value: Any) -> str:
    if isinstance(value, float):
        return format_value(value)
    text = str(value)
    return text if len(text) <= 200 else text[:199] + "…"


def _e(text: object) -> str:
    return escape(str(text), quote=True)
