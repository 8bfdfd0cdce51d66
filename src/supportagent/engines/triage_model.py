"""The offline classifier's learned part: a linear model over a ticket's meaning and shape.

Rules decide what they are sure of (an injection, an invoice id, a request for a person); every
other ticket is bucketed by a multinomial logistic regression over features any ticket has:
MiniLM vectors of the whole text, of its subject and of its sentences (mean), which rules of
the not-a-question kind matched, and a few marks of shape (code, a stack trace, "steps to
reproduce", a question mark). The weights are data (``triage_model.npz``), trained by
``bench/train_triage.py`` on our exemplars and the tune halves of public and own sets, each set
weighted alike so that no domain dominates; the file records what it was trained on.

The training loop is here too (plain numpy, a few hundred lines of data at most per set), so
that training and use share one feature function.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar, Self

import numpy as np
import numpy.typing as npt

from supportagent.domain import Bucket, Ticket
from supportagent.regexcache import ProgramCache
from supportagent.retrieval.dense import Embedder
from supportagent.retrieval.exemplars import shipped_file, vector_file_stem
from supportagent.sentences import ticket_sentences
from supportagent.textnorm import has_code

_PATTERNS = ProgramCache.for_module(__name__, __file__)  # see regexcache

MODEL_FILE = "triage_model.npz"
#: Bucket order of the model's outputs.
BUCKETS = (Bucket.ANSWERABLE, Bucket.NOT_A_QUESTION, Bucket.NEEDS_HUMAN)
#: Rule reason codes the model reads as features (rules that route; they no longer decide).
RULE_FEATURES = ("bug_report", "feature_request", "feedback")
#: Marks of shape, each one feature (matched or not).
SHAPE_PATTERNS = tuple(
    _PATTERNS.compile(p, re.IGNORECASE | re.MULTILINE)
    for p in (
        r"steps to reproduce|to reproduce|repro steps|how to reproduce",
        r"expected (?:behaviou?r|result|output)|actual (?:behaviou?r|result)|what happened",
        r"traceback|stack ?trace|exception|error:|\berror\b",
        r"\b(?:feature|enhancement|proposal|suggest\w*|would be (?:nice|great|useful)|support for"
        r"|add (?:an? )?(?:option|ability|support))\b",
        r"^\s*(?:how|what|why|is|can|could|does|do|where|when|which)\b",
        r"\?\s*$",
        r"\b(?:version|v\d+\.\d+|python \d|node \d|os:|environment)\b",
        r"\b(?:crash\w*|fail\w*|broken|bug|wrong|incorrect|doesn.t work|not working)\b",
    )
)
#: Hand features are scaled down so that they nudge rather than dominate unit vectors.
SHAPE_SCALE = 0.5
Vector = npt.NDArray[np.float32]


def ticket_features(ticket: Ticket, rule_codes: Sequence[str], embedder: Embedder) -> Vector:
    """The model's input for ``ticket``; ``rule_codes`` are the routing rules that matched."""
    sentences = ticket_sentences(ticket)
    subject = ticket.subject.strip() or ticket.text[:200]
    # One call: the safety gate embedded these sentences already, and the search embeds the
    # ticket text next, so the memo answers most of this.
    vectors = embedder.embed([ticket.text, subject, *sentences])
    text, head = vectors[0], vectors[1]
    mean = vectors[2:].mean(axis=0) if sentences else np.zeros_like(text)
    rules = np.asarray([float(code in rule_codes) for code in RULE_FEATURES], dtype=np.float32)
    body = ticket.text
    shape = [float(bool(p.search(body))) for p in SHAPE_PATTERNS]
    shape += [float(has_code(body)), min(len(body), 3000) / 3000, min(body.count("?"), 5) / 5]
    extra = np.concatenate([rules, np.asarray(shape, dtype=np.float32)]) * SHAPE_SCALE
    return np.concatenate([text, mean, head, extra]).astype(np.float32)


@dataclass(frozen=True)
class TriageModel:
    """Weights (features x buckets), biases, and what the model was trained on."""

    weights: Vector
    bias: Vector
    meta: dict[str, Any]

    @property
    def answerable_shift(self) -> float:
        """Added to the answerable logit: the training sets hold far more account and money
        requests than a product's inbox does once the rules have taken theirs (set on the
        tune halves by bench/train_triage.py)."""
        return float(self.meta.get("answerable_shift", 0.0))

    @property
    def answerable_min(self) -> float:
        """Below this probability no bucket is decided (a ticket is not positively a question,
        nor clearly a route or an escalation): ``uncertain``."""
        return float(self.meta.get("answerable_min", 0.5))

    def probabilities(self, features: Vector) -> dict[Bucket, float]:
        if features.shape[0] != self.weights.shape[0]:
            raise ValueError(
                f"{MODEL_FILE} expects {self.weights.shape[0]} features, got {features.shape[0]}"
                "; retrain it with bench/train_triage.py"
            )
        z = features @ self.weights + self.bias
        z[0] += self.answerable_shift
        p = np.exp(z - z.max())
        p /= p.sum()
        return {bucket: float(v) for bucket, v in zip(BUCKETS, p, strict=True)}

    def save(self, path: Path) -> None:
        save_linear(path, self.weights, self.bias, self.meta)

    @classmethod
    def load(cls, path: Path | None = None) -> TriageModel:
        source: Any = path or resources.files("supportagent.engines").joinpath(MODEL_FILE)
        return cls(*load_linear(source))


def save_linear(path: Path, weights: Vector, bias: Vector, meta: dict[str, Any]) -> None:
    """A linear model's weights, biases and JSON metadata in one ``.npz`` file."""
    text = json.dumps(meta, sort_keys=True)
    np.savez(path, weights=weights, bias=bias, meta=np.asarray(text))


def load_linear(source: Any) -> tuple[Vector, Vector, dict[str, Any]]:
    """What :func:`save_linear` wrote; ``source`` is a path or a package resource."""
    with source.open("rb") as handle, np.load(handle, allow_pickle=False) as data:
        weights = np.asarray(data["weights"], dtype=np.float32)
        bias = np.asarray(data["bias"], dtype=np.float32)
        meta = json.loads(str(data["meta"]))
    return weights, bias, meta


def linear_model_file(group: str, model_id: str) -> str:
    """The file name of the ``group`` model (e.g. ``risk_model``) that reads ``model_id``'s
    vectors; it ships beside the exemplar vectors."""
    return vector_file_stem(group, model_id) + ".npz"


@dataclass(frozen=True)
class SentenceModel:
    """A multinomial linear model over one embedder's sentence vectors: weights (dimensions x
    classes), biases, and metadata naming the embedder, the classes and what it was trained
    on. A subclass names its file group and the script that trains it; the file ships beside
    the exemplar vectors as ``<GROUP>--<embedder>.npz``."""

    GROUP: ClassVar[str]
    TRAINER: ClassVar[str]

    weights: Vector
    bias: Vector
    meta: dict[str, Any]

    @property
    def classes(self) -> tuple[str, ...]:
        return tuple(self.meta["classes"])

    @property
    def model_id(self) -> str:
        """The embedder whose vectors the model reads."""
        return str(self.meta["embedder"])

    def probabilities(self, vectors: Vector) -> dict[str, Vector]:
        """Per class, each vector's (row's) probability."""
        if vectors.shape[1] != self.weights.shape[0]:
            raise ValueError(
                f"the {self.GROUP.replace('_', ' ')} for {self.model_id} reads "
                f"{self.weights.shape[0]} dimensions, got {vectors.shape[1]}; retrain it with "
                f"{self.TRAINER}"
            )
        z = vectors.astype(np.float32) @ self.weights + self.bias
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        return {c: p[:, i] for i, c in enumerate(self.classes)}

    def save(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / linear_model_file(self.GROUP, self.model_id)
        save_linear(path, self.weights, self.bias, self.meta)
        return path

    @classmethod
    def load(cls, model_id: str, folder: Path | None = None) -> Self | None:
        """The shipped model for ``model_id`` (or the one in ``folder``); None when there is
        none. A file trained on another embedder's vectors is an error, not a fallback."""
        name = linear_model_file(cls.GROUP, model_id)
        source: Any = folder / name if folder is not None else shipped_file(name)
        if not source.is_file():
            return None
        model = cls(*load_linear(source))
        if model.model_id != model_id:
            raise ValueError(f"{name} was trained on {model.model_id}, not {model_id}")
        return model


@functools.cache
def default_model() -> TriageModel:
    return TriageModel.load()


def group_weights(
    groups: Sequence[str], shares: dict[str, float] | None, dtype: npt.DTypeLike
) -> npt.NDArray[Any]:
    """Each row's weight in a loss where every group (a data set) carries ``shares[group]``
    (default 1) of the total, whatever its size; the weights sum to 1."""
    sizes: dict[str, int] = {}
    for g in groups:
        sizes[g] = sizes.get(g, 0) + 1
    share = shares or {}
    w = np.asarray([share.get(g, 1.0) / sizes[g] for g in groups], dtype=dtype)
    w /= w.sum()
    return w


def train(
    features: Vector,
    labels: Sequence[Hashable],
    groups: Sequence[str],
    *,
    classes: Sequence[Hashable] = BUCKETS,
    group_share: dict[str, float] | None = None,
    l2: float = 1e-3,
    epochs: int = 1200,
    rate: float = 4.0,
) -> tuple[Vector, Vector]:
    """Multinomial logistic regression by full-batch gradient descent over ``classes`` (the
    triage buckets unless told); every group (a data set) carries the same total weight,
    whatever its size, or the share ``group_share`` gives it. Deterministic."""
    d = features.shape[1]
    order = {c: i for i, c in enumerate(classes)}
    y = np.asarray([order[b] for b in labels])
    onehot = np.eye(len(classes), dtype=np.float64)[y]
    w = group_weights(groups, group_share, np.float64)[:, None]
    x = features.astype(np.float64)
    weights = np.zeros((d, len(classes)))
    bias = np.zeros(len(classes))
    for _ in range(epochs):
        z = x @ weights + bias
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        grad = (p - onehot) * w
        weights -= rate * (x.T @ grad + l2 * weights)
        bias -= rate * grad.sum(axis=0)
    return weights.astype(np.float32), bias.astype(np.float32)


_PATTERNS.save()
