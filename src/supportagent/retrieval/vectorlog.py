"""Sentence vectors kept between processes in one append-only file next to the index.

The offline drafter embeds the sentences of its evidence for each ticket, and a one-shot
``triage`` is a new process, so the in-process memo never helped it: the same help-centre
sentences went through MiniLM on every run (about 0.2 s CPU on the demo corpus). This file
keeps them. It implements the :class:`~supportagent.retrieval.dense.VectorCache` protocol, so
that ``CachedEmbedder`` puts it in front of the model like the store's cache, which is meant
for passages and is not filled with sentences.

Each record is a fixed-size row: the sha256 of the model id and the text's key, the float32
vector, and a CRC-32 of both. A record is appended by one ``write`` of the whole row (rows
from processes writing at once do not interleave), read through a memory map, and used only
when its CRC matches, so a torn or zeroed tail is skipped, never used. A vector depends only on
the text and the model, so an entry cannot go stale; when the corpus changes, the sentences it
no longer has just stop being asked for, and when the file passes :data:`MAX_RECORDS` it is
rewritten with the newest half (a temporary file renamed over it). Nothing is pickled.
"""

from __future__ import annotations

import hashlib
import os
import threading
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from supportagent.usercache import replace_file

#: Records kept before the file is compacted to the newest half (about 1.6 kB each).
MAX_RECORDS = 20_000


def _record_type(dimension: int) -> np.dtype[np.void]:
    return np.dtype([("key", "u1", (32,)), ("vector", "<f4", (dimension,)), ("crc", "<u4")])


def _record_key(model_id: str, key: str) -> bytes:
    return hashlib.sha256(f"{model_id}\0{key}".encode()).digest()


def _crc(key: bytes, vector: bytes) -> int:
    return zlib.crc32(key + vector)


class VectorLog:
    """A file of ``(key, vector)`` records with the store's cache interface."""

    def __init__(self, path: Path, dimension: int, *, max_records: int = MAX_RECORDS) -> None:
        self.path = path
        self.dimension = dimension
        self.max_records = max_records
        self._type = _record_type(dimension)
        self._lock = threading.Lock()
        #: The mapped records and the row of each key (the last one wins), replaced together.
        self._snapshot: tuple[np.ndarray, dict[bytes, int]] | None = None
        #: What this process appended since the file was mapped.
        self._fresh: dict[bytes, bytes] = {}

    def get_many(self, model_id: str, keys: Sequence[str]) -> dict[str, bytes]:
        records, rows = self._mapped()
        out: dict[str, bytes] = {}
        for key in keys:
            digest = _record_key(model_id, key)
            blob = self._fresh.get(digest)
            row = rows.get(digest)
            if blob is None and row is not None:
                vector = records[row]["vector"].tobytes()
                if _crc(digest, vector) == int(records[row]["crc"]):
                    blob = vector
            if blob is not None:
                out[key] = blob
        return out

    def put_many(self, model_id: str, vectors: Mapping[str, bytes]) -> None:
        """Append the vectors; a folder that cannot be written only loses the speed-up."""
        if not vectors:
            return
        known = len(self._mapped()[0])
        records = np.zeros(len(vectors), dtype=self._type)
        with self._lock:
            for row, (key, blob) in enumerate(vectors.items()):
                digest = _record_key(model_id, key)
                records["key"][row] = np.frombuffer(digest, dtype=np.uint8)
                records["vector"][row] = np.frombuffer(blob, dtype=np.float32)
                vector = records["vector"][row].tobytes()
                records["crc"][row] = _crc(digest, vector)
                self._fresh[digest] = vector
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                if known + len(self._fresh) > self.max_records or not self._append(records):
                    self._compact(records)
            except OSError:
                return

    def _append(self, records: np.ndarray) -> bool:
        """Append whole rows; False, writing nothing, when the file does not end on a row
        boundary (a write cut short): rows appended after it would all be misread."""
        handle = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            if os.fstat(handle).st_size % self._type.itemsize:
                return False
            # One write of whole rows: O_APPEND keeps concurrent writers' rows apart.
            os.write(handle, records.tobytes())
        finally:
            os.close(handle)
        return True

    def _compact(self, records: np.ndarray) -> None:
        """Rewrite the file with its newest sound records and ``records``, at most half the
        limit: a temporary file renamed over it.

        The file is mapped again first, for the rows appended since it was loaded (this
        process's and others'); a row another process appends meanwhile may be lost, which
        costs one embedding later.
        """
        current = self._map()
        sound = [
            i
            for i, record in enumerate(current)
            if _crc(record["key"].tobytes(), record["vector"].tobytes()) == int(record["crc"])
        ]
        half = max(self.max_records // 2, len(records))
        new = np.concatenate([np.asarray(current[sound]), records])[-half:]
        replace_file(self.path, new.tobytes())
        self._snapshot = None  # mapped afresh at the next look

    def _mapped(self) -> tuple[np.ndarray, dict[bytes, int]]:
        snapshot = self._snapshot
        if snapshot is None:
            with self._lock:
                snapshot = self._snapshot
                if snapshot is None:
                    records = self._map()
                    keys = np.ascontiguousarray(records["key"]).tobytes()
                    rows = {keys[i * 32 : i * 32 + 32]: i for i in range(len(records))}
                    self._fresh = {}
                    snapshot = self._snapshot = (records, rows)
        return snapshot

    def _map(self) -> np.ndarray:
        """The file's whole rows, mapped read-only; none when it is absent or empty."""
        try:
            count = self.path.stat().st_size // self._type.itemsize
            if count:
                return np.memmap(self.path, dtype=self._type, mode="r", shape=(count,))
        except (OSError, ValueError):
            pass
        return np.zeros(0, dtype=self._type)
