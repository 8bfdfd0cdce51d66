"""Exemplar sets and nearest-neighbour scoring: the offline semantic detectors' machinery.

An exemplar set is a folder of text files in the package (``exemplars/<group>/<label>.txt``,
one exemplar a line), written by us, reviewed like code. An :class:`ExemplarIndex` holds the
set's vectors under one embedder and scores any text against each label: the mean similarity
of its ``k`` nearest exemplars of that label. Vectors for the shipped sets are shipped too
(``exemplars/vectors/``), keyed by a digest of the exemplars, so that start-up embeds nothing;
when the exemplars changed since, they are embedded afresh.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import numpy as np

from supportagent.retrieval.dense import Embedder, Vectors

EXEMPLARS_PACKAGE = "supportagent"
EXEMPLARS_DIR = "exemplars"
VECTORS_DIR = "vectors"
#: Nearest exemplars averaged into a label's score: one stray exemplar cannot decide alone.
DEFAULT_K = 2


@dataclass(frozen=True, slots=True)
class ExemplarSet:
    """The exemplars of one group (``safety``, ``triage``), each with its label."""

    group: str
    labels: tuple[str, ...]
    texts: tuple[str, ...]

    @property
    def label_names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.labels))

    @property
    def digest(self) -> str:
        """Changes whenever an exemplar or its label does: what shipped vectors are keyed by."""
        h = hashlib.sha256()
        for label, text in zip(self.labels, self.texts, strict=True):
            h.update(f"{label}\t{text}\n".encode())
        return h.hexdigest()


def parse_exemplars(group: str, files: Mapping[str, str]) -> ExemplarSet:
    """An exemplar set from ``{label: file text}``: one exemplar a line, ``#`` comments."""
    labels: list[str] = []
    texts: list[str] = []
    for label in sorted(files):
        seen: set[str] = set()
        for line in files[label].split("\n"):
            text = " ".join(line.split())
            if not text or text.startswith("#") or text in seen:
                continue
            seen.add(text)
            labels.append(label)
            texts.append(text)
    if not texts:
        raise ValueError(f"exemplar group {group!r} has no exemplars")
    return ExemplarSet(group, tuple(labels), tuple(texts))


def _group_dir(group: str, root: Path | None) -> Traversable:
    if root is not None:
        return root / group
    return resources.files(EXEMPLARS_PACKAGE).joinpath(EXEMPLARS_DIR, group)


def load_exemplars(group: str, root: Path | None = None) -> ExemplarSet:
    """The exemplar set of ``group``: the packaged one, or under ``root`` (for tests)."""
    folder = _group_dir(group, root)
    files = {
        entry.name.removesuffix(".txt"): entry.read_text(encoding="utf-8")
        for entry in folder.iterdir()
        if entry.name.endswith(".txt")
    }
    if not files:
        raise ValueError(f"no exemplar files (*.txt) for group {group!r}")
    return parse_exemplars(group, files)


def vector_file_stem(group: str, model_id: str) -> str:
    """The file name (without suffix) of data shipped for ``group`` under ``model_id``."""
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in model_id)
    return f"{group}--{safe}"


def shipped_file(name: str) -> Traversable:
    """A packaged file beside the exemplar vectors (vectors, and models that read them)."""
    return resources.files(EXEMPLARS_PACKAGE).joinpath(EXEMPLARS_DIR, VECTORS_DIR, name)


def shipped_vectors(exemplars: ExemplarSet, model_id: str) -> Vectors | None:
    """The packaged vectors of ``exemplars`` under ``model_id``, if they are current."""
    folder = resources.files(EXEMPLARS_PACKAGE).joinpath(EXEMPLARS_DIR, VECTORS_DIR)
    name = vector_file_stem(exemplars.group, model_id)
    meta_file, data_file = folder.joinpath(name + ".json"), folder.joinpath(name + ".npy")
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        if meta.get("digest") != exemplars.digest or meta.get("model_id") != model_id:
            return None
        with data_file.open("rb") as handle:
            matrix = np.load(handle, allow_pickle=False)
    except (OSError, ValueError):
        return None
    if matrix.shape[0] != len(exemplars.texts):
        return None
    return np.asarray(matrix, dtype=np.float32)


def write_vectors(exemplars: ExemplarSet, model_id: str, vectors: Vectors, folder: Path) -> Path:
    """Store vectors for shipping (float16 halves the size; cosines move by under 0.001)."""
    folder.mkdir(parents=True, exist_ok=True)
    name = vector_file_stem(exemplars.group, model_id)
    np.save(folder / f"{name}.npy", vectors.astype(np.float16), allow_pickle=False)
    meta = {"group": exemplars.group, "model_id": model_id, "digest": exemplars.digest}
    (folder / f"{name}.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return folder / f"{name}.npy"


class ExemplarIndex:
    """An exemplar set's vectors under one embedder, to score texts against each label."""

    def __init__(self, exemplars: ExemplarSet, embedder: Embedder, *, k: int = DEFAULT_K) -> None:
        self.exemplars = exemplars
        self.embedder = embedder
        self.k = k
        self._lock = threading.Lock()
        self._matrix: Vectors | None = None
        names = exemplars.label_names
        labels = np.asarray(exemplars.labels)
        self._rows = {name: np.flatnonzero(labels == name) for name in names}

    @property
    def model_id(self) -> str:
        return self.embedder.model_id

    def matrix(self) -> Vectors:
        """The exemplars' vectors: shipped when current, else embedded now (once)."""
        if self._matrix is None:
            with self._lock:
                if self._matrix is None:
                    ready = shipped_vectors(self.exemplars, self.model_id)
                    if ready is None:
                        ready = self.embedder.embed(list(self.exemplars.texts))
                    self._matrix = np.ascontiguousarray(ready, dtype=np.float32)
        return self._matrix

    def embed(self, texts: Sequence[str]) -> Vectors:
        return self.embedder.embed(list(texts))

    def similarities(self, vectors: Vectors) -> Vectors:
        """Cosine of each text (row) to each exemplar (column).

        A few sentences against a thousand exemplars is a small product: numpy's own loop
        (einsum) does it in about a millisecond, where a threaded BLAS call can wait ten times
        that for its threads on a busy machine.
        """
        out: Vectors = np.einsum("ij,kj->ik", vectors, self.matrix(), dtype=np.float32)
        return out

    def label_scores(self, similarities: Vectors) -> dict[str, Vectors]:
        """Per label, each text's mean similarity to its ``k`` nearest exemplars of it."""
        out: dict[str, Vectors] = {}
        for name, rows in self._rows.items():
            block = similarities[:, rows]
            k = min(self.k, block.shape[1])
            top = -np.partition(-block, k - 1, axis=1)[:, :k]
            out[name] = top.mean(axis=1).astype(np.float32)
        return out

    def nearest(self, similarities_row: Vectors, label: str) -> tuple[str, float]:
        """The exemplar of ``label`` closest to one text, and its similarity."""
        rows = self._rows[label]
        best = int(rows[int(np.argmax(similarities_row[rows]))])
        return self.exemplars.texts[best], float(similarities_row[best])
