"""Reading a fetched repository's files (at its HEAD unless a commit is named), for the scripts
that convert public sets (a bare mirror is enough: files are read with ``git show``, ``git
ls-tree`` and ``git cat-file``)."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path


def git_dir(path: Path) -> Path:
    """A work tree's ``.git``, or the bare directory itself."""
    return path / ".git" if (path / ".git").exists() else path


def git_bytes(repo: Path, path: str, rev: str = "HEAD") -> bytes:
    """The file at ``path`` in ``repo``'s ``rev`` (HEAD unless told)."""
    done = subprocess.run(
        ["git", "--git-dir", str(repo), "show", f"{rev}:{path}"], check=True, capture_output=True
    )
    return done.stdout


def git_paths(repo: Path, folder: str, rev: str = "HEAD") -> list[str]:
    """Every file path under ``folder`` in ``repo``'s ``rev`` (HEAD unless told)."""
    done = subprocess.run(
        ["git", "--git-dir", str(repo), "ls-tree", "-r", "--name-only", rev, "--", folder],
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.splitlines()


def git_blobs(repo: Path, rev: str, paths: Sequence[str]) -> dict[str, bytes]:
    """The files at ``paths`` in ``repo``'s ``rev``, read in one ``git cat-file`` (absent ones left
    out)."""
    done = subprocess.run(
        ["git", "--git-dir", str(repo), "cat-file", "--batch"],
        input="".join(f"{rev}:{p}\n" for p in paths).encode("utf-8"),
        check=True,
        capture_output=True,
    )
    blobs: dict[str, bytes] = {}
    out, at = done.stdout, 0
    for path in paths:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        at = end + 1
        if len(header) == 3 and header[1] == b"blob":
            size = int(header[2])
            blobs[path] = out[at : at + size]
            at += size + 1
    return blobs


def git_head(repo: Path) -> str:
    """The commit ``repo``'s HEAD names (for each set's SOURCE.md)."""
    done = subprocess.run(
        ["git", "--git-dir", str(repo), "rev-parse", "HEAD"],
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()
