"""Files derived once from shipped or pinned data and kept in the user's cache folder.

A one-shot command pays for what it derives at start-up (an uncompressed model, an optimised
graph) on every run, so each is derived once and kept here. Everything here can be rebuilt
from its source: an entry is named after what it was made from, so a changed source never
finds a stale entry; it appears by an atomic rename, so a reader never sees half of one; and
it is read without pickle. A folder that cannot be written costs speed, never correctness.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path


def cache_folder() -> Path:
    """``$XDG_CACHE_HOME/supportagent``, else ``~/.cache/supportagent``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
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
