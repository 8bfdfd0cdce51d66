"""`--limit N` on the eval commands: a fixed sample of a big set, so `make eval` stays quick.

The sample is chosen by a hash of each row's id, not the first N rows: eval files are often
sorted by label, and their head would be one label only. The same N always picks the same
rows, so two runs with one limit compare like with like; the dataset's name records the limit,
so a sample is never compared with the whole set.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import TypeVar

from supportagent.errors import UserError

T = TypeVar("T")


def sample(items: Sequence[T], limit: int | None, key: Callable[[T], str]) -> list[T]:
    """At most ``limit`` of ``items`` (all when None), picked by hash of ``key``, in file order."""
    if limit is None or limit >= len(items):
        return list(items)
    if limit < 1:
        raise UserError(f"--limit takes a positive number of rows, got {limit}")

    def rank(index: int) -> bytes:
        return hashlib.sha256(key(items[index]).encode("utf-8")).digest()

    chosen = sorted(sorted(range(len(items)), key=rank)[:limit])
    return [items[i] for i in chosen]


def sampled_name(name: str, limit: int | None, total: int) -> str:
    """The dataset's name, marked when only a sample of it was run."""
    return name if limit is None or limit >= total else f"{name} (sample of {limit})"
