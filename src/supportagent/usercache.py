"""Files derived once from shipped or pinned data and kept in the user's cache folder.

A one-shot command pays for what it derives at start-up (an uncompressed model, an optimised
graph) on every run, so each is derived once and kept here. Everything here can be rebuilt
from its source: an entry is named after what it was made from, so a changed source never
finds a stale entry; it appears by an atomic rename, so a reader never sees half of one; and
it is read without pickle. A folder that cannot be written costs speed, never correctness.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path


def cache_folder() -> Path:
    """``$XDG_CACHE_HOME/supportagent``, else ``~/.cache/supportagent``; OSError when there is
    neither (a service account without a home), which callers treat as an unwritable cache."""
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except RuntimeError as exc:
            raise OSError(f"no folder for the cache: {exc}") from None
    return Path(base) / "supportagent"


def publish_folder(target: Path, fill: Callable[[Path], None]) -> Path:
    """``target``, filled by ``fill(folder)`` in a temporary folder renamed into place at once.

    When another process published ``target`` first, its copy is kept and this one dropped:
    both were made from the same source. OSError when the cache folder cannot be written.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        fill(work)
        try:
            os.rename(work, target)
        except OSError:
            if not target.is_dir():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def remove_stale(folder: Path, prefix: str, keep: str) -> None:
    """Delete the entries named ``prefix*`` other than ``keep``: older sources' copies."""
    try:
        entries = list(folder.glob(f"{prefix}*"))
    except OSError:
        return
    for entry in entries:
        if entry.name == keep or entry.name.startswith("."):
            continue
        if entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def _stamp(path: Path) -> str:
    """What changes when a file is replaced or written to: size, mtime, inode and device."""
    stat = path.stat()
    return f"{stat.st_size} {stat.st_mtime_ns} {stat.st_ino} {stat.st_dev}\n{path.resolve()}\n"


def _stamp_file(path: Path, sha256: str) -> Path:
    where = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    return cache_folder() / "verified" / f"{sha256}-{where}"


def verified_before(path: Path, sha256: str) -> bool:
    """True when ``path`` was found to have ``sha256`` and has not changed since.

    Hashing a pinned model file on every start cost a one-shot command tens of milliseconds
    (0.04 s CPU for the 71 MB multilingual model alone). What is remembered is the file's
    size, mtime, inode and device when its digest matched: a reinstall or an edit changes one
    of them and the file is hashed again. (An edit that keeps the size within one tick of the
    file system's clock would go unseen; the pin guards against a wrong or damaged install,
    and whoever can write the package's files can change its code as well.)
    """
    try:
        return _stamp_file(path, sha256).read_text(encoding="utf-8") == _stamp(path)
    except OSError:
        return False


def remember_verified(path: Path, sha256: str) -> None:
    """Note that ``path`` has ``sha256`` now (see :func:`verified_before`); best effort."""
    try:
        target = _stamp_file(path, sha256)
        target.parent.mkdir(parents=True, exist_ok=True)
        replace_file(target, _stamp(path).encode("utf-8"))
    except OSError:
        return


def replace_file(target: Path, data: bytes) -> None:
    """``target`` holding ``data``, written to a temporary file beside it and renamed over it:
    a reader sees the old file or the new one, never half of one. OSError when it cannot be
    written; the temporary file is removed either way."""
    handle, name = tempfile.mkstemp(prefix=f".{target.name}-", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(name, target)
    finally:
        Path(name).unlink(missing_ok=True)
