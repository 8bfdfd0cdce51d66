"""Split file content into lines the way JSONL and TSV define them: on "\\n" only.

``str.splitlines`` also breaks on U+2028, U+2029, form feeds and other separators, which JSON
allows unescaped inside a string: one record would become two broken lines. Every reader of
line-based files goes through :func:`physical_lines`, so the rule lives in one place.
"""

from __future__ import annotations


def physical_lines(text: str) -> list[str]:
    """The lines of ``text`` split on ``"\\n"``; a ``"\\r"`` before it (Windows files) goes too."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # a final newline ends the last line; it does not start an empty one
    return [line.removesuffix("\r") for line in lines]
