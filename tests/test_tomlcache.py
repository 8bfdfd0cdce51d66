"""The shipped TOML tables kept in the user cache as JSON (issue 17, item 3).

What ``tomlcache.loads`` gives back must be what ``tomllib.loads`` gives, value for value and
type for type, whether it comes from the cache or from a fresh parse.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

import pytest

from supportagent import tomlcache
from supportagent.tomlcache import PREFIX, _same

SHIPPED = [
    ("supportagent.agent", "safety_rules.toml"),
    ("supportagent.agent", "safety_semantic.toml"),
    ("supportagent.engines", "classifier_rules.toml"),
    ("supportagent", "planted_rules.toml"),
    ("supportagent", "reasons.toml"),
]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "supportagent"


def _no_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("the table was parsed again")

    monkeypatch.setattr(tomllib, "loads", refuse)


@pytest.mark.parametrize(("package", "name"), SHIPPED)
def test_a_shipped_table_reads_back_as_tomllib_parses_it(
    package: str, name: str, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
    fresh = tomllib.loads(text)
    assert _same(tomlcache.loads(text, name), fresh)
    assert len(list(cache.glob(f"{PREFIX}*.json"))) == 1
    with monkeypatch.context() as patched:
        _no_parsing(patched)
        kept = tomlcache.loads(text, name)
    assert _same(kept, fresh)
    assert kept == fresh


def test_types_are_kept_and_what_json_cannot_carry_is_parsed_each_time(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    numbers = 'a = 1\nb = 1.0\nc = -0.0\nd = [1, 2.5, "x", true]\n[t]\ne = { f = "g" }\n'
    tomlcache.loads(numbers, "numbers")
    with monkeypatch.context() as patched:
        _no_parsing(patched)
        kept = tomlcache.loads(numbers, "numbers")
    assert _same(kept, tomllib.loads(numbers))
    assert type(kept["a"]) is int and type(kept["b"]) is float
    assert not _same({"x": 1}, {"x": 1.0})
    for text in ("when = 1979-05-27\n", "x = nan\n"):
        first = tomlcache.loads(text, "odd")
        again = tomlcache.loads(text, "odd")
        assert repr(first) == repr(again) == repr(tomllib.loads(text))
    assert len(list(cache.glob(f"{PREFIX}*.json"))) == 1  # numbers only


def test_invalid_toml_raises_as_tomllib_does_and_is_not_kept(cache: Path) -> None:
    with pytest.raises(tomllib.TOMLDecodeError):
        tomlcache.loads("[[rule]\nname = 1\n", "broken")
    assert not cache.exists() or not list(cache.glob(f"{PREFIX}*.json"))


def test_a_damaged_entry_is_parsed_again_and_rewritten(cache: Path) -> None:
    text = 'name = "alpha"\ncount = 3\n'
    tomlcache.loads(text, "t")
    (entry,) = cache.glob(f"{PREFIX}*.json")
    entry.write_bytes(entry.read_bytes().replace(b"alpha", b"omega"))
    assert tomlcache.loads(text, "t") == {"name": "alpha", "count": 3}
    assert b"alpha" in entry.read_bytes()


def test_an_edited_table_replaces_its_entry(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tomlcache.loads("x = 1\n", "table.toml")
    assert tomlcache.loads("x = 2\n", "table.toml") == {"x": 2}
    assert len(list(cache.glob(f"{PREFIX}*.json"))) == 1
    with monkeypatch.context() as patched:
        _no_parsing(patched)
        assert tomlcache.loads("x = 2\n", "table.toml") == {"x": 2}


@pytest.mark.usefixtures("unwritable_cache")
def test_an_unwritable_cache_costs_nothing_but_time() -> None:
    assert tomlcache.loads("x = [1, 2]\n", "t") == {"x": [1, 2]}
