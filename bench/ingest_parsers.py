"""Ingest parser costs on hostile input: deeply nested HTML and large YAML front matter.

Run by hand: ``.venv/bin/python bench/ingest_parsers.py`` (prints one line per case). Never run
by the test suite. The cases are the red-team's (issue 14, finding 7 and the front-matter note):
20,000 nested ``<div>`` (220 KB), 100,000 nested (1.1 MB), 20,000 unclosed ``<div>`` followed by
20,000 stray ``</span>``, 100,000 ``</`` with no ``>`` after them (the stdlib parser's own
quadratic case), and 12 MB of YAML front matter.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from supportagent.ingest.html_text import html_to_text
from supportagent.ingest.kb import split_front_matter


def _nested(depth: int) -> str:
    return "<div>" * depth + "deep text" + "</div>" * depth


def _stray_closers(depth: int) -> str:
    return "<div>" * depth + "text" + "</span>" * depth


def _front_matter(megabytes: float) -> str:
    lines = []
    size, i = 0, 0
    while size < megabytes * 1_000_000:
        line = f"key_{i}: a value with some words in it, number {i}\n"
        lines.append(line)
        size += len(line)
        i += 1
    return "---\nid: big\ntitle: Big\n" + "".join(lines) + "---\n# Big\n\nBody text.\n"


def _time(label: str, size: int, run: Callable[[], object]) -> None:
    t0 = time.perf_counter()
    run()
    seconds = time.perf_counter() - t0
    print(f"{label:<44} {size / 1_000_000:6.2f} MB  {seconds:8.3f} s")


def main() -> None:
    for depth in (20_000, 100_000):
        html = _nested(depth)
        _time(f"html: {depth:,} nested <div>", len(html), lambda h=html: html_to_text(h))
    html = _stray_closers(20_000)
    _time("html: 20,000 <div> then 20,000 </span>", len(html), lambda: html_to_text(html))
    tail = "</" * 100_000
    _time("html: 100,000 '</' and no '>'", len(tail), lambda: html_to_text(tail))
    text = _front_matter(12)
    _time("yaml: front matter", len(text), lambda: split_front_matter(text))


if __name__ == "__main__":
    main()
