"""Documents and passages kept in the index folder, read where they are mapped.

Why: every worker used to hold each document and each passage as Python objects (at 100k
resolved tickets, some 140 MiB a worker), although a search only needs the few passages it
returns. The index folder keeps them as UTF-8 blobs with int64 end offsets, next to small
integer arrays (each passage's document, each document's first passage, the passages'
kinds), in pages that every worker on the machine shares. A ``Passage`` or ``Document`` is
made when one is asked for. Ids are found by binary search (``vocabulary.py``).

Arrays (``corpus.`` prefix in the generation):

* ``pid``, ``pid_ends``, ``pid_order``: passage ids; the order finds the *last* passage of an
  id, as a dict built in passage order would.
* ``ptext``, ``ptext_ends``, ``pfirst``: per passage its title, text and headings, in that
  order; the passage's strings are ``pfirst[i]`` to ``pfirst[i + 1]``.
* ``pdoc``, ``kinds``: each passage's document position and kind code.
* ``did``, ``did_ends``, ``did_order``, ``drec``, ``drec_ends``, ``dfirst``: document ids, each
  document as a JSON record (kind, title, body, source, linked documents, meta), and the
  document's passages ``dfirst[j]`` to ``dfirst[j + 1]``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from supportagent.domain import DocKind, Document, Passage
from supportagent.retrieval.vocabulary import MappedVocabulary, Strings, pack

PREFIX = "corpus."
_KINDS = tuple(DocKind)
KIND_CODES = {kind: code for code, kind in enumerate(_KINDS)}
_NAMES = (
    "pid",
    "pid_ends",
    "pid_order",
    "ptext",
    "ptext_ends",
    "pfirst",
    "pdoc",
    "kinds",
    "did",
    "did_ends",
    "did_order",
    "drec",
    "drec_ends",
    "dfirst",
)


class CannotMap(ValueError):
    """A corpus that does not survive the trip through UTF-8 and JSON unchanged (a lone
    surrogate, a tuple in a document's meta): it is kept in memory instead."""


def _record(document: Document) -> bytes:
    fields = [
        document.kind.value,
        document.title,
        document.body,
        document.source,
        list(document.linked_docs),
        document.meta,
    ]
    try:
        text = json.dumps(fields, ensure_ascii=False, allow_nan=False)
        if json.loads(text)[5] != document.meta:
            raise CannotMap(f"document {document.id}: its meta does not survive JSON")
        return text.encode("utf-8")
    except (TypeError, UnicodeEncodeError, ValueError) as exc:
        raise CannotMap(f"document {document.id}: {exc}") from None


def _last_first_order(ids: Sequence[bytes]) -> npt.NDArray[np.int64]:
    """Positions ordered by id, the later of two equal ids first."""
    return np.array(sorted(range(len(ids)), key=lambda i: (ids[i], -i)), dtype=np.int64)


def _utf8(text: str, what: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise CannotMap(f"{what}: {exc}") from None


def encode(documents: Sequence[tuple[Document, Sequence[Passage]]]) -> dict[str, npt.NDArray[Any]]:
    """The arrays of ``documents`` and their passages, in order; CannotMap when one would not
    read back as it is."""
    pid: list[bytes] = []
    ptext: list[bytes] = []
    pfirst, pdoc, kinds, dfirst = [0], [], [], [0]
    did: list[bytes] = []
    drec: list[bytes] = []
    for position, (document, passages) in enumerate(documents):
        did.append(_utf8(document.id, f"document id {document.id!r}"))
        drec.append(_record(document))
        for passage in passages:
            pid.append(_utf8(passage.id, f"passage id {passage.id!r}"))
            for part in (passage.title, passage.text, *passage.heading_path):
                ptext.append(_utf8(part, f"passage {passage.id}"))
            pfirst.append(len(ptext))
            pdoc.append(position)
            kinds.append(KIND_CODES[passage.kind])
        dfirst.append(len(pid))
    arrays: dict[str, npt.NDArray[Any]] = {}
    for name, parts in (("pid", pid), ("ptext", ptext), ("did", did), ("drec", drec)):
        arrays[name], arrays[f"{name}_ends"] = pack(parts)
    arrays["pid_order"] = _last_first_order(pid)
    arrays["did_order"] = _last_first_order(did)
    arrays["pfirst"] = np.array(pfirst, dtype=np.int64)
    arrays["pdoc"] = np.array(pdoc, dtype=np.int64)
    arrays["kinds"] = np.array(kinds, dtype=np.uint8)
    arrays["dfirst"] = np.array(dfirst, dtype=np.int64)
    return {PREFIX + name: array for name, array in arrays.items()}


class MappedCorpus:
    """Documents and passages over the arrays :func:`encode` made (mapped from disk)."""

    def __init__(self, arrays: Mapping[str, npt.NDArray[Any]]) -> None:
        a = {name: arrays[PREFIX + name] for name in _NAMES}
        self._pid = Strings(a["pid"], a["pid_ends"])
        self._ptext = Strings(a["ptext"], a["ptext_ends"])
        self._did = Strings(a["did"], a["did_ends"])
        self._drec = Strings(a["drec"], a["drec_ends"])
        self.passage_ids: Mapping[str, int] = MappedVocabulary(
            a["pid"], a["pid_ends"], a["pid_order"]
        )
        self.document_ids: Mapping[str, int] = MappedVocabulary(
            a["did"], a["did_ends"], a["did_order"]
        )
        self._pfirst, self._pdoc, self._dfirst = a["pfirst"], a["pdoc"], a["dfirst"]
        self.kinds: npt.NDArray[np.uint8] = a["kinds"]
        self.passages = MappedPassages(self)

    @staticmethod
    def present(arrays: Mapping[str, npt.NDArray[Any]]) -> bool:
        """True when a generation holds the corpus (one saved before this module has not)."""
        return all(PREFIX + name in arrays for name in _NAMES)

    def __len__(self) -> int:
        """How many documents."""
        return len(self._dfirst) - 1

    def passage(self, i: int) -> Passage:
        first, last = int(self._pfirst[i]), int(self._pfirst[i + 1])
        title, text = self._ptext[first], self._ptext[first + 1]
        headings = tuple(self._ptext[j] for j in range(first + 2, last))
        doc_id = self._did[int(self._pdoc[i])]
        return Passage(self._pid[i], doc_id, _KINDS[int(self.kinds[i])], title, headings, text)

    def document_at(self, j: int) -> Document:
        kind, title, body, source, linked, meta = json.loads(self._drec[j])
        return Document(self._did[j], DocKind(kind), title, body, source, tuple(linked), meta)

    def passage_range(self, j: int) -> range:
        """The positions of document ``j``'s passages."""
        return range(int(self._dfirst[j]), int(self._dfirst[j + 1]))

    def passages_at(self, j: int) -> tuple[Passage, ...]:
        return tuple(self.passage(i) for i in self.passage_range(j))

    def document_id(self, j: int) -> str:
        return self._did[j]


class _Made(Sequence[Passage]):
    """A sequence whose passages are made when read: subclasses give ``len`` and ``_made``."""

    def _made(self, i: int) -> Passage:
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> Passage: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Passage]: ...
    def __getitem__(self, i: int | slice) -> Passage | Sequence[Passage]:
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(len(self))))
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._made(i)


class MappedPassages(_Made):
    """The corpus's passages as a sequence; each one is made when it is read."""

    def __init__(self, corpus: MappedCorpus) -> None:
        self._corpus = corpus

    def __len__(self) -> int:
        return len(self._corpus.kinds)

    def _made(self, i: int) -> Passage:
        return self._corpus.passage(i)

    def __iter__(self) -> Iterator[Passage]:
        return (self._corpus.passage(i) for i in range(len(self)))


class Joined(_Made):
    """Mapped passages followed by passages added since (each added document's, in order)."""

    def __init__(self, base: Sequence[Passage], tail: tuple[Passage, ...]) -> None:
        self._base, self._tail = base, tail

    @classmethod
    def of(cls, passages: Sequence[Passage], more: tuple[Passage, ...]) -> Sequence[Passage]:
        """``passages`` then ``more``: a tuple stays a tuple, mapped passages stay mapped."""
        if isinstance(passages, tuple):
            return passages + more
        if isinstance(passages, Joined):
            return cls(passages._base, passages._tail + more)
        return cls(passages, more)

    def __len__(self) -> int:
        return len(self._base) + len(self._tail)

    def _made(self, i: int) -> Passage:
        base = len(self._base)
        return self._base[i] if i < base else self._tail[i - base]

    def __iter__(self) -> Iterator[Passage]:
        yield from self._base
        yield from self._tail
