"""The shipped TOML tables, parsed once and kept in the user cache as JSON.

Every one-shot ``triage`` parsed the safety, classifier, planted-flag, reason and threshold
tables with ``tomllib``, a pure-Python parser: about 0.01 s CPU for 85 kB of TOML, where
reading the same values back from JSON (a C parser) takes a twentieth of that. ``loads``
gives what ``tomllib.loads`` gives; the values are kept only when JSON carries them exactly
(strings, integers, floats, booleans, lists and tables, each of the same type when read back:
a date or a NaN is never kept), so a table read back is equal to a fresh parse, type for type.

The rules are ``regexcache``'s: an entry is named after a digest of the text it was parsed
from (and of this module's format), so an edited table never finds a stale entry; its body
carries a sha256 checked before use; it appears by an atomic rename; an unreadable or damaged
entry is parsed again, and a cache that cannot be written costs speed, never a result. Text
that is not valid TOML is never kept, so it raises ``tomllib.TOMLDecodeError`` as before.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from supportagent.usercache import cache_folder, remove_stale, replace_file

#: Bumped when the entry layout changes; part of every entry's name.
FORMAT = 1
PREFIX = "toml-"


def loads(text: str, source: str) -> dict[str, Any]:
    """``tomllib.loads(text)``, from the kept values of an earlier parse of the same text.

    ``source`` names the table (say ``safety_rules.toml``): a newer text of the same table
    replaces the older one's entry.
    """
    stem = f"{PREFIX}{hashlib.sha256(source.encode('utf-8')).hexdigest()[:8]}-"
    digest = hashlib.sha256(f"{FORMAT}\0{text}".encode()).hexdigest()[:20]
    name = f"{stem}{digest}.json"
    try:
        kept = _read(cache_folder() / name)
    except (OSError, ValueError):
        kept = None
    if kept is not None:
        return kept
    import tomllib  # only when the text was not parsed before

    data = tomllib.loads(text)
    _keep(name, stem, data)
    return data


def _read(path: Path) -> dict[str, Any] | None:
    head, _, body = path.read_bytes().partition(b"\n")
    if hashlib.sha256(body).hexdigest().encode("ascii") != head:
        return None
    data = json.loads(body)
    return data if isinstance(data, dict) else None


def _keep(name: str, stem: str, data: dict[str, Any]) -> None:
    """Write the entry when JSON gives back exactly ``data``; best effort."""
    try:
        body = json.dumps(data, ensure_ascii=True, allow_nan=False).encode("ascii")
    except (TypeError, ValueError):  # a date, a time or a NaN: not JSON's to carry
        return
    if not _same(json.loads(body), data):
        return
    try:
        folder = cache_folder()
        folder.mkdir(parents=True, exist_ok=True)
        replace_file(folder / name, hashlib.sha256(body).hexdigest().encode("ascii") + b"\n" + body)
        remove_stale(folder, stem, keep=name)
    except OSError:
        return


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (``1 == 1.0``, but not here)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)
