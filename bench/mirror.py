"""Reading a fetched repository's files at its HEAD, for the scripts that convert public sets
(a bare mirror is enough: files are read with ``git show``)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git_dir(path: Path) -> Path:
    """A work tree's ``.git``, or the bare directory itself."""
    return path / ".git" if (path / ".git").exists() else path


def git_bytes(repo: Path, path: str) -> bytes:
    """The file at ``path`` in ``repo``'s HEAD."""
    done = subprocess.run(
        ["git", "--git-dir", str(repo), "show", f"HEAD:{path}"], check=True, capture_output=True
    )
    return done.stdout


def git_head(repo: Path) -> str:
    """The commit ``repo``'s HEAD names (for each set's SOURCE.md)."""
    done = subprocess.run(
        ["git", "--git-dir", str(repo), "rev-parse", "HEAD"],
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()
