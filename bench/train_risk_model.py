"""Train the semantic safety detector's learned model, one per embedder, on exemplars and tune rows.

    SUPPORTAGENT_EVAL_DATA=/path/to/sets python bench/train_risk_model.py [--cache DIR]

Training rows are sentences, labelled with one of the four risk categories or ``harmless``:

- every line of `exemplars/safety/` (its file's category; `benign.txt` harmless) and of
  `exemplars/triage/` (harmless);
- the sentences of harmless tickets of the tune halves: public sets (Bitext, Banking77 and its
  Arabic version outside their fraud and security intents, the Ticket Tagger tune sample) and
  our own (the harmless tickets of `eval/risk`, `eval/brightwrench`, `eval/shelfwise`;
  `eval/risk_fresh` whole, as it has been read and is development data now);
- `risk_tune3` when it is found: each risk row's `risk_sentences` (its category) and
  `trap_sentences` (harmless), and its harmless tickets' sentences;
- round 15 (eleventh session): the same from `risk_tune4`, `risk_tune5` and the blind sets
  released as tune data (`safety_calibration.RELEASED`), whose sentence labels sit beside
  their tickets in `sentences.jsonl` (written after each set was released);
- round 15c: every sentence of Banking77's fraud and security rows of its tune half, as their
  category (one short request each; the test half is never read).

Never read: test halves, `*_report` sets, training-only sets (`*_train`), the report-only sets,
and the blind test sets (`eval/risk_blind*`, never opened). A ticket's sentences go to the
embedder that would read the ticket (multilingual-e5 for a ticket not in English); exemplar
lines go to both. Each source
weighs the same in the loss. The models are written beside the exemplar vectors with what they
were trained on; `bench/safety_calibration.py --model` sets their thresholds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import sys
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

import numpy as np

from supportagent.agent.safety_model import HARMLESS, RiskModel
from supportagent.agent.safety_semantic import CATEGORIES, SemanticSafety
from supportagent.domain import Ticket
from supportagent.engines.triage_model import train
from supportagent.evals.catalog import Dataset, find_datasets
from supportagent.evals.triage import MONEY_OR_ACCOUNT, TriageRow, read_triage
from supportagent.retrieval.dense import Embedder, Vectors
from supportagent.retrieval.exemplars import load_exemplars
from supportagent.sentences import ticket_sentences

sys.path.insert(0, str(Path(__file__).parent))
from safety_calibration import RELEASED, REPORT_ONLY, blind, risk_of, split_of, training_only

OUT = Path(__file__).resolve().parents[1] / "src/supportagent/exemplars/vectors"
CLASSES = (*CATEGORIES, HARMLESS)
#: Round 15's sets: sentence-labelled risk sets, every row tune for this model (the released
#: blind sets were test-only when written; they are tune data now).
ROUND15 = frozenset({"risk_tune4", "risk_tune5", *RELEASED})
#: Our sets read whole as development data (every row is tune for this model).
DEV_SETS = frozenset({"risk", "risk_fresh", "risk_tune3", *ROUND15})
#: The sets the model learns from: those of the round-4 model (round 6 keeps them fixed, so a
#: retrain after an exemplar change differs from the shipped model by the exemplars alone;
#: round 5's retrain with more sets gained only on the set it was trained with). A set found
#: later (a new tune set, a new product) is not read until it is added here.
TRAIN_SOURCES = frozenset(
    {
        "arbanking77_triage",
        "banking77_triage",
        "bitext_triage",
        "brightwrench",
        "github_issues_tickettagger_tune",
        "risk",
        "risk_fresh",
        "risk_tune3",
        "shelfwise",
        *ROUND15,
    }
)
#: Sets with sentence labels on their risk rows (``risk_sentences``, ``trap_sentences``), in
#: their tickets or in a ``sentences.jsonl`` beside them.
SENTENCE_LABELLED = frozenset({"risk_tune3", *ROUND15})
#: Public sets whose ordinary account and money requests count as harmless for this model.
BANKING = ("banking77", "arbanking77")
#: Public sets whose risk rows are one short request each (Banking77's fraud and security
#: intents): every sentence of such a row is its category (round 15c).
WHOLE_RISK = frozenset({"banking77_triage"})
EXEMPLARS = "exemplars"
L2 = 1e-5
EPOCHS = 1500
RATE = 16.0
FOLDS = 5


@dataclass(frozen=True, slots=True)
class Row:
    """One training sentence: its label, its source set, and the ticket (or exemplar line) it
    comes from, so that a ticket's sentences always share a fold."""

    text: str
    label: str
    source: str
    unit: str
    embedders: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Scored:
    """A tune ticket to score: its source, its risk (None: harmless), whether the rules
    escalate it, its embedder and its sentences."""

    source: str
    ticket_id: str
    risk: str | None
    by_rules: bool
    embedder: str
    units: tuple[str, ...]


def readable(dataset: Dataset) -> bool:
    """A triage set this model may learn from or be calibrated on (its tune half)."""
    return (
        dataset.kind == "triage"
        and dataset.name in TRAIN_SOURCES
        and not blind(dataset.name)
        and dataset.name not in REPORT_ONLY
        and not training_only(dataset.name)
        and not dataset.name.endswith("_report")
    )


def tune_rows(dataset: Dataset) -> list[TriageRow]:
    """The rows of ``dataset`` this work may read: its tune half, or all of a development set."""
    if not readable(dataset):
        return []
    rows = read_triage(dataset.path)
    if dataset.name in DEV_SETS:
        return rows
    return [r for r in rows if split_of(dataset.name, r, dataset.ours) == "tune"]


def risk_in(name: str, row: TriageRow) -> str | None:
    """The row's risk (a category, ``money_or_account``), or None: harmless."""
    if name.startswith("arbanking77"):
        name = name.removeprefix("ar")
    return risk_of(name, row)


def harmless(name: str, risk: str | None) -> bool:
    """Sentences of this ticket are harmless training rows: no risk at all, or an ordinary
    account or money request of a banking set (Banking77's non-risk intents)."""
    return risk is None or (risk == MONEY_OR_ACCOUNT and name.startswith(BANKING))


def sentence_labels(path: Path) -> dict[str, tuple[list[str], list[str]]]:
    """Per ticket id, its ``risk_sentences`` and ``trap_sentences`` (from ``sentences.jsonl``
    beside the tickets when there is one)."""
    out = {}
    beside = path.with_name("sentences.jsonl")
    if beside.exists():
        path = beside
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.strip():
            raw = json.loads(line)
            out[raw["id"]] = (raw.get("risk_sentences") or [], raw.get("trap_sentences") or [])
    return out


def _clean(text: str) -> str:
    return " ".join(text.split())


def exemplar_rows() -> list[Row]:
    rows = []
    both = ("minilm", "e5")
    safety = load_exemplars("safety")
    for i, (label, text) in enumerate(zip(safety.labels, safety.texts, strict=True)):
        name = label if label in CATEGORIES else HARMLESS
        rows.append(Row(text, name, EXEMPLARS, f"safety:{label}:{i}", both))
    triage = load_exemplars("triage")
    for i, text in enumerate(triage.texts):
        rows.append(Row(text, HARMLESS, EXEMPLARS, f"triage:{i}", both))
    return rows


def ticket_rows(
    datasets: Iterable[Dataset], embedder_of: dict[str, str] | None = None
) -> tuple[list[Row], list[Scored]]:
    """Training sentences of the tickets, and every tune ticket to score (``embedder_of``
    maps a ticket id to its embedder, found by :func:`embedder_for` when missing)."""
    from supportagent.agent.safety import screen

    rows: list[Row] = []
    scored: list[Scored] = []
    for dataset in datasets:
        picked = tune_rows(dataset)
        labelled = (
            sentence_labels(dataset.path) if dataset.name in SENTENCE_LABELLED and picked else {}
        )
        for row in picked:
            ticket = row.ticket
            risk = risk_in(dataset.name, row)
            unit = f"{dataset.name}:{ticket.id}"
            key = f"{dataset.name}:{ticket.id}"
            model = (embedder_of or {}).get(key) or embedder_for(ticket)
            units = tuple(ticket_sentences(ticket))
            scored.append(
                Scored(
                    dataset.name,
                    ticket.id,
                    None if harmless(dataset.name, risk) else risk,
                    screen(ticket.text).auto_escalate,
                    model,
                    units,
                )
            )
            if harmless(dataset.name, risk):
                rows.extend(Row(s, HARMLESS, dataset.name, unit, (model,)) for s in units)
            elif dataset.name in WHOLE_RISK and risk in CATEGORIES:
                rows.extend(Row(s, risk, dataset.name, unit, (model,)) for s in units)
            elif ticket.id in labelled and risk in CATEGORIES:
                risky, traps = labelled[ticket.id]
                rows.extend(Row(_clean(s), risk, dataset.name, unit, (model,)) for s in risky)
                rows.extend(Row(_clean(s), HARMLESS, dataset.name, unit, (model,)) for s in traps)
    return rows, scored


def embedder_for(ticket: Ticket) -> str:
    return _detector().model_for(ticket)


_DETECTOR: list[SemanticSafety] = []


def _detector() -> SemanticSafety:
    """The shipped detector without its learned model (exemplars only)."""
    if not _DETECTOR:
        from supportagent.agent.safety_semantic import default_semantic_safety

        base = default_semantic_safety()
        _DETECTOR.append(
            SemanticSafety(
                base.indexes["minilm"],
                base.indexes.get("e5"),
                negatives=base.negatives,
                language_of=base.language_of,
                thresholds=base.thresholds,
            )
        )
    return _DETECTOR[0]


def fold_of(unit: str) -> int:
    """A ticket's or exemplar line's fold, by a hash of its name (stable across runs)."""
    return hashlib.sha256(unit.encode()).digest()[0] % FOLDS


class VectorStore:
    """Sentence vectors per embedder, computed once and kept on disk between runs."""

    def __init__(self, embedders: dict[str, Embedder], cache: Path | None) -> None:
        self.embedders = embedders
        self.cache = cache
        self.vectors: dict[str, dict[str, Vectors]] = {name: {} for name in embedders}
        self.changed = False
        for name in embedders:
            path = self._path(name)
            if path is not None and path.exists():
                with path.open("rb") as handle:
                    self.vectors[name] = pickle.load(handle)

    def _path(self, name: str) -> Path | None:
        return None if self.cache is None else self.cache / f"vectors-{name}.pkl"

    def ensure(self, name: str, texts: Iterable[str]) -> None:
        known = self.vectors[name]
        missing = sorted({t for t in texts if t not in known})
        step = 256
        for start in range(0, len(missing), step):
            batch = missing[start : start + step]
            for text, vector in zip(batch, self.embedders[name].embed(batch), strict=True):
                known[text] = np.asarray(vector, dtype=np.float32)
            print(f"  {name}: {start + len(batch)}/{len(missing)} embedded", file=sys.stderr)
        self.changed |= bool(missing)

    def save(self) -> None:
        """Keep the vectors for the next run (written whole, then moved into place)."""
        if self.cache is None or not self.changed:
            return
        self.cache.mkdir(parents=True, exist_ok=True)
        for name, known in self.vectors.items():
            path = self.cache / f"vectors-{name}.pkl"
            part = path.with_suffix(f".{os.getpid()}.part")
            with part.open("wb") as handle:
                pickle.dump(known, handle)
            os.replace(part, path)
        self.changed = False

    def matrix(self, name: str, texts: Sequence[str]) -> Vectors:
        dim = next(iter(self.vectors[name].values())).shape[0] if self.vectors[name] else 384
        if not texts:
            return np.zeros((0, dim), dtype=np.float32)
        return np.stack([self.vectors[name][t] for t in texts])


def fit(rows: Sequence[Row], store: VectorStore, name: str) -> tuple[Vectors, Vectors]:
    """Weights and biases of one embedder's model on ``rows``."""
    mine = [r for r in rows if name in r.embedders]
    features = store.matrix(name, [r.text for r in mine])
    return train(
        features,
        [r.label for r in mine],
        [r.source for r in mine],
        classes=CLASSES,
        l2=L2,
        epochs=EPOCHS,
        rate=RATE,
    )


def model_of(weights: Vectors, bias: Vectors, model_id: str, meta: dict[str, object]) -> RiskModel:
    return RiskModel(weights, bias, {"classes": list(CLASSES), "embedder": model_id, **meta})


class Embedded(Protocol):
    """A ticket to score: the embedder that reads it, and its sentences."""

    @property
    def embedder(self) -> str: ...

    @property
    def units(self) -> tuple[str, ...]: ...


def embed_all(rows: Sequence[Row], scored: Sequence[Embedded], cache: Path | None) -> VectorStore:
    """Each embedder's vectors of the rows it reads and of the sentences of the tickets it
    scores, kept in ``cache`` between runs (this trainer's and train_request_model.py's)."""
    from supportagent.retrieval.dense import OnnxMiniLM
    from supportagent.retrieval.multilingual import MultilingualE5

    store = VectorStore({"minilm": OnnxMiniLM(), "e5": MultilingualE5()}, cache)
    for name in store.embedders:
        texts = [r.text for r in rows if name in r.embedders]
        texts += [u for s in scored if s.embedder == name for u in s.units]
        store.ensure(name, texts)
    store.save()
    return store


def collect(
    cache: Path | None, without: Collection[str] = ()
) -> tuple[list[Row], list[Scored], VectorStore]:
    """Every training row and tune ticket, with their sentences embedded; the sets named in
    ``without`` are left out (``--without``, leave-one-set-out: ``bench/risk_model_loso.py``)."""
    ids_path = None if cache is None else cache / "embedders.pkl"
    embedder_of: dict[str, str] = {}
    if ids_path is not None and ids_path.exists():
        with ids_path.open("rb") as handle:
            embedder_of = pickle.load(handle)
    rows = exemplar_rows()
    datasets = [d for d in find_datasets() if d.name not in without]
    more, scored = ticket_rows(datasets, embedder_of)
    rows += more
    if ids_path is not None:
        ids_path.parent.mkdir(parents=True, exist_ok=True)
        with ids_path.open("wb") as handle:
            pickle.dump({f"{s.source}:{s.ticket_id}": s.embedder for s in scored}, handle)
    return rows, scored, embed_all(rows, scored, cache)


def provenance(
    rows: Sequence[Row], exemplars: str, *, l2: float, epochs: int, rate: float
) -> dict[str, object]:
    """What a model records of its training: when, the sets and labels of its rows, the digest
    of the ``exemplars`` group it learnt from, and the trainer's settings (this trainer's and
    train_request_model.py's)."""
    return {
        "trained_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "trained_on": dict(sorted(Counter(r.source for r in rows).items())),
        "labels": dict(sorted(Counter(r.label for r in rows).items())),
        "exemplar_digest": load_exemplars(exemplars).digest,
        "l2": l2,
        "epochs": epochs,
        "rate": rate,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, help="keep sentence vectors here between runs")
    parser.add_argument("--out", type=Path, default=OUT, help="where the models are written")
    parser.add_argument("--without", action="append", default=[], help="leave this set out")
    args = parser.parse_args()
    rows, _, store = collect(args.cache, args.without)
    for name, embedder in store.embedders.items():
        mine = [r for r in rows if name in r.embedders]
        weights, bias = fit(rows, store, name)
        meta = provenance(mine, "safety", l2=L2, epochs=EPOCHS, rate=RATE)
        path = model_of(weights, bias, embedder.model_id, meta).save(args.out)
        print(f"{name}: {len(mine)} sentences, {meta['trained_on']}; wrote {path}")


if __name__ == "__main__":
    main()
