"""The offline classifier's learned part: a linear model over a ticket's meaning and shape.

Rules decide what they are sure of (an injection, an invoice id, a request for a person); every
other ticket is bucketed by a multinomial logistic regression over features any ticket has:
MiniLM vectors of the whole text, of its subject and of its sentences (mean), which rules of
the not-a-question kind matched, marks of shape (code, a stack trace, "steps to reproduce", a
question mark) and of an issue tracker's layout (markdown headings, task lists, version
numbers, file names), and the words and word pairs of the prose and of its opening words,
hashed. The weights are data (``triage_model.npz``), trained by
``bench/train_triage.py`` on our exemplars and the tune halves of public and own sets, each set
weighted alike so that no domain dominates; the file records what it was trained on.

The training loop is here too (plain numpy, a few hundred lines of data at most per set), so
that training and use share one feature function.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from supportagent.domain import Bucket, Ticket
from supportagent.retrieval.dense import Embedder
from supportagent.sentences import ticket_sentences
from supportagent.textnorm import has_code, prose

MODEL_FILE = "triage_model.npz"
#: Bucket order of the model's outputs.
BUCKETS = (Bucket.ANSWERABLE, Bucket.NOT_A_QUESTION, Bucket.NEEDS_HUMAN)
#: Rule reason codes the model reads as features (rules that route; they no longer decide).
RULE_FEATURES = ("bug_report", "feature_request", "feedback")
#: Marks of shape, each one feature (matched or not).
SHAPE_PATTERNS = tuple(
    re.compile(p, re.IGNORECASE | re.MULTILINE)
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
#: Marks of a GitHub-shaped issue (an issue template, a question asked of maintainers, a
#: proposal), read in prose (code and identifiers blanked, so no identifier can set one); each
#: one feature (matched or not).
ISSUE_PATTERNS = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        # A question asked of the maintainers, in words rather than a question mark.
        r"\b(?:how (?:do|can|should|would|could) (?:i|we|you|one)|how to|is (?:it|there) (?:a way"
        r"|possible|any way)|what is the (?:best|right|correct|recommended|proper) way|any (?:idea"
        r"|ideas|suggestions?|hints?|pointers|advice)|can (?:someone|anyone|somebody)|i(?:'m| am)"
        r" (?:trying|not sure|confused|wondering|new to)|i wonder|wondering (?:if|whether|how)"
        r"|not sure (?:how|if|whether|what|why)|(?:need|want|looking for) (?:some )?(?:help"
        r"|advice|guidance)|help me|question)\b",
        # A proposal: what the software should do, not what it does.
        r"\b(?:would be (?:nice|great|useful|helpful|good|cool|awesome)|should (?:be able|allow"
        r"|support|have|provide|offer)|(?:allow|enable)(?:s|ing)? (?:the |users? |us |to )"
        r"|(?:add|adding|introduce) (?:a |an |the )?(?:new |optional )?(?:option|ability|support"
        r"|flag|setting|way|feature|command|parameter)|option to|ability to|(?:nice|good) to have"
        r"|propos\w+|enhancement|improve\w*|instead of|feature)\b",
        # A report of what went wrong and when.
        r"\b(?:unable to|(?:can't|cannot|doesn't|does not|didn't|won't|isn't|fails? to) (?:\w+ )?"
        r"(?:work|load|find|open|start|run|build|compile|install|connect|see|show|display|save)"
        r"|reproduc\w+|after (?:updating|upgrading|the update)|since (?:updating|upgrading"
        r"|version|the update)|throws?|thrown|exit code|undefined|null)\b",
    )
)
#: Marks of an issue's layout, read in the raw text: a markdown heading, a task list, a
#: version number, a file name with a source extension.
LAYOUT_PATTERNS = tuple(
    re.compile(p, re.IGNORECASE | re.MULTILINE)
    for p in (
        r"(?:^|\s)#{2,4} \w",
        r"(?:^|\s)[-*] \[[ x]\]",
        r"\b\d+\.\d+\.\d+\b|\bv\d+\.\d+\b",
        r"\b[\w/.-]+\.(?:py|js|ts|jsx|tsx|java|kt|cpp|cc|c|h|go|rs|rb|php|cs|swift|json|ya?ml"
        r"|xml|gradle|lock|toml|sh)\b",
    )
)
#: Hand features are scaled down so that they nudge rather than dominate unit vectors.
SHAPE_SCALE = 0.5
#: Words and word pairs of the prose, hashed into this many slots (one unit vector for the whole
#: text, one for its opening words): MiniLM's vectors blur "how do I" against "fails when I",
#: which is what tells a question from a report in an issue tracker.
WORD_SLOTS = 1024
#: The opening words (an issue's title) get their own vector.
HEAD_WORDS = 12
_WORD = re.compile(r"[a-z']+|\?")
Vector = npt.NDArray[np.float32]


def ticket_features(ticket: Ticket, rule_codes: Sequence[str], embedder: Embedder) -> Vector:
    """The model's input for ``ticket``; ``rule_codes`` are the routing rules that matched."""
    return np.concatenate(
        [
            meaning_features(ticket, embedder),
            shape_features(ticket, rule_codes),
            word_features(ticket.text),
            word_features(ticket.subject or ticket.text, HEAD_WORDS),
        ]
    )


def meaning_features(ticket: Ticket, embedder: Embedder) -> Vector:
    """MiniLM vectors of the whole text, of its sentences (mean) and of its subject."""
    sentences = ticket_sentences(ticket)
    subject = ticket.subject.strip() or ticket.text[:200]
    # One call: the safety gate embedded these sentences already, and the search embeds the
    # ticket text next, so the memo answers most of this.
    vectors = embedder.embed([ticket.text, subject, *sentences])
    text, head = vectors[0], vectors[1]
    mean = vectors[2:].mean(axis=0) if sentences else np.zeros_like(text)
    return np.concatenate([text, mean, head]).astype(np.float32)


def shape_features(ticket: Ticket, rule_codes: Sequence[str]) -> Vector:
    """Which routing rules matched, and the marks of shape, scaled to nudge unit vectors."""
    rules = [float(code in rule_codes) for code in RULE_FEATURES]
    body = ticket.text
    shape = [float(bool(p.search(body))) for p in SHAPE_PATTERNS]
    shape += [float(has_code(body)), min(len(body), 3000) / 3000, min(body.count("?"), 5) / 5]
    words = prose(body)
    shape += [float(bool(p.search(words))) for p in ISSUE_PATTERNS]
    shape += [float(bool(p.search(body))) for p in LAYOUT_PATTERNS]
    shape += [min(body.count("http"), 4) / 4, float("?" in body[:150])]
    return np.asarray(rules + shape, dtype=np.float32) * SHAPE_SCALE


def word_features(text: str, first: int | None = None) -> Vector:
    """The prose's words and adjacent word pairs (the ``first`` words only, when given), hashed
    into :data:`WORD_SLOTS` slots, present or not, as a unit vector. Code and identifiers are
    blanked first, so no identifier sets a slot."""
    words = _WORD.findall(prose(text).lower())
    if first is not None:
        words = words[:first]
    vector = np.zeros(WORD_SLOTS, dtype=np.float32)
    for token in {*words, *(f"{a}_{b}" for a, b in itertools.pairwise(words))}:
        vector[zlib.crc32(token.encode("utf-8")) % WORD_SLOTS] = 1.0
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


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
        meta = json.dumps(self.meta, sort_keys=True)
        np.savez(path, weights=self.weights, bias=self.bias, meta=np.asarray(meta))

    @classmethod
    def load(cls, path: Path | None = None) -> TriageModel:
        source: Any = path or resources.files("supportagent.engines").joinpath(MODEL_FILE)
        with source.open("rb") as handle, np.load(handle, allow_pickle=False) as data:
            weights = np.asarray(data["weights"], dtype=np.float32)
            bias = np.asarray(data["bias"], dtype=np.float32)
            meta = json.loads(str(data["meta"]))
        return cls(weights, bias, meta)


@functools.cache
def default_model() -> TriageModel:
    return TriageModel.load()


def train(
    features: Vector,
    labels: Sequence[Bucket],
    groups: Sequence[str],
    *,
    l2: float = 1e-3,
    epochs: int = 1200,
    rate: float = 4.0,
    group_weights: Mapping[str, float] | None = None,
) -> tuple[Vector, Vector]:
    """Multinomial logistic regression by full-batch gradient descent; every group (a data
    set) carries the same total weight whatever its size, times its ``group_weights`` entry
    (1 when absent). Deterministic."""
    d = features.shape[1]
    y = np.asarray([BUCKETS.index(b) for b in labels])
    onehot = np.eye(len(BUCKETS), dtype=np.float64)[y]
    sizes: dict[str, int] = {}
    for g in groups:
        sizes[g] = sizes.get(g, 0) + 1
    extra = group_weights or {}
    w = np.asarray([extra.get(g, 1.0) / sizes[g] for g in groups], dtype=np.float64)
    w = (w / w.sum())[:, None]
    x = features.astype(np.float64)
    weights = np.zeros((d, len(BUCKETS)))
    bias = np.zeros(len(BUCKETS))
    for _ in range(epochs):
        z = x @ weights + bias
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        grad = (p - onehot) * w
        weights -= rate * (x.T @ grad + l2 * weights)
        bias -= rate * grad.sum(axis=0)
    return weights.astype(np.float32), bias.astype(np.float32)
