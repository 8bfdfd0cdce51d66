"""The Ray documentation converter of ``bench/fetch_retrieval_sets.py`` (the seventh retrieval
set): page ids from the questions' URLs, reStructuredText and MyST rendered as text with
Markdown headings, and API pages built from docstrings by following imports. The sources
below are written for these tests; nothing is read from the network or from Ray."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from fetch_retrieval_sets import _page, _ray_page_id, _RayDocs

INIT = b'''"""Widgets."""
from widgets.core import Spinner
from .extra import helper
'''
CORE = b'''
class Base:
    def spin(self, speed: int = 3) -> None:
        """Spin at ``speed`` turns a second.

        Longer text."""


class Spinner(Base):
    """A spinning widget.

    .. note::

        Spinners never stop on their own.
    """

    def __init__(self, name: str, *, fast: bool = False) -> None:
        pass

    def stop(self) -> None:
        """Stop it."""

    def _hidden(self) -> None:
        """Not listed."""
'''
EXTRA = b'''
def helper(x, y=1):
    """Help with ``x``."""
'''


def _docs() -> _RayDocs:
    blobs = {
        "python/widgets/__init__.py": INIT,
        "python/widgets/core.py": CORE,
        "python/widgets/extra.py": EXTRA,
        "doc/source/snippets/run.py": b"# setup\n# __start__\nspin()\n# __end__\n",
    }
    return _RayDocs(blobs, {})


def test_a_page_id_is_the_page_not_the_section() -> None:
    base = "https://docs.ray.io/en/master/"
    assert _ray_page_id(base + "data/transforming-data.html#batches") == "data/transforming-data"
    assert _ray_page_id(base + "serve/") == "serve/index"
    assert _ray_page_id(base + "serve") == "serve/index"


def test_rst_headings_follow_the_order_their_styles_appear_in() -> None:
    source = "Title\n=====\n\nIntro with ``code``.\n\nPart\n----\n\nBody.\n\nOther\n=====\n"
    lines = _docs().rst(source, "doc/source/page.rst")
    headings = [line.strip() for line in lines if line.strip().startswith("#")]
    assert headings == ["# Title", "## Part", "# Other"]
    assert _page(lines) == ("Title", "Intro with code.\n\n## Part\n\nBody.\n\n# Other")


def test_rst_directives_keep_their_text_and_code_and_drop_the_rest() -> None:
    source = (
        "Run it::\n\n    spin()\n\n"
        ".. note::\n\n    Mind the speed.\n\n"
        ".. literalinclude:: snippets/run.py\n"
        "    :start-after: __start__\n"
        "    :end-before: __end__\n"
    )
    text = "\n".join(_docs().rst(source, "doc/source/page.rst"))
    assert "Run it:" in text and "Run it::" not in text  # "text::" reads "text:" in rST
    assert "Mind the speed." in text
    assert "```\nspin()\n```" in text  # only what lies between the two markers
    assert "setup" not in text


def test_myst_front_matter_comments_and_targets_are_left_out() -> None:
    source = (
        "---\norphan: true\n---\n<!-- hidden -->\n(my-target)=\n# Page\n\n"
        "```{note}\nBe careful.\n```\n\n```python\nx = 1\n```\n"
    )
    lines = _docs().myst(source, "doc/source/page.md")
    text = "\n".join(lines)
    assert "orphan" not in text and "hidden" not in text and "my-target" not in text
    assert "# Page" in text and "Be careful." in text and "x = 1" in text


def test_an_api_page_follows_imports_to_the_definition() -> None:
    title, text = _docs().api("widgets.Spinner")
    assert title == "widgets.Spinner"
    lines = text.splitlines()
    assert lines[0] == "class widgets.Spinner(name: str, *, fast: bool=False)"
    assert "A spinning widget." in text and "Spinners never stop on their own." in text
    assert "* stop: Stop it." in lines
    assert not any("_hidden" in line for line in lines)


def test_an_inherited_method_and_a_relative_import_resolve() -> None:
    docs = _docs()
    assert docs.api("widgets.Spinner.spin")[1].splitlines()[0] == (
        "widgets.Spinner.spin(speed: int=3)"
    )
    assert docs.api("widgets.helper")[1].startswith("widgets.helper(x, y=1)")


def test_a_name_that_cannot_be_resolved_gives_an_empty_page() -> None:
    assert _docs().api("widgets.Missing") == ("widgets.Missing", "")
    assert _docs().api("nowhere.Thing") == ("nowhere.Thing", "")


def test_an_autosummary_lists_each_entry_with_its_first_docstring_line() -> None:
    source = (
        ".. currentmodule:: widgets\n\n"
        ".. autosummary::\n    :toctree: doc/\n\n    Spinner\n    helper\n"
    )
    text = "\n".join(_docs().rst(source, "doc/source/api.rst"))
    assert "* Spinner: A spinning widget." in text
    assert "* helper: Help with x." in text
