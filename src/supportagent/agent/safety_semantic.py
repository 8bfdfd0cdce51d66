"""The safety gate's semantic detector: each sentence of a ticket against exemplars per risk.

Rules catch the words we thought of; this catches the meaning. Every sentence of the ticket is
embedded offline (MiniLM for English; multilingual-e5 for other languages, when installed)
and compared with the exemplar sentences we wrote for each category (``exemplars/safety/``)
and with harmless ones: hard negatives (``benign.txt``: "this bug is killing me", questions
about security features) and the classifier's exemplars of ordinary tickets. A category fires
when a sentence is close enough to its exemplars and closer to them than to any harmless one,
by thresholds calibrated on data (``safety_semantic.toml``, set by
``bench/safety_calibration.py``). Beside the exemplars, a learned model per embedder
(``safety_model``) gives each sentence a probability per category; a category also fires when
that probability reaches its calibrated threshold, so a risk worded unlike any exemplar can
still be caught.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np
import numpy.typing as npt

from supportagent import tomlcache
from supportagent.agent.safety_model import RiskModel, shipped_risk_model
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
#: The table of ``THRESHOLDS_FILE`` that holds the near share, beside the embedders' tables.
NEAR_TABLE = "near"
ENGLISH = "en"

#: Per sentence, whether something fires.
Mask = npt.NDArray[np.bool_]

# A sentence that supposes the event instead of reporting it: "Hypothetically, if my phone got
# stolen, ...", "If my password ever leaked, ...", "What would happen if someone ...". Plain
# "if" is not enough: "if you don't refund me I will sue" and "if someone has my password,
# lock the account" are reports and threats, not suppositions. The rules read it too.
SUPPOSITION = re.compile(
    r"\b(?:hypothetical(?:ly)?|what\s+(?:if|happens\s+if|would\s+happen\s+if)|in\s+case"
    r"|supposing|say\s+(?:someone|somebody)|if\b[^.!?\n]*?\b(?:ever|were\s+to)"
    # the same in the other languages we read (round 11): "se alguém usar um cartão roubado"
    r"|si\s+alguien|se\s+algu[eé]m|si\s+quelqu'un|wenn\s+jemand|falls\s+jemand|se\s+qualcuno"
    r"|als\s+iemand|en\s+caso\s+de|em\s+caso\s+de|en\s+cas\s+de|im\s+falle?|nel\s+caso"
    r"|in\s+het\s+geval|hipot[eé]tic\w*|hypoth[eé]tique\w*|hypothetisch\w*|ipotetic\w*)\b",
    re.IGNORECASE,
)
#: Categories a supposing sentence cannot fire ("what if my phone is stolen?"); never
#: self-harm ("what if I just disappeared") nor legal ("if you don't refund me I'll sue").
SUPPOSABLE = frozenset({"security_incident", "payment_fraud"})
#: ``language_of(text)`` -> an ISO 639-1 code, or None when it cannot tell.
LanguageOf = Callable[[str], str | None]


@dataclass(frozen=True, slots=True)
class Threshold:
    """A category fires when a sentence's similarity reaches ``similarity`` and beats the
    nearest hard negatives by at least ``margin``, or when the learned model gives it at least
    ``probability`` (None: the model does not decide)."""

    similarity: float
    margin: float
    probability: float | None = None
    #: The model fires only on a sentence whose margin is at least this (None: any margin):
    #: a sentence far closer to a harmless example than to any exemplar of the category
    #: ("I'd rather talk this through with a person") is not that risk (round 7).
    model_margin: float | None = None


#: A sentence the learned model gives at least this share of a category's threshold, and that
#: fires nothing, is *near* the risk: the classifier then may not answer the ticket (round 7).
DEFAULT_NEAR_SHARE = 0.9


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
    #: The learned model's probability of the category for ``sentence`` (None without one).
    probability: float | None = None
    #: What fired: ``exemplars``, ``model``, ``exemplars and model``, or "" when nothing did.
    fired_by: str = ""
    #: Nothing fired, but the model came within the near share of its threshold on
    #: ``sentence`` (which is then the sentence it gave the most).
    near: bool = False


@dataclass(frozen=True, slots=True)
class SentenceScores:
    """A ticket's sentences scored under one embedder: per category, one value a sentence."""

    model: str
    index: ExemplarIndex
    units: list[str]
    sims: Vectors
    similarity: dict[str, Vectors]
    margin: dict[str, Vectors]
    #: Per category, the learned model's probability a sentence (empty without a model).
    probability: dict[str, Vectors] = dataclasses.field(default_factory=dict)

    def _may_fire(self, category: str) -> Mask:
        """Per sentence, whether it may fire ``category`` at all: a sentence that supposes
        the event may not fire a ``SUPPOSABLE`` one."""
        if category not in SUPPOSABLE:
            return np.ones(len(self.units), dtype=bool)
        return np.asarray([SUPPOSITION.search(u) is None for u in self.units], dtype=bool)

    def by_exemplars(self, category: str, limit: Threshold) -> Mask:
        """Per sentence, whether the nearest exemplars fire ``category``."""
        if category not in self.similarity:
            return np.zeros(len(self.units), dtype=bool)
        passes: Mask = (
            (self.similarity[category] >= limit.similarity)
            & (self.margin[category] >= limit.margin)
            & self._may_fire(category)
        )
        return passes

    def by_model(self, category: str, limit: Threshold, share: float = 1.0) -> Mask:
        """Per sentence, whether the learned model fires ``category`` (reaches ``share`` of
        its threshold: below 1, whether the sentence is near it)."""
        if limit.probability is None or category not in self.probability:
            return np.zeros(len(self.units), dtype=bool)
        passes: Mask = (self.probability[category] >= share * limit.probability) & self._may_fire(
            category
        )
        if limit.model_margin is not None and category in self.margin:
            passes &= self.margin[category] >= limit.model_margin
        return passes

    def fires(self, category: str, limit: Threshold) -> bool:
        return bool(
            self.by_exemplars(category, limit).any() or self.by_model(category, limit).any()
        )


def load_thresholds(text: str | None = None) -> dict[str, dict[str, Threshold]]:
    """Per embedder (``minilm``, ``e5``), per category, the calibrated thresholds."""
    if text is None:
        text = (
            resources.files("supportagent.agent")
            .joinpath(THRESHOLDS_FILE)
            .read_text(encoding="utf-8")
        )
    data = tomlcache.loads(text, THRESHOLDS_FILE)  # tomllib.loads, kept between processes
    out: dict[str, dict[str, Threshold]] = {}
    for model, table in data.items():
        if model == NEAR_TABLE:
            continue
        if not isinstance(table, dict):
            raise ValueError(f"{THRESHOLDS_FILE}: [{model}] must be a table")
        out[model] = {}
        for category, values in table.items():
            if category not in CATEGORIES:
                raise ValueError(f"{THRESHOLDS_FILE}: unknown category {category!r}")
            probability = values.get("probability")
            model_margin = values.get("model_margin")
            out[model][category] = Threshold(
                float(values["similarity"]),
                float(values["margin"]),
                None if probability is None else float(probability),
                None if model_margin is None else float(model_margin),
            )
    return out


def _near_table(text: str | None) -> Mapping[str, Any]:
    if text is None:
        text = (
            resources.files("supportagent.agent")
            .joinpath(THRESHOLDS_FILE)
            .read_text(encoding="utf-8")
        )
    table: Mapping[str, Any] = tomlcache.loads(text, THRESHOLDS_FILE).get(NEAR_TABLE, {})
    return table


def load_near_share(text: str | None = None) -> float:
    """The near share of ``safety_semantic.toml`` (``[near] share``), or the default."""
    return float(_near_table(text).get("share", DEFAULT_NEAR_SHARE))


def load_near_shares(text: str | None = None) -> dict[str, float]:
    """The near share per category: ``[near] share``, unless the table names the category
    (``self_harm_risk = 0.6``: a lower share, so a wider band, for the gravest one)."""
    table = _near_table(text)
    default = float(table.get("share", DEFAULT_NEAR_SHARE))
    unknown = sorted(set(table) - {"share", *CATEGORIES})
    if unknown:
        raise ValueError(f"{THRESHOLDS_FILE} [{NEAR_TABLE}]: unknown keys {', '.join(unknown)}")
    return {category: float(table.get(category, default)) for category in CATEGORIES}


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
        models: Mapping[str, RiskModel] | None = None,
        near_share: float | Mapping[str, float] | None = None,
    ) -> None:
        self.indexes = {"minilm": english, **({"e5": multilingual} if multilingual else {})}
        #: Per embedder, more harmless text (the classifier's exemplars: questions, bug
        #: reports, billing requests) that a risky sentence must be further from.
        self.negatives = dict(negatives or {})
        self.language_of = language_of
        self.thresholds = thresholds if thresholds is not None else _default_thresholds()
        #: Per category, a sentence at this share of a model threshold is near the risk (1.0:
        #: never near).
        if near_share is None:
            near_share = load_near_shares() if thresholds is None else 1.0
        if isinstance(near_share, Mapping):
            self.near_shares = {c: float(near_share.get(c, 1.0)) for c in CATEGORIES}
        else:
            self.near_shares = dict.fromkeys(CATEGORIES, float(near_share))
        #: Per embedder, the learned model over sentence vectors (none: exemplars alone).
        self.models = dict(models or {})

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
        return self.scores_of(model, units, index.embed(units))

    def scores_of(self, model: str, units: list[str], vectors: Vectors) -> SentenceScores:
        """:meth:`scores` for sentences already embedded under ``model``."""
        index = self.indexes[model]
        sims = index.similarities(vectors)
        by_label = index.label_scores(sims)
        benign = by_label[BENIGN]
        other = self.negatives.get(model)
        if other is not None:
            harmless = other.label_scores(other.similarities(vectors)).values()
            benign = np.maximum.reduce([benign, *harmless])
        similarity = {c: by_label[c] for c in CATEGORIES if c in by_label}
        margin = {c: v - benign for c, v in similarity.items()}
        learned = self.models.get(model)
        probability = {}
        if learned is not None:
            probability = {
                c: v for c, v in learned.probabilities(vectors).items() if c in CATEGORIES
            }
        return SentenceScores(model, index, units, sims, similarity, margin, probability)

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
            by_exemplars = scored.by_exemplars(category, limit)
            by_model = scored.by_model(category, limit)
            probability = scored.probability.get(category)
            share = self.near_shares[category]
            near = (
                scored.by_model(category, limit, share)
                if share < 1.0 and not (by_exemplars.any() or by_model.any())
                else np.zeros(len(scored.units), dtype=bool)
            )
            # The deciding sentence: the closest one the exemplars fire on, else the one the
            # model is surest of among those it fires on (or is near), else the closest.
            if by_exemplars.any():
                pool, key = np.flatnonzero(by_exemplars), similarity
            elif (by_model.any() or near.any()) and probability is not None:
                pool, key = np.flatnonzero(by_model | near), probability
            else:
                pool, key = np.arange(len(scored.units)), similarity
            best = int(pool[int(np.argmax(key[pool]))])
            exemplar, _ = scored.index.nearest(scored.sims[best], category)
            fired_by = " and ".join(
                name
                for name, hits in (("exemplars", by_exemplars), ("model", by_model))
                if hits[best]
            ) or ("exemplars" if by_exemplars.any() else "model" if by_model.any() else "")
            out.append(
                Finding(
                    category,
                    round(float(similarity[best]), 4),
                    round(float(margin[best]), 4),
                    scored.units[best],
                    exemplar,
                    scored.index.model_id,
                    bool(by_exemplars.any() or by_model.any()),
                    None if probability is None else round(float(probability[best]), 4),
                    fired_by,
                    bool(near.any()),
                )
            )
        return out

    def detect(self, ticket: Ticket) -> Finding | None:
        """The most severe category that fires, or None."""
        return next((f for f in self.findings(ticket) if f.fired), None)

    def detect_or_near(self, ticket: Ticket) -> Finding | None:
        """The most severe category that fires; else the most severe one the ticket is near
        (a finding with ``near`` set and ``fired`` false); else None."""
        return fired_or_near(self.findings(ticket))


def fired_or_near(found: Sequence[Finding]) -> Finding | None:
    """Of findings ordered most severe first: the first that fires, else the first that is
    near, else None."""
    return next((f for f in found if f.fired), None) or next((f for f in found if f.near), None)


@functools.cache
def default_semantic_safety() -> SemanticSafety:
    """MiniLM for English, multilingual-e5 for the rest when its package is installed; the
    classifier's exemplars as more harmless examples; the shipped learned model per embedder.
    Built once per process."""
    safety, triage = load_exemplars("safety"), load_exemplars("triage")
    minilm = OnnxMiniLM()
    negatives = {"minilm": ExemplarIndex(triage, minilm)}
    models = {"minilm": shipped_risk_model(minilm.model_id)}
    multilingual = None
    if multilingual_available():
        e5 = MultilingualE5()
        multilingual = ExemplarIndex(safety, e5)
        negatives["e5"] = ExemplarIndex(triage, e5)
        models["e5"] = shipped_risk_model(e5.model_id)
    return SemanticSafety(
        ExemplarIndex(safety, minilm),
        multilingual,
        negatives=negatives,
        language_of=language_of,
        models={name: m for name, m in models.items() if m is not None},
    )
