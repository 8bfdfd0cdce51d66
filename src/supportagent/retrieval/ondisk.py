"""Index files on disk: numpy arrays written atomically under a manifest, read memory-mapped.

Why: a process that starts (a one-shot ``triage``, each ``worker`` on a machine) maps the BM25
postings and the passage vectors that an earlier process wrote, instead of tokenizing and
fetching every vector again; the pages are the operating system's page cache, shared by every
process that maps them, not private memory of each.

Layout under the index folder::

    CURRENT                 the name of the generation readers use (replaced atomically)
    LOCK                    flock()ed by a writer while it builds and publishes
    gen-<id>/manifest.json  format, key, meta; per array: file, dtype, shape, bytes, sha256
    gen-<id>/<name>.npy     one array per file (numeric dtypes only, never pickled objects)

A writer builds a whole generation in a temporary folder, fsyncs it, renames it into place,
then replaces ``CURRENT``. A reader that opens ``CURRENT`` sees a complete generation or the
previous one, never half of one. Two writers at once take turns on ``LOCK``; the second finds
the first's generation and, when it has the key it wanted, uses it instead of building again.
Every file is checked against the manifest before use: a truncated or damaged file raises
:class:`IndexDamaged`, whose message says which file and that it will be rebuilt. Opening
checks each file's size and a *sample* digest (sha256 of its first and last 64 KiB and of 16
blocks of 4 KiB spread over the file), which costs the same at 1M passages as at 1,000;
hashing every byte (gigabytes of vectors at 1M passages) is left to :func:`verify` (``check=
"full"``). A generation whose manifest has no sample digests (written before they existed) is
hashed whole. What the sample trades: a change that leaves the size alone and falls outside
every sampled block is only found by the full check (``tests/test_index_ondisk.py`` shows one).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from supportagent.retrieval.dense import file_sha256

FORMAT = "supportagent-index/1"
CURRENT = "CURRENT"
LOCK = "LOCK"
#: Generations kept besides the current one: a reader that read CURRENT just before a writer
#: replaced it still finds its generation.
KEEP_OLD = 1
_ALLOWED_KINDS = frozenset("biuf")  # bool, int, unsigned, float: nothing that could pickle
#: How much of each file opening reads to check it (see the module docstring).
_EDGE = 64 << 10
_BLOCK = 4 << 10
_BLOCKS = 16
Check = Literal["full", "sample", "size"]


def sample_sha256(path: Path) -> str:
    """The sha256 of a file's size, its first and last 64 KiB and 16 evenly spread 4 KiB blocks
    (the whole file when it is small)."""
    size = path.stat().st_size
    digest = hashlib.sha256(size.to_bytes(8, "little"))
    with path.open("rb") as handle:
        if size <= 2 * _EDGE + _BLOCKS * _BLOCK:
            digest.update(handle.read())
            return digest.hexdigest()
        offsets = [0, *(_EDGE + (size - 2 * _EDGE) * i // _BLOCKS for i in range(_BLOCKS))]
        for offset in offsets:
            handle.seek(offset)
            digest.update(handle.read(_EDGE if offset == 0 else _BLOCK))
        handle.seek(size - _EDGE)
        digest.update(handle.read(_EDGE))
    return digest.hexdigest()


class IndexDamaged(Exception):
    """An index file does not match its manifest (truncated, edited, missing)."""


@dataclass(frozen=True, slots=True)
class Generation:
    """One published index: its arrays (memory-mapped, read-only) and its manifest's meta."""

    name: str
    key: str
    meta: Mapping[str, Any]
    arrays: Mapping[str, npt.NDArray[Any]]


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def current_name(folder: Path) -> str | None:
    """The generation ``CURRENT`` names, or None when nothing was published yet."""
    try:
        name = (folder / CURRENT).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    return name or None


def read_generation(folder: Path, *, check: Check = "sample") -> Generation | None:
    """The published generation, mapped read-only; None when there is none.

    IndexDamaged when a file is missing, cut short or differs from its manifest. ``check``:
    ``"sample"`` (sizes and sample digests), ``"full"`` (every byte against its sha256) or
    ``"size"`` (sizes only, for what this process has just written).
    """
    name = current_name(folder)
    return None if name is None else read_named(folder, name, check=check)


def verify(folder: Path) -> Generation | None:
    """The published generation after hashing every file whole (IndexDamaged when one differs)."""
    return read_generation(folder, check="full")


def read_named(folder: Path, name: str, *, check: Check = "sample") -> Generation:
    """One generation by name, mapped read-only; IndexDamaged when it does not check out."""
    where = folder / name
    try:
        manifest = json.loads((where / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise IndexDamaged(f"{where / 'manifest.json'} is unreadable ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise IndexDamaged(f"{where / 'manifest.json'} is not a {FORMAT} manifest")
    arrays: dict[str, npt.NDArray[Any]] = {}
    for array_name, entry in manifest["arrays"].items():
        path = where / entry["file"]
        try:
            size = path.stat().st_size
        except OSError:
            raise IndexDamaged(f"{path} is missing") from None
        if size != entry["bytes"]:
            raise IndexDamaged(f"{path} has {size} bytes, the manifest says {entry['bytes']}")
        sampled = entry.get("sample_sha256")
        if check == "sample" and sampled is not None:
            if sample_sha256(path) != sampled:
                raise IndexDamaged(f"{path} does not match its sample digest in the manifest")
        elif check != "size" and file_sha256(path) != entry["sha256"]:
            raise IndexDamaged(f"{path} does not match its sha256 in the manifest")
        try:
            array = np.load(path, mmap_mode="r", allow_pickle=False)
        except ValueError as exc:  # a bad header, or a pickled object array
            raise IndexDamaged(f"{path} is not a plain numpy array ({exc})") from None
        if list(array.shape) != entry["shape"] or array.dtype.str != entry["dtype"]:
            raise IndexDamaged(f"{path} has shape {array.shape} {array.dtype}, not as listed")
        # A plain ndarray over the same mapping (the memmap stays alive as its base): a
        # memmap's own __getitem__ is Python code, paid on every element the vocabularies and
        # passage tables read one by one (some 16,000 a one-shot triage, 0.006 s).
        arrays[array_name] = array.view(np.ndarray)
    return Generation(name, str(manifest["key"]), manifest.get("meta", {}), arrays)


def _write_generation(
    folder: Path, key: str, meta: Mapping[str, Any], arrays: Mapping[str, npt.NDArray[Any]]
) -> str:
    """Write a complete generation under a temporary name, then rename it into place."""
    name = f"gen-{uuid.uuid4().hex[:16]}"
    tmp = folder / f".tmp-{name}"
    tmp.mkdir(parents=True)
    entries: dict[str, dict[str, Any]] = {}
    try:
        for array_name, array in arrays.items():
            data = np.ascontiguousarray(array)
            if data.dtype.kind not in _ALLOWED_KINDS:
                raise TypeError(f"{array_name}: dtype {data.dtype} cannot go in an index file")
            path = tmp / f"{array_name}.npy"
            with path.open("wb") as handle:
                np.save(handle, data, allow_pickle=False)
                handle.flush()
                os.fsync(handle.fileno())
            entries[array_name] = {
                "file": path.name,
                "dtype": data.dtype.str,
                "shape": list(data.shape),
                "bytes": path.stat().st_size,
                "sha256": file_sha256(path),
                "sample_sha256": sample_sha256(path),
            }
        manifest = {"format": FORMAT, "key": key, "meta": dict(meta), "arrays": entries}
        with (tmp / "manifest.json").open("w", encoding="utf-8") as handle:
            json.dump(manifest, handle, indent=1)
            handle.flush()
            os.fsync(handle.fileno())
        _fsync_dir(tmp)
        os.rename(tmp, folder / name)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return name


def _publish(folder: Path, name: str) -> None:
    pointer = folder / f".tmp-{CURRENT}-{uuid.uuid4().hex[:8]}"
    with pointer.open("w", encoding="utf-8") as handle:
        handle.write(name + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(pointer, folder / CURRENT)
    _fsync_dir(folder)


def _prune(folder: Path, keep: str) -> None:
    """Remove older generations and leftovers of writers that died, keeping KEEP_OLD."""
    generations = sorted(
        (p for p in folder.glob("gen-*") if p.is_dir() and p.name != keep),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    for stale in generations[KEEP_OLD:]:
        shutil.rmtree(stale, ignore_errors=True)
    for leftover in folder.glob(".tmp-*"):
        # Under the lock no other writer is building, so any temporary file is a dead one's.
        if leftover.is_dir():
            shutil.rmtree(leftover, ignore_errors=True)
        else:
            leftover.unlink(missing_ok=True)


@contextlib.contextmanager
def writer_lock(folder: Path) -> Iterator[None]:
    """Held while one process builds and publishes; other writers wait their turn."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / LOCK).open("a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


Build = Callable[[Generation | None], tuple[Mapping[str, Any], Mapping[str, npt.NDArray[Any]]]]


def publish(
    folder: Path, key: str, build: Build, previous: Generation | None
) -> tuple[Generation, bool]:
    """Build and publish a generation for ``key``, unless another writer just did; returns it
    and whether this call built it.

    ``build(previous)`` returns ``(meta, arrays)``; it gets the generation that was current
    (or None) so that it can reuse what did not change.
    """
    with writer_lock(folder):
        try:
            latest = read_generation(folder)
        except IndexDamaged:
            latest = None
        if latest is not None and latest.key == key:
            return latest, False  # a writer that went first built this very index
        base = latest if latest is not None else previous
        meta, arrays = build(base)
        name = _write_generation(folder, key, meta, arrays)
        _publish(folder, name)
        _prune(folder, keep=name)
    return read_named(folder, name, check="size"), True  # just written from these arrays
