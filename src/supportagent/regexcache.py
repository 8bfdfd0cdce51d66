"""The rule tables' compiled regular expressions, kept in the user cache between processes.

A one-shot ``triage`` compiled the 350-odd patterns of the safety, classifier and planted-flag
tables on every run: 0.06-0.09 s CPU, most of it in ``re``'s pure-Python parser, a tenth of the
whole command. What ``re`` hands to its C engine is a list of integers (the program), and the
engine's constructor, ``_sre.compile``, takes that list back, so the programs of a table are
kept in one file and a later process builds its patterns from them without parsing anything.

A pattern built this way compares equal to the one ``re.compile`` makes (``re.Pattern``
equality covers the source, the flags and the program, which the tests check for every
shipped table), so matching is unchanged. The file is named after a digest of the table's
text and of the interpreter (its version and ``_sre.MAGIC``: the program format belongs to the
engine), its programs carry a sha256 that is checked before use, and it is read without
pickle or marshal. Anything unexpected (an engine that takes other arguments, an unreadable
or damaged file, a folder that cannot be written) falls back to ``re.compile``: speed is
lost, never correctness. The digest catches damage, not intent: whoever can write the user's
cache folder can change what these patterns match, as they can the optimised MiniLM graph
kept beside them (and the bytecode in ``__pycache__``); the folder is the user's own.

Our modules' own module-level patterns (the drafter's question and fact patterns, the
scorer's, the text normaliser's: 158 in 15 modules on a one-shot ``triage``, 0.03-0.05 s
CPU) go the same way through ``ProgramCache.for_module``: one file per module, named after
the module and a digest of its source file's bytes, so an edited module starts a new file and
the old one is removed when the new one is written.
"""

from __future__ import annotations

import array
import contextlib
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

from supportagent.usercache import cache_folder, remove_stale, replace_file

#: Bumped when the file layout changes; part of every entry's name.
FORMAT = 1
PREFIX = "regex-"
_CODE = "I"  # the engine's code unit: 32 bits (``_sre.CODESIZE``)


def _engine() -> Any:
    """The C engine and the parser/compiler in front of it, or None on an interpreter whose
    engine is not the one this module was written for."""
    try:
        import _sre  # type: ignore[import-not-found]
        from re import _compiler, _parser  # type: ignore[attr-defined]
    except ImportError:
        return None
    if getattr(_sre, "CODESIZE", None) != 4 or array.array(_CODE).itemsize != 4:
        return None
    if not all(hasattr(m, n) for m, n in ((_parser, "parse"), (_compiler, "_code"))):
        return None
    return _sre, _parser, _compiler


class ProgramCache:
    """The compiled patterns of one rule table, by source and flags; see the module's notes."""

    def __init__(self, table_text: str | None, source: str) -> None:
        """``table_text`` None: nothing is kept, every pattern comes from ``re.compile``."""
        engine = _engine() if table_text is not None else None
        self._engine = engine
        self._known: dict[tuple[str, int], list[Any]] = {}
        self._code = array.array(_CODE)
        self._new: list[list[Any]] = []
        self._new_code = array.array(_CODE)
        self._file: Path | None = None
        if engine is None or table_text is None:
            return
        made_by = f"{FORMAT}\0{sys.version}\0{engine[0].MAGIC}\0"
        material = (made_by + table_text).encode("utf-8")
        where = hashlib.sha256(source.encode("utf-8")).hexdigest()[:8]
        self._stem = f"{PREFIX}{where}-"
        name = f"{self._stem}{hashlib.sha256(material).hexdigest()[:16]}.bin"
        try:
            self._file = cache_folder() / name
            self._read(self._file.read_bytes())
        except (OSError, ValueError, TypeError, KeyError, IndexError):
            self._known, self._code = {}, array.array(_CODE)

    @classmethod
    def for_module(cls, name: str, file: str | None) -> ProgramCache:
        """The programs of a module's module-level patterns: ``name`` is the module's
        ``__name__``, ``file`` its ``__file__``, whose bytes name the entry. A module whose
        file cannot be read compiles its patterns with ``re`` and keeps nothing."""
        text: str | None = None
        if file is not None:
            # latin-1 maps every byte to one character: any source names its own entry.
            with contextlib.suppress(OSError):
                text = Path(file).read_bytes().decode("latin-1")
        return cls(text, name)

    def _read(self, data: bytes) -> None:
        head, _, body = data.partition(b"\n")
        index = json.loads(head)
        if hashlib.sha256(body).hexdigest() != index["sha256"]:
            raise ValueError("damaged regex cache")
        self._code.frombytes(body)
        for entry in index["programs"]:
            self._known[(entry[0], entry[1])] = entry

    def compile(self, pattern: str, flags: int = 0) -> re.Pattern[str]:
        """``re.compile(pattern, flags)``, from the kept program when there is one."""
        flags = int(flags)
        if self._engine is None:
            return re.compile(pattern, flags)
        sre, parser, compiler = self._engine
        entry = self._known.get((pattern, flags))
        if entry is not None:
            _, _, final_flags, start, size, groups, groupindex, indexgroup = entry
            try:
                code = self._code[start : start + size].tolist()
                built: re.Pattern[str] = sre.compile(
                    pattern, final_flags, code, groups, groupindex, tuple(indexgroup)
                )
                return built
            except (TypeError, ValueError, RuntimeError):
                self._engine = None  # an engine that reads programs otherwise: stop using it
                return re.compile(pattern, flags)
        return self._compile_and_keep(pattern, flags, sre, parser, compiler)

    def _compile_and_keep(
        self, pattern: str, flags: int, sre: Any, parser: Any, compiler: Any
    ) -> re.Pattern[str]:
        # The steps of re._compiler.compile, keeping the program it hands to the engine.
        # A bad pattern raises re.error here, as re.compile would.
        parsed = parser.parse(pattern, flags)
        try:
            code = compiler._code(parsed, flags)
            groupindex = dict(parsed.state.groupdict)
            indexgroup: list[str | None] = [None] * parsed.state.groups
            for group_name, number in groupindex.items():
                indexgroup[number] = group_name
            final_flags = flags | parsed.state.flags
            groups = parsed.state.groups - 1
            built: re.Pattern[str] = sre.compile(
                pattern, final_flags, code, groups, groupindex, tuple(indexgroup)
            )
        except (AttributeError, TypeError, ValueError, RuntimeError):
            self._engine = None
            return re.compile(pattern, flags)
        reference = re.compile(pattern, flags)
        if built != reference:
            # Only the first run of a table compiles twice. A program that differs from re's
            # own (another engine) is never kept, and this cache stops standing in for re.
            self._engine = None
            return reference
        start = len(self._code) + len(self._new_code)
        self._new.append(
            [pattern, flags, final_flags, start, len(code), groups, groupindex, indexgroup]
        )
        self._new_code.extend(code)
        return built

    def save(self) -> None:
        """Write the programs compiled since the file was read, if any; best effort."""
        if self._engine is None or self._file is None or not self._new:
            return
        known = sorted(self._known.values(), key=lambda entry: int(entry[3]))
        body = (self._code + self._new_code).tobytes()
        index = {"sha256": hashlib.sha256(body).hexdigest(), "programs": [*known, *self._new]}
        head = json.dumps(index, ensure_ascii=True, separators=(",", ":")).encode("ascii")
        try:
            self._file.parent.mkdir(parents=True, exist_ok=True)
            replace_file(self._file, head + b"\n" + body)
            remove_stale(self._file.parent, self._stem, keep=self._file.name)
        except OSError:
            return
