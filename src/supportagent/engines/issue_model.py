"""Issue-tracker triage: a usage question, or a bug report / feature request?

The triage model and the routing rules were written for a product's support inbox; in an issue
tracker, questions mention errors and crashes as often as reports do. This binary logistic
regression gives the probability that an issue is a usage question; the classifier asks it only
about a ticket the triage model called a question, and routes that ticket as not a question when
the probability is below ``route_below``. It never sees a safety risk, an account or money
request, an uncertain ticket or what the rules routed, and cannot turn any of them into
something else.

Its features: the MiniLM vector of the whole text, the prose's words and word pairs hashed
(code blocks, inline code, stack-trace lines and identifiers blanked, as the rules read it), the
first words again on their own (an issue's title), and marks of issue templates ("Describe the
bug", "Expected behavior", a version block, a stack trace, "How do I", "Is it possible").
Trained by ``bench/train_issue_model.py``; the weights and thresholds are data
(``issue_model.npz``), and the file records what it was trained on.

Since round 7 a second logistic regression over the same features reads the *register*: the
probability that the text was written for an issue tracker rather than a support inbox
(``issue_register.npz``, trained on the same rows: the Ticket Tagger issues against our
exemplars and the support sets). Only where it is sure (``register_min``) may the question
model do more: route a question of the triage model's below the looser ``register_route_below``,
and decide a ticket the triage model could not place (no bucket with a majority, its leading
guess not a person) as a question or a report; and turn an issue a bug-report rule routed back
into a question when it asks how to do something and the model gives it ``rule_question_from``.
"""

from __future__ import annotations

import functools
import itertools
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from supportagent.domain import Ticket
from supportagent.engines.triage_model import group_weights, load_linear, save_linear
from supportagent.regexcache import ProgramCache
from supportagent.retrieval.dense import Embedder
from supportagent.textnorm import has_code, prose

_PATTERNS = ProgramCache.for_module(__name__, __file__)  # see regexcache

MODEL_FILE = "issue_model.npz"
REGISTER_FILE = "issue_register.npz"
#: Hashed slots for the prose's words and word pairs, and for the title's words.
WORD_SLOTS = 4096
TITLE_SLOTS = 1024
#: An issue's title is its first words (the sets we learn from join title and body).
TITLE_WORDS = 12
_WORD = _PATTERNS.compile(r"[a-z][a-z0-9']*|\d+")
#: Marks of issue templates and of how a question or a report is put, one feature each.
MARKS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, _PATTERNS.compile(pattern, re.IGNORECASE | re.MULTILINE))
    for name, pattern in (
        ("bug_template", r"describe the bug|steps to reproduce|to reproduce|reproduction steps"),
        (
            "expected_actual",
            r"expected (?:behaviou?r|result|output)|actual (?:behaviou?r|result|output)"
            r"|current behaviou?r|observed behaviou?r|what (?:happened|happens) instead",
        ),
        (
            "feature_template",
            r"is your feature request related|describe the solution|describe alternatives"
            r"|feature request|proposal|motivation",
        ),
        ("environment", r"\b(?:environment|os|version|platform|browser)\s*:|\bv?\d+\.\d+\.\d+\b"),
        (
            "how_do_i",
            r"\bhow (?:do|can|should|would|could) (?:i|we|you|one)\b|\bhow to\b"
            r"|\bwhat is the (?:best|right|correct|recommended|proper) way\b",
        ),
        (
            "is_it_possible",
            r"\bis (?:it|there) (?:possible|a way|any way|an? (?:option|setting|example))\b"
            r"|\bcan (?:i|we|someone|anyone)\b|\bany (?:idea|ideas|help|suggestions?|hints?)\b",
        ),
        (
            "unsure",
            r"\b(?:i'?m|i am|we are) (?:trying|wondering|not sure|confused|new)\b"
            r"|\bam i (?:missing|doing)\b|\bthanks in advance\b",
        ),
        (
            "proposal",
            r"\b(?:it would be (?:nice|great|useful|good)|would be (?:nice|great|useful) to"
            r"|please add|add (?:an? )?(?:option|ability|flag|setting)|support for"
            r"|should (?:be able|support|allow)|allow (?:users|the user|to))\b",
        ),
        (
            "report",
            r"\b(?:crash\w*|fail\w*|broken|regression|does ?n[o']t work|not working"
            r"|instead of|unexpected\w*|wrong|incorrect\w*)\b",
        ),
        ("trace", r"traceback|stack ?trace|exception|\berror\b|^\s*at [\w.$]+\("),
    )
)
MARK_SCALE = 0.5
Vector = npt.NDArray[np.float32]


def _slot(token: str, slots: int) -> int:
    return zlib.crc32(token.encode("utf-8")) % slots


def _hashed(tokens: Sequence[str], slots: int) -> Vector:
    """Counts of ``tokens`` in ``slots`` buckets, square-rooted and scaled to unit length."""
    out = np.zeros(slots, dtype=np.float32)
    for token in tokens:
        out[_slot(token, slots)] += 1.0
    np.sqrt(out, out=out)
    norm = float(np.linalg.norm(out))
    return out / norm if norm else out


def issue_marks(text: str) -> dict[str, float]:
    """The template and phrasing marks of ``text`` (read on its prose, code blanked), plus
    shape: code present, a question in the title, question marks, length."""
    words = prose(text)
    marks = {name: float(bool(p.search(words))) for name, p in MARKS}
    title = " ".join(words.split()[:TITLE_WORDS])
    marks["code"] = float(has_code(text))
    marks["title_question"] = float("?" in title)
    marks["questions"] = min(words.count("?"), 4) / 4
    marks["length"] = min(len(words.split()), 400) / 400
    return marks


def lexical_features(text: str) -> Vector:
    """Hashed words and word pairs of the prose, then of its title, then the marks."""
    words = _WORD.findall(prose(text).casefold())
    grams = words + [f"{a} {b}" for a, b in itertools.pairwise(words)]
    title = words[:TITLE_WORDS]
    title_grams = title + [f"{a} {b}" for a, b in itertools.pairwise(title)]
    marks = np.asarray(list(issue_marks(text).values()), dtype=np.float32) * MARK_SCALE
    return np.concatenate([_hashed(grams, WORD_SLOTS), _hashed(title_grams, TITLE_SLOTS), marks])


def issue_features(ticket: Ticket, embedder: Embedder) -> Vector:
    """The model's input: MiniLM's vector of the text, then :func:`lexical_features`."""
    # The triage model embeds the same text, so the process memo answers this.
    vector = embedder.embed([ticket.text])[0]
    return np.concatenate([vector, lexical_features(ticket.text)]).astype(np.float32)


@dataclass(frozen=True)
class IssueModel:
    """Weights, bias, and the thresholds it acts on (in ``meta``); ``register`` is the
    register model's weights and bias (None: no register, so only ``route_below`` acts)."""

    weights: Vector
    bias: float
    meta: dict[str, Any]
    register: tuple[Vector, float] | None = None

    @property
    def route_below(self) -> float:
        """A question of the triage model's is routed as an issue below this probability."""
        return float(self.meta.get("route_below", 0.0))

    @property
    def register_min(self) -> float:
        """The register probability from which a text counts as clearly issue-tracker."""
        return float(self.meta.get("register_min", 1.0))

    @property
    def register_route_below(self) -> float:
        """In issue-tracker register, a question is routed below this probability."""
        return max(self.route_below, float(self.meta.get("register_route_below", 0.0)))

    @property
    def uncertain_question_from(self) -> float:
        """In issue-tracker register, a ticket the triage model could not place is a question
        from this probability on, and a report below it."""
        return float(self.meta.get("uncertain_question_from", 0.5))

    @property
    def rule_question_from(self) -> float:
        """In issue-tracker register, an issue a bug-report rule routed that asks how to do
        something is a question from this probability on (above 1: never)."""
        return float(self.meta.get("rule_question_from", 1.01))

    def question_probability(self, features: Vector) -> float:
        return _logistic(float(self._checked(features) @ self.weights) + self.bias)

    def register_probability(self, features: Vector) -> float:
        """How sure the register model is that the text was written for an issue tracker
        (0.0 without a register model)."""
        if self.register is None:
            return 0.0
        weights, bias = self.register
        return _logistic(float(self._checked(features) @ weights) + bias)

    def _checked(self, features: Vector) -> Vector:
        if features.shape[0] != self.weights.shape[0]:
            raise ValueError(
                f"{MODEL_FILE} expects {self.weights.shape[0]} features, got {features.shape[0]}"
                "; retrain it with bench/train_issue_model.py"
            )
        return features

    def save(self, path: Path) -> None:
        save_linear(path, self.weights, np.asarray(self.bias, dtype=np.float32), self.meta)
        if self.register is not None:
            weights, bias = self.register
            save_linear(
                path.with_name(REGISTER_FILE), weights, np.asarray(bias, np.float32), self.meta
            )

    @classmethod
    def load(cls, path: Path | None = None) -> IssueModel:
        folder: Any = path.parent if path else resources.files("supportagent.engines")
        weights, bias, meta = load_linear(path or folder.joinpath(MODEL_FILE))
        register = None
        if folder.joinpath(REGISTER_FILE).is_file():
            r_weights, r_bias, _ = load_linear(folder.joinpath(REGISTER_FILE))
            register = (r_weights, float(r_bias))
        return cls(weights, float(bias), meta, register)


def _logistic(z: float) -> float:
    return float(1.0 / (1.0 + np.exp(-z)))


@functools.cache
def default_issue_model() -> IssueModel:
    return IssueModel.load()


def train_binary(
    features: Vector,
    labels: Sequence[bool],
    groups: Sequence[str],
    shares: dict[str, float] | None = None,
    *,
    l2: float = 1e-4,
    epochs: int = 400,
    rate: float = 2.0,
) -> tuple[Vector, float]:
    """Logistic regression (``labels`` true for a question) by full-batch gradient descent with
    momentum; each group carries ``shares[group]`` (default 1) of the loss, whatever its size.
    Deterministic."""
    w = group_weights(groups, shares, np.float32)
    y = np.asarray(labels, dtype=np.float32)
    x = np.asarray(features, dtype=np.float32)
    weights = np.zeros(x.shape[1], dtype=np.float32)
    bias = 0.0
    velocity = np.zeros_like(weights)
    bias_velocity = 0.0
    for _ in range(epochs):
        z = x @ weights + bias
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
        grad = (p - y) * w
        velocity = 0.9 * velocity - rate * (x.T @ grad + l2 * weights)
        bias_velocity = 0.9 * bias_velocity - rate * float(grad.sum())
        weights += velocity
        bias += bias_velocity
    return weights.astype(np.float32), float(bias)


_PATTERNS.save()
