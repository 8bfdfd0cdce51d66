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
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from supportagent.engines.triage_model import load_linear, save_linear
from supportagent.retrieval.dense import Vectors
from supportagent.retrieval.exemplars import (
    EXEMPLARS_DIR,
    EXEMPLARS_PACKAGE,
    VECTORS_DIR,
    vector_file_stem,
)

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
        z = vectors.astype(np.float32) @ self.weights + self.bias
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        return {c: p[:, i] for i, c in enumerate(self.classes)}

    def save(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / model_file(self.model_id)
        save_linear(path, self.weights, self.bias, self.meta)
        return path


def model_file(model_id: str) -> str:
    return vector_file_stem(MODEL_GROUP, model_id) + ".npz"


def load_risk_model(model_id: str, folder: Path | None = None) -> RiskModel | None:
    """The shipped model for ``model_id`` (or the one in ``folder``); None when there is none."""
    source: Any = (
        folder / model_file(model_id)
        if folder is not None
        else resources.files(EXEMPLARS_PACKAGE).joinpath(
            EXEMPLARS_DIR, VECTORS_DIR, model_file(model_id)
        )
    )
    if not source.is_file():
        return None
    model = RiskModel(*load_linear(source))
    if model.model_id != model_id:
        raise ValueError(f"{model_file(model_id)} was trained on {model.model_id}, not {model_id}")
    return model


@functools.cache
def shipped_risk_model(model_id: str) -> RiskModel | None:
    return load_risk_model(model_id)
