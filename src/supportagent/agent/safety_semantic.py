"""The safety gate's semantic detector: each sentence of a ticket against exemplars per risk.

Rules catch the words we thought of; this catches the meaning. Every sentence of the ticket is
embedded offline (MiniLM for English; multilingual-e5 for other languages, when installed)
and compared with the exemplar sentences we wrote for each category (``exemplars/safety/``)
and with harmless ones: hard negatives (``benign.txt``: "this bug is killing me", questions
about security features) and the classifier's exemplars of ordinary tickets. A category fires
when a sentence is close enough to its exemplars and closer to them than to any harmless one,
by thresholds calibrated on data (``safety_semantic.toml``, set by
``bench/safety_calibration.py``).
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources

import numpy as np

from supportagent.domain import Ticket
from supportagent.language import language_of
from supportagent.retrieval.dense import OnnxMiniLM, Vectors
from supportagent.retrieval.exemplars import ExemplarIndex, load_exemplars
from supportagent.retrieval.multilingual import MultilingualE5, multilingual_available
from supportagent.sentences import ticket_sentences

#: The categories the detector knows, most severe first: when two fire, the first decides.
CATEGORIES = ("self_harm_risk", "security_incident", "payment_fraud", "legal_threat")
BENIGN = "benign"
THRESHOLDS_FILE = "safety_semantic.toml"
ENGLISH = "en"

#: ``language_of(text)`` -> an ISO 639-1 code, or None when it cannot tell.
LanguageOf = Callable[[str], str | None]


@dataclass(frozen=True, slots=True)
class Threshold:
    """A category fires when a sentence's similarity reaches ``similarity`` and beats the
    nearest hard negatives by at least ``margin``."""

    similarity: float
    margin: float


@dataclass(frozen=True, slots=True)
class Finding:
    """The sentence of a ticket closest to one category, and how close."""

    category: str
    similarity: float
    margin: float
    sentence: str
    exemplar: str
    model: str
    fired: bool


@dataclass(frozen=True, slots=True)
class SentenceScores:
    """A ticket's sentences scored under one embedder: per category, one value a sentence."""

    model: str
    index: ExemplarIndex
    units: list[str]
    sims: Vectors
    similarity: dict[str, Vectors]
    margin: dict[str, Vectors]

    def fires(self, category: str, limit: Threshold) -> bool:
        if category not in self.similarity:
            return False
        passes = (self.similarity[category] >= limit.similarity) & (
            self.margin[category] >= limit.margin
        )
        return bool(passes.any())


def load_thresholds(text: str | None = None) -> dict[str, dict[str, Threshold]]:
    """Per embedder (``minilm``, ``e5``), per category, the calibrated thresholds."""
    if text is None:
        text = (
            resources.files("supportagent.agent")
            .joinpath(THRESHOLDS_FILE)
            .read_text(encoding="utf-8")
        )
    data = tomllib.loads(text)
    out: dict[str, dict[str, Threshold]] = {}
    for model, table in data.items():
        if not isinstance(table, dict):
            raise ValueError(f"{THRESHOLDS_FILE}: [{model}] must be a table")
        out[model] = {}
        for category, values in table.items():
            if category not in CATEGORIES:
                raise ValueError(f"{THRESHOLDS_FILE}: unknown category {category!r}")
            out[model][category] = Threshold(float(values["similarity"]), float(values["margin"]))
    return out


@functools.cache
def _default_thresholds() -> dict[str, dict[str, Threshold]]:
    return load_thresholds()


class SemanticSafety:
    """Scores a ticket's sentences against the safety exemplars with the right embedder."""

    def __init__(
        self,
        english: ExemplarIndex,
        multilingual: ExemplarIndex | None = None,
        *,
        negatives: Mapping[str, ExemplarIndex] | None = None,
        language_of: LanguageOf | None = None,
        thresholds: Mapping[str, Mapping[str, Threshold]] | None = None,
    ) -> None:
        self.indexes = {"minilm": english, **({"e5": multilingual} if multilingual else {})}
        #: Per embedder, more harmless text (the classifier's exemplars: questions, bug
        #: reports, billing requests) that a risky sentence must be further from.
        self.negatives = dict(negatives or {})
        self.language_of = language_of
        self.thresholds = thresholds if thresholds is not None else _default_thresholds()

    def model_for(self, ticket: Ticket) -> str:
        """``e5`` for a ticket not in English (when it is installed), else ``minilm``."""
        if "e5" not in self.indexes or self.language_of is None:
            return "minilm"
        language = self.language_of(ticket.text)
        return "minilm" if language in (None, ENGLISH) else "e5"

    def scores(self, ticket: Ticket, sentences: Sequence[str] | None = None) -> SentenceScores:
        """Every sentence's similarity to each category and its margin over the negatives."""
        units = list(sentences) if sentences is not None else ticket_sentences(ticket)
        model = self.model_for(ticket)
        index = self.indexes[model]
        if not units:
            return SentenceScores(model, index, [], np.zeros((0, 0), np.float32), {}, {})
        vectors = index.embed(units)
        sims = index.similarities(vectors)
        by_label = index.label_scores(sims)
        benign = by_label[BENIGN]
        other = self.negatives.get(model)
        if other is not None:
            harmless = other.label_scores(other.similarities(vectors)).values()
            benign = np.maximum.reduce([benign, *harmless])
        similarity = {c: by_label[c] for c in CATEGORIES if c in by_label}
        margin = {c: v - benign for c, v in similarity.items()}
        return SentenceScores(model, index, units, sims, similarity, margin)

    def findings(self, ticket: Ticket, sentences: Sequence[str] | None = None) -> list[Finding]:
        """For each category, the closest sentence of ``ticket``, most severe category first."""
        scored = self.scores(ticket, sentences)
        limits = self.thresholds.get(scored.model, {})
        out = []
        for category in CATEGORIES:
            if category not in scored.similarity or category not in limits:
                continue
            similarity, margin = scored.similarity[category], scored.margin[category]
            limit = limits[category]
            passes = (similarity >= limit.similarity) & (margin >= limit.margin)
            # The deciding sentence: the firing one that is closest, else the closest overall.
            pool = np.flatnonzero(passes) if passes.any() else np.arange(len(scored.units))
            best = int(pool[int(np.argmax(similarity[pool]))])
            exemplar, _ = scored.index.nearest(scored.sims[best], category)
            out.append(
                Finding(
                    category,
                    round(float(similarity[best]), 4),
                    round(float(margin[best]), 4),
                    scored.units[best],
                    exemplar,
                    scored.index.model_id,
                    bool(passes.any()),
                )
            )
        return out

    def detect(self, ticket: Ticket) -> Finding | None:
        """The most severe category that fires, or None."""
        return next((f for f in self.findings(ticket) if f.fired), None)


@functools.cache
def default_semantic_safety() -> SemanticSafety:
    """MiniLM for English, multilingual-e5 for the rest when its package is installed; the
    classifier's exemplars as more harmless examples. Built once per process."""
    safety, triage = load_exemplars("safety"), load_exemplars("triage")
    minilm = OnnxMiniLM()
    negatives = {"minilm": ExemplarIndex(triage, minilm)}
    multilingual = None
    if multilingual_available():
        e5 = MultilingualE5()
        multilingual = ExemplarIndex(safety, e5)
        negatives["e5"] = ExemplarIndex(triage, e5)
    return SemanticSafety(
        ExemplarIndex(safety, minilm), multilingual, negatives=negatives, language_of=language_of
    )
