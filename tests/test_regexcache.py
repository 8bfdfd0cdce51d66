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


@pytest.mark.usefixtures("unwritable_cache")
def test_an_unwritable_cache_costs_nothing_but_time() -> None:
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


# --------------------------------------------------------------------------- module patterns

_SRC = Path(__file__).resolve().parents[1] / "src"
_MODULES = sorted(
    ".".join(path.relative_to(_SRC).with_suffix("").parts)
    for path in (_SRC / "supportagent").rglob("*.py")
    if "ProgramCache.for_module(__name__, __file__)" in path.read_text(encoding="utf-8")
)

# Imports the modules that keep their module-level patterns, recording every pattern they
# build, and checks each against re.compile in the same interpreter.
_IMPORT_AND_CHECK = """
import importlib, json, re, sys
from supportagent.regexcache import ProgramCache
built, parsed = [], []
compile_, keep = ProgramCache.compile, ProgramCache._compile_and_keep
def recording(self, pattern, flags=0):
    result = compile_(self, pattern, flags)
    built.append((pattern, int(flags), result))
    return result
def parsing(self, *args):
    parsed.append(args[0])
    return keep(self, *args)
ProgramCache.compile, ProgramCache._compile_and_keep = recording, parsing
for name in sys.argv[1:]:
    importlib.import_module(name)
differ = [p for p, f, r in built if r != re.compile(p, f) or type(r) is not re.Pattern]
print(json.dumps({"built": len(built), "parsed": len(parsed), "differ": differ}))
"""


def _import_modules(cache_home: Path) -> dict[str, Any]:
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home), "PYTHONPATH": str(_SRC)}
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_AND_CHECK, *_MODULES],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_module_level_patterns_are_rebuilt_from_their_programs_unchanged(tmp_path: Path) -> None:
    assert {"supportagent.agent.questions", "supportagent.textnorm"} <= set(_MODULES)
    first = _import_modules(tmp_path)
    assert first["built"] > 100
    assert first["parsed"] == first["built"]  # an empty cache: every pattern parsed once
    assert first["differ"] == []
    assert len(list((tmp_path / "supportagent").glob(f"{PREFIX}*.bin"))) == len(_MODULES)
    again = _import_modules(tmp_path)
    assert again == {"built": first["built"], "parsed": 0, "differ": []}


def test_an_edited_module_starts_a_new_entry(cache: Path, tmp_path: Path) -> None:
    module = tmp_path / "patterns_here.py"
    module.write_text("A = 1\n", encoding="utf-8")
    old = ProgramCache.for_module("patterns_here", str(module))
    old.compile("alpha")
    old.save()
    module.write_text("A = 2\n", encoding="utf-8")
    new = ProgramCache.for_module("patterns_here", str(module))
    assert new._known == {}
    assert new.compile("alpha") == re.compile("alpha")
    new.save()
    assert len(list(cache.glob(f"{PREFIX}*.bin"))) == 1


def test_a_module_without_a_readable_file_keeps_nothing(cache: Path, tmp_path: Path) -> None:
    for file in (None, str(tmp_path / "gone.py")):
        patterns = ProgramCache.for_module("somewhere", file)
        assert patterns.compile(r"\bbeta\b", re.I) == re.compile(r"\bbeta\b", re.I)
        patterns.save()
    assert not cache.exists() or not list(cache.glob(f"{PREFIX}*.bin"))
