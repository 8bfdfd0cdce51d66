"""Where the eval datasets live, and a deterministic split for sets that come without one.

Our own sets ship in the repository's ``eval/`` folder (each with its ``tune`` and ``test``
halves); public sets converted for us live in ``../shared/eval`` and, for sets a developer
fetched, in the folders named by ``SUPPORTAGENT_EVAL_DATA`` (separated like ``PATH``). Nothing
here is needed to install or test the project: a missing folder is simply skipped.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

TUNE, TEST = "tune", "test"


def hash_split(ticket_id: str) -> str:
    """``tune`` or ``test`` by a hash of the id: the same row always lands in the same half."""
    digest = hashlib.sha256(ticket_id.encode("utf-8")).digest()
    return TUNE if digest[0] % 2 == 0 else TEST


@dataclass(frozen=True, slots=True)
class Dataset:
    name: str
    kind: str  # retrieval | triage | checker | injection | corpus
    path: Path
    #: Our own data, written for this project with tune/test halves in the file.
    ours: bool = False


def repo_root() -> Path:
    """The checkout this package runs from (src layout), where ``eval/`` lives."""
    return Path(__file__).resolve().parents[3]


def search_roots() -> list[Path]:
    roots = [repo_root() / "eval", repo_root().parent / "shared" / "eval"]
    # Several folders may be named, separated like PATH (a worktree has no ../shared/eval).
    extra = os.environ.get("SUPPORTAGENT_EVAL_DATA", "")
    roots.extend(Path(part) for part in extra.split(os.pathsep) if part)
    # The same folder named twice is read once (its sets would count twice in training).
    unique: dict[Path, Path] = {}
    for root in roots:
        unique.setdefault(root.resolve(), root)
    return list(unique.values())


def find_datasets() -> list[Dataset]:
    """Every dataset found under the search roots, by its files' shape."""
    found: list[Dataset] = []
    ours = repo_root() / "eval"
    for root in search_roots():
        if not root.is_dir():
            continue
        for folder in sorted(p for p in root.iterdir() if p.is_dir()):
            found.extend(_datasets_in(folder, ours=root == ours))
    return found


def _datasets_in(folder: Path, *, ours: bool) -> list[Dataset]:
    out = []
    if (folder / "corpus.jsonl").is_file() and (folder / "qrels").is_dir():
        out.append(Dataset(folder.name, "retrieval", folder, ours))
    if (folder / "retrieval" / "corpus.jsonl").is_file():
        out.append(Dataset(folder.name, "retrieval", folder / "retrieval", ours))
    if (folder / "tickets.jsonl").is_file():
        out.append(Dataset(folder.name, "triage", folder / "tickets.jsonl", ours))
    if (folder / "claims.jsonl").is_file():
        out.append(Dataset(folder.name, "checker", folder / "claims.jsonl", ours))
    if (folder / "attacks.jsonl").is_file():
        out.append(Dataset(folder.name, "injection", folder / "attacks.jsonl", ours))
    if (folder / "kb").is_dir() and (folder / "tickets.jsonl").is_file():
        out.append(Dataset(folder.name, "corpus", folder, ours))
    return out
