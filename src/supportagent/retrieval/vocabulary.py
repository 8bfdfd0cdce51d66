"""A saved BM25 vocabulary looked up where it is mapped, instead of a dict in every worker.

A dict of every token of a large corpus is Python objects in each process: at 1M passages
the titles alone have about a million distinct tokens (ticket numbers), some 110 MiB per
worker. The index folder keeps the tokens as one UTF-8 blob with end offsets; ``order``
lists the token ids by their bytes, so a lookup is a binary search over mapped pages that
every worker shares (about twenty comparisons a token).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt


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
        self._blob = np.ascontiguousarray(blob, dtype=np.uint8).data  # no copy: still mapped
        self._ends, self._order = ends, order

    def _token(self, i: int) -> bytes:
        start = int(self._ends[i - 1]) if i else 0
        return bytes(self._blob[start : int(self._ends[i])])

    def _find(self, token: str) -> int | None:
        key = token.encode("utf-8")
        lo, hi = 0, len(self._order)
        while lo < hi:
            mid = (lo + hi) // 2
            if self._token(int(self._order[mid])) < key:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(self._order):
            found = int(self._order[lo])
            if self._token(found) == key:
                return found
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
        for i in range(len(self._order)):
            yield self._token(i).decode("utf-8")
