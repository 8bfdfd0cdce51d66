"""The semantic detector's learned part: per sentence, how likely each risk category is.

Nearest exemplars reach only as far as the exemplars' wording; a linear model over the same
sentence vectors draws one boundary per category from every exemplar at once and from
thousands of harmless sentences. One multinomial logistic regression per embedder, its
classes the four risk categories and ``harmless``, trained by ``bench/train_risk_model.py``
(the numpy trainer of ``engines/triage_model.py``) on our exemplar lines and on sentences of
harmless tickets from tune halves. The weights ship beside the exemplar vectors
(``exemplars/vectors/risk_model--<embedder>.npz``) and record what they were trained on; the
thresholds on its probabilities are set by ``bench/safety_calibration.py``. Nothing here reads
training data.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from supportagent.engines.triage_model import (
    load_linear_model,
    row_probabilities,
    save_linear_model,
)
from supportagent.retrieval.dense import Vectors

HARMLESS = "harmless"
MODEL_GROUP = "risk_model"


@dataclass(frozen=True)
class RiskModel:
    """Weights (vector dimensions x classes), biases, and what the model was trained on."""

    weights: Vectors
    bias: Vectors
    meta: dict[str, Any]

    @property
    def classes(self) -> tuple[str, ...]:
        return tuple(self.meta["classes"])

    @property
    def model_id(self) -> str:
        """The embedder whose vectors the model reads."""
        return str(self.meta["embedder"])

    def probabilities(self, vectors: Vectors) -> dict[str, Vectors]:
        """Per class, each vector's (row's) probability."""
        if vectors.shape[1] != self.weights.shape[0]:
            raise ValueError(
                f"the risk model for {self.model_id} reads {self.weights.shape[0]} dimensions, "
                f"got {vectors.shape[1]}; retrain it with bench/train_risk_model.py"
            )
        return row_probabilities(vectors, self.weights, self.bias, self.classes)

    def save(self, folder: Path) -> Path:
        return save_linear_model(folder, MODEL_GROUP, self.weights, self.bias, self.meta)


def load_risk_model(model_id: str, folder: Path | None = None) -> RiskModel | None:
    """The shipped model for ``model_id`` (or the one in ``folder``); None when there is none."""
    found = load_linear_model(MODEL_GROUP, model_id, folder)
    return None if found is None else RiskModel(*found)


@functools.cache
def shipped_risk_model(model_id: str) -> RiskModel | None:
    return load_risk_model(model_id)
