"""Convert an HTML page to plain text with markdown headings, using only the stdlib parser.

Headings become ``#``/``##``/``###`` lines so the article's structure survives into search.
Script and style content is dropped. In a Confluence export (a page with a ``main-content``
element) only that element is kept, which leaves out breadcrumbs, metadata and footers.

Every callback costs the same whatever the nesting depth (counters, not scans of the open
elements), so a page of 100,000 nested ``<div>`` converts in linear time.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from html.parser import HTMLParser

_SKIPPED = frozenset({"script", "style", "noscript", "template"})
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track"}
    | {"wbr"}
)
_PARAGRAPHS = frozenset(
    {"p", "div", "blockquote", "pre", "table", "section", "article", "main"}
    | {"header", "footer", "aside", "figure", "form", "fieldset", "details", "hr", "nav"}
)
_LINES = frozenset(
    {"ul", "ol", "dl", "li", "tr", "dt", "dd", "caption", "figcaption", "summary", "address"}
)
_CELLS = frozenset({"td", "th"})
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_MAIN_CONTENT_ID = "main-content"
#: Confluence titles read "Space name : Page title".
_CONFLUENCE_TITLE_SEPARATOR = " : "

#: Malformed declarations repaired per page before giving up (each repair parses again).
_MAX_REPAIRS = 20

_SPACES = re.compile(r"\s+")
_BLANK_RUNS = re.compile(r"\n{3,}")
_EMPTY_HEADING = re.compile(r"^#+$", re.MULTILINE)


@dataclass(frozen=True)
class HtmlPage:
    title: str
    text: str


class HtmlError(ValueError):
    """The page is too broken to convert; ``line`` is where the parser gave up."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def html_to_text(html: str) -> HtmlPage:
    """The page's title (``<title>``, else the first ``<h1>``) and its text."""
    html = _escape_unclosable(html)
    line = 1
    for _ in range(_MAX_REPAIRS + 1):
        parser = _PageParser()
        try:
            parser.feed(html)
            parser.close()
        except AssertionError as exc:
            # Python 3.11's parser raises AssertionError on some malformed "<!" declarations
            # ("<![foo[", "<!DOCTYPE x [?"). Show the offending "<" as text and try again.
            line, column = parser.getpos()
            repaired = _escape_tag_start(html, line, column)
            if repaired is None:
                raise HtmlError(f"cannot parse the HTML ({exc})", line) from exc
            html = repaired
            continue
        return parser.page()
    message = f"cannot parse the HTML: over {_MAX_REPAIRS} malformed '<!' declarations"
    raise HtmlError(message, line)


def _escape_unclosable(html: str) -> str:
    """``html`` with every "<" after the last ">" escaped: no tag can end there, so it is text.

    The stdlib parser looks for a ">" afresh at each "</" (and "<?", "<!") it meets, so a tail
    of 100,000 of them with no ">" costs quadratic time; as "&lt;" they cost one pass.
    """
    tail = html.rfind(">") + 1
    if html.find("<", tail) < 0:
        return html
    return html[:tail] + html[tail:].replace("<", "&lt;")


def _escape_tag_start(html: str, line: int, column: int) -> str | None:
    """``html`` with the last "<" at or before (line, column) escaped, or None if none."""
    start = 0
    for _ in range(line - 1):
        start = html.find("\n", start) + 1
        if start == 0:
            return None
    index = html.rfind("<", 0, start + column + 1)
    if index < 0:
        return None
    return html[:index] + "&lt;" + html[index + 1 :]


class _Buffer:
    """Text being assembled, with whitespace kept tidy as it goes."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._tail = "\n"  # the last few characters written; a fresh buffer is "at a new line"

    def write(self, text: str) -> None:
        if not text:
            return
        self._parts.append(text)
        self._tail = (self._tail + text)[-2:]

    def words(self, text: str) -> None:
        """Flowing text: whitespace runs collapse to one space, never at a line's start."""
        text = _SPACES.sub(" ", text)
        if self._tail[-1] in " \n":
            text = text.lstrip(" ")
        self.write(text)

    def newlines(self, count: int) -> None:
        """End the current line and leave ``count - 1`` blank lines, without piling them up."""
        have = len(self._tail) - len(self._tail.rstrip("\n"))
        self.write("\n" * max(0, count - have))

    def value(self) -> str:
        text = "".join(self._parts)
        text = "\n".join(line.rstrip() for line in text.split("\n"))
        text = _EMPTY_HEADING.sub("", text)
        return _BLANK_RUNS.sub("\n\n", text).strip()


class _PageParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self._whole = _Buffer()
        self._main = _Buffer()
        self._stack: list[tuple[str, bool]] = []  # open elements: (tag, is main-content)
        self._open = Counter[str]()  # open elements by tag, so a stray end tag costs nothing
        self._main_depth = 0  # open main-content elements
        self._skip_depth = 0
        self._pre_depth = 0
        self._heading: int | None = None
        self._heading_parts: list[str] = []
        self._in_title = False
        self._title_parts: list[str] = []
        self._first_h1: str | None = None
        self._has_main = False

    # --- output -----------------------------------------------------------------------------

    def _buffers(self) -> list[_Buffer]:
        return [self._whole, self._main] if self._main_depth else [self._whole]

    def _newlines(self, count: int) -> None:
        if self._heading is not None:
            return  # a heading must stay on one line
        for buffer in self._buffers():
            buffer.newlines(count)

    # --- parser callbacks -------------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED:
            self._skip_depth += 1
            return
        if tag == "title":
            self._in_title = True
            return
        if tag not in _VOID:
            is_main = dict(attrs).get("id") == _MAIN_CONTENT_ID
            self._has_main = self._has_main or is_main
            self._stack.append((tag, is_main))
            self._open[tag] += 1
            self._main_depth += is_main
        if tag == "pre":
            self._pre_depth += 1
        if tag in _HEADINGS and self._heading is None:
            self._newlines(2)
            self._heading = _HEADINGS[tag]
            self._heading_parts = []
            for buffer in self._buffers():
                buffer.write("#" * min(self._heading, 6) + " ")
        elif tag in _PARAGRAPHS:
            self._newlines(2)
        elif tag in _LINES:
            self._newlines(1)
            if tag == "li":
                for buffer in self._buffers():
                    buffer.write("- ")
        elif tag == "br":
            if self._heading is not None:
                self._text(" ")
            self._newlines(1)
        elif tag in _CELLS:
            self._text(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED:
            self._skip_depth = max(0, self._skip_depth - 1)
            return
        if tag == "title":
            self._in_title = False
            return
        if tag == "pre":
            self._pre_depth = max(0, self._pre_depth - 1)
        if tag in _HEADINGS and self._heading == _HEADINGS[tag]:
            if self._heading == 1 and self._first_h1 is None:
                self._first_h1 = _SPACES.sub(" ", "".join(self._heading_parts)).strip()
            self._heading = None
            self._newlines(2)
        elif tag in _PARAGRAPHS:
            self._newlines(2)
        elif tag in _LINES:
            self._newlines(1)
        # Pop after writing, so text closing the main-content element still lands in it.
        self._close(tag)

    def _close(self, tag: str) -> None:
        # HTML leaves many elements unclosed (<p>, <li>): close back to the matching tag. An end
        # tag with no open element is ignored at once; otherwise every element popped here was
        # pushed once, so the pops cost linear time over the whole page.
        if not self._open[tag]:
            return
        while self._stack:
            name, is_main = self._stack.pop()
            self._open[name] -= 1
            self._main_depth -= is_main
            if name == tag:
                return

    def handle_data(self, data: str) -> None:
        if self._skip_depth:
            return
        if self._in_title:
            self._title_parts.append(data)
            return
        self._text(data)

    def _text(self, data: str) -> None:
        if self._heading is not None:
            self._heading_parts.append(data)
        for buffer in self._buffers():
            if self._pre_depth and self._heading is None:
                buffer.write(data)
            else:
                buffer.words(data)

    # --- result -----------------------------------------------------------------------------

    def page(self) -> HtmlPage:
        title = _SPACES.sub(" ", "".join(self._title_parts)).strip()
        if self._has_main and _CONFLUENCE_TITLE_SEPARATOR in title:
            title = title.split(_CONFLUENCE_TITLE_SEPARATOR, 1)[1].strip()
        text = self._main.value() if self._has_main else ""
        return HtmlPage(title=title or self._first_h1 or "", text=text or self._whole.value())
