"""The ``history`` signal: how customers worded an article's topic, learnt from resolved tickets.

A resolved ticket (or an approved answer) that links to an article is evidence that its
question, in the customer's own words, is answered there. Articles are written in the
product's words; customers paraphrase. So each linked question's embedding is attached to the
passage of the linked article it is closest to. The retriever scores a passage by how much
the query's best cosine with the questions attached to it *exceeds* its cosine with the
passage itself (0 for a passage no question links to, or where the passage is closer): a raw
"has history" score would lift every article that happens to have tickets. With the history
weight equal to the dense weight this is the same as scoring a passage by the better of its
own vector and its questions' vectors.

A query must never be matched by its own ticket: ``scores`` takes the ids of resolved
documents to leave out, and the evaluation passes the ticket a query came from.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from supportagent.domain import DocKind, Document

#: Weight of the history signal in the default fusion (dense is 3 there), chosen on the
#: Brightwrench set's tune half only (docs/retrieval.md reports the test half and the demo set).
HISTORY_WEIGHT = 1.0


@dataclass(frozen=True, slots=True)
class HistoryIndex:
    """Question vectors, the passage position each one is attached to, and its source id."""

    vectors: npt.NDArray[np.float32]
    positions: npt.NDArray[np.int64]
    sources: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.sources)

    def scores(
        self, query: npt.NDArray[np.float32], passages: int, exclude: Collection[str] = ()
    ) -> npt.NDArray[np.float32]:
        """Per passage, the best cosine of ``query`` with a question attached to it."""
        out = np.zeros(passages, dtype=np.float32)
        if not len(self.sources):
            return out
        sims = np.clip(self.vectors @ query, 0.0, None).astype(np.float32)
        if exclude:
            keep = np.array([s not in exclude for s in self.sources], dtype=np.bool_)
            sims, positions = sims[keep], self.positions[keep]
        else:
            positions = self.positions
        np.maximum.at(out, positions, sims)
        return out


def linked_questions(documents: Sequence[Document]) -> list[tuple[str, str, tuple[str, ...]]]:
    """``(source id, question, linked document ids)`` of every resolved document that links
    somewhere and has a question."""
    out = []
    for doc in documents:
        question = doc.meta.get("question")
        linked = doc.kind is DocKind.RESOLVED and doc.linked_docs
        if linked and isinstance(question, str) and question.strip():
            out.append((doc.id, question, doc.linked_docs))
    return out


def build_history(
    questions: Sequence[tuple[str, str, tuple[str, ...]]],
    question_vectors: npt.NDArray[np.float32],
    passages_of: Mapping[str, Sequence[int]],
    dense: npt.NDArray[np.float32],
) -> HistoryIndex:
    """Attach each question to the closest passage of each knowledge-base document it links to
    (``passages_of``: document id to its passage positions; unknown ids are skipped)."""
    rows: list[int] = []
    positions: list[int] = []
    sources: list[str] = []
    for row, (source, _, linked) in enumerate(questions):
        for doc_id in linked:
            candidates = list(passages_of.get(doc_id, ()))
            if not candidates:
                continue
            sims = dense[candidates] @ question_vectors[row]
            positions.append(candidates[int(np.argmax(sims))])
            rows.append(row)
            sources.append(source)
    dim = question_vectors.shape[1] if question_vectors.ndim == 2 else dense.shape[1]
    vectors = (
        np.asarray(question_vectors[rows], dtype=np.float32)
        if rows
        else np.zeros((0, dim), dtype=np.float32)
    )
    return HistoryIndex(vectors, np.asarray(positions, dtype=np.int64), tuple(sources))
