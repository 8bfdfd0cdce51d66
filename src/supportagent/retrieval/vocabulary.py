"""A saved BM25 vocabulary looked up where it is mapped, instead of a dict in every worker.

A dict of every token of a large corpus is Python objects in each process: at 1M passages
the titles alone have about a million distinct tokens (ticket numbers), some 110 MiB per
worker. The index folder keeps the tokens as one UTF-8 blob with end offsets; ``order``
lists the token ids by their bytes, so a lookup is a binary search over mapped pages that
every worker shares (about twenty comparisons a token).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt


def pack(parts: Sequence[bytes]) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """``parts`` as one blob and the end offset of each (what :class:`Strings` reads)."""
    ends = np.cumsum([len(p) for p in parts], dtype=np.int64) if parts else np.zeros(0, np.int64)
    return np.frombuffer(b"".join(parts), dtype=np.uint8).copy(), ends


class Strings:
    """The strings of one blob by index (``pack``'s layout), read where the blob is mapped."""

    def __init__(self, blob: npt.NDArray[Any], ends: npt.NDArray[np.int64]) -> None:
        self._data = np.ascontiguousarray(blob, dtype=np.uint8).data  # no copy: still mapped
        self._ends = ends

    def __len__(self) -> int:
        return len(self._ends)

    def _span(self, i: int) -> memoryview:
        start = int(self._ends[i - 1]) if i else 0
        return self._data[start : int(self._ends[i])]

    def raw(self, i: int) -> bytes:
        """String ``i`` as its UTF-8 bytes."""
        return bytes(self._span(i))

    def __getitem__(self, i: int) -> str:
        return str(self._span(i), "utf-8")


def sorted_order(tokens: Sequence[bytes]) -> npt.NDArray[np.int64]:
    """The token ids ordered by their UTF-8 bytes (what ``MappedVocabulary`` searches)."""
    return np.array(sorted(range(len(tokens)), key=tokens.__getitem__), dtype=np.int64)


class MappedVocabulary(Mapping[str, int]):
    """Token -> id over a blob of tokens, their end offsets and ``sorted_order``."""

    def __init__(
        self, blob: npt.NDArray[Any], ends: npt.NDArray[np.int64], order: npt.NDArray[np.int64]
    ) -> None:
        if len(ends) != len(order):
            raise ValueError(f"{len(ends)} token ends but {len(order)} sorted ids")
        self._tokens = Strings(blob, ends)
        self._order = order

    def _sorted(self, rank: int) -> bytes:
        """The token at ``rank`` in byte order."""
        return self._tokens.raw(int(self._order[rank]))

    def _find(self, token: str) -> int | None:
        key = token.encode("utf-8")
        lo = bisect.bisect_left(range(len(self._order)), key, key=self._sorted)
        if lo < len(self._order) and self._sorted(lo) == key:
            return int(self._order[lo])
        return None

    def get(self, token: str, default: Any = None) -> Any:
        found = self._find(token)
        return default if found is None else found

    def __getitem__(self, token: str) -> int:
        found = self._find(token)
        if found is None:
            raise KeyError(token)
        return found

    def __contains__(self, token: object) -> bool:
        return isinstance(token, str) and self._find(token) is not None

    def __len__(self) -> int:
        return len(self._order)

    def __iter__(self) -> Iterator[str]:
        for i in range(len(self._tokens)):
            yield self._tokens[i]
