"""The rule tables' compiled patterns kept in the user cache (issue 17, item 3).

A pattern rebuilt from a kept program must be the very pattern ``re.compile`` makes: compiled
``re.Pattern`` objects compare equal only with the same source, flags and program.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from supportagent import planted
from supportagent.agent import safety
from supportagent.engines import classifier
from supportagent.regexcache import PREFIX, ProgramCache

TABLES: dict[str, tuple[str, str, Callable[[str, str], tuple[Any, ...]]]] = {
    "safety": ("supportagent.agent", safety.DEFAULT_RULES_FILE, safety.parse_rules),
    "classifier": (
        "supportagent.engines",
        classifier.DEFAULT_RULES_FILE,
        classifier.parse_classifier_rules,
    ),
    "planted": ("supportagent", planted.RULES_FILE, planted.parse_rules),
}


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "supportagent"


def _patterns(rules: tuple[Any, ...]) -> list[re.Pattern[str]]:
    return [pattern for rule in rules for pattern in rule.patterns]


def _no_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any use of re's parser fail: what follows must be built from kept programs."""

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("a pattern was parsed again")

    monkeypatch.setattr(re._parser, "parse", refuse)  # type: ignore[attr-defined]


@pytest.mark.parametrize("table", sorted(TABLES))
def test_a_shipped_table_is_rebuilt_from_its_programs_unchanged(
    table: str, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package, name, parse = TABLES[table]
    text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
    first = parse(text, name)
    assert len(list(cache.glob(f"{PREFIX}*.bin"))) == 1
    with monkeypatch.context() as patched:
        _no_parsing(patched)
        again = parse(text, name)
    fresh = [re.compile(p.pattern, re.IGNORECASE) for p in _patterns(first)]
    assert len(fresh) > 10
    assert _patterns(first) == fresh
    assert _patterns(again) == fresh
    assert [r.name for r in again] == [r.name for r in first]


def test_a_kept_pattern_matches_as_re_does(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pattern = r"(?<!\w)(?:(?P<verb>kill|hurt)\s+(?:my)?self|down\?)(?!\w)"
    text = "I will HURT myself; is it down? killself down?x"
    writer = ProgramCache("table", "<test>")
    writer.compile(pattern, re.IGNORECASE)
    writer.save()
    with monkeypatch.context() as patched:
        _no_parsing(patched)
        kept = ProgramCache("table", "<test>").compile(pattern, re.IGNORECASE)
    reference = re.compile(pattern, re.IGNORECASE)
    assert kept == reference
    assert kept.groupindex == reference.groupindex == {"verb": 1}
    found = [(m.span(), m.group("verb")) for m in kept.finditer(text)]
    assert found == [(m.span(), m.group("verb")) for m in reference.finditer(text)]
    assert found[0] == ((7, 18), "HURT")


def test_a_changed_table_does_not_reuse_the_old_programs(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = ProgramCache("version one", "<test>")
    old.compile("alpha", 0)
    old.save()
    with monkeypatch.context() as patched:
        _no_parsing(patched)
        with pytest.raises(AssertionError) as caught:
            ProgramCache("version two", "<test>").compile("alpha", 0)
    assert "parsed again" in str(caught.value)
    new = ProgramCache("version two", "<test>")
    new.compile("alpha", 0)
    new.save()
    # One entry a table source: the older table's file is gone.
    assert len(list(cache.glob(f"{PREFIX}*.bin"))) == 1


def test_a_damaged_file_is_ignored_and_written_again(cache: Path) -> None:
    text = resources.files("supportagent.agent").joinpath(safety.DEFAULT_RULES_FILE)
    source = text.read_text(encoding="utf-8")
    expected = _patterns(safety.parse_rules(source, "safety"))
    (kept,) = cache.glob(f"{PREFIX}*.bin")
    data = bytearray(kept.read_bytes())
    data[-5] ^= 0xFF  # one bit pattern of one program changed
    kept.write_bytes(bytes(data))
    assert _patterns(safety.parse_rules(source, "safety")) == expected
    kept.write_bytes(b"not a cache file")
    assert _patterns(safety.parse_rules(source, "safety")) == expected
    assert kept.read_bytes() != b"not a cache file"


def test_an_unwritable_cache_costs_nothing_but_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    rules = safety.parse_rules(
        '[[rule]]\nname = "x"\ncategory = "c"\nseverity = "low"\nauto_escalate = false\n'
        'reason_code = "r"\npatterns = ["data\\\\s+breach"]\n'
    )
    assert _patterns(rules) == [re.compile(r"(?<!\w)(?:data\s+breach)(?!\w)", re.IGNORECASE)]


def test_a_bad_pattern_is_still_reported_by_its_rule(cache: Path) -> None:
    table = (
        '[[rule]]\nname = "broken"\ncategory = "c"\nseverity = "low"\nauto_escalate = false\n'
        "reason_code = \"r\"\npatterns = ['(unclosed']\n"
    )
    with pytest.raises(ValueError, match=r"broken.*bad regex"):
        safety.parse_rules(table)
    assert not list(cache.glob(f"{PREFIX}*.bin"))
