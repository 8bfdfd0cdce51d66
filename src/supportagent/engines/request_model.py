"""The classifier's sentence-level look for an ask to act on the writer's own money or account.

A ticket can be an ordinary how-to question with one sentence in it that asks us to do
something to this customer's bill or account: "could you take the express fee off that
order?", "please move five licences to the Leeds sub-account", "¿se podría pasar la cuenta a
mi nombre?". The triage model reads the ticket whole and answers the how-to; a draft would then
look complete while the request is left undone. So every sentence of the ticket (the same
sentences the safety gate embeds, so their vectors come from the process memo) is scored by a
small multinomial logistic regression, classes ``money_specific``, ``account_specific`` and
``none``, one per embedder (MiniLM for English, multilingual-e5 for the rest). When one
sentence's probability of being such an ask (``1 - p(none)``) reaches the model's calibrated
threshold, the ticket goes to a person as ``money_specific`` or ``account_specific``, never as
a safety category.

Trained by ``bench/train_request_model.py`` on our triage exemplars, the marked request
sentences of the tune-only risk sets, their trap sentences and the sentences of harmless
tickets of the tune halves; the threshold, chosen out of fold by the same script, ships in the
model file's metadata. Nothing here reads training data.
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

MONEY = "money_specific"
ACCOUNT = "account_specific"
NONE = "none"
CLASSES = (MONEY, ACCOUNT, NONE)
MODEL_GROUP = "request_model"


@dataclass(frozen=True, slots=True)
class Asked:
    """The sentence of a ticket most likely to ask for an action on its own money or
    account: its index, the reason code it would carry, and its probability."""

    index: int
    code: str
    probability: float


@dataclass(frozen=True)
class RequestModel:
    """Weights (vector dimensions x classes), biases, and metadata: the embedder, the classes,
    the threshold, and what the model was trained on."""

    weights: Vectors
    bias: Vectors
    meta: dict[str, Any]

    @property
    def classes(self) -> tuple[str, ...]:
        return tuple(self.meta["classes"])

    @property
    def model_id(self) -> str:
        return str(self.meta["embedder"])

    @property
    def threshold(self) -> float:
        return float(self.meta.get("threshold", 1.0))

    @property
    def floor(self) -> float:
        """Below this, the model disagrees with another model's money or account decision."""
        return float(self.meta.get("floor", 0.0))

    def probabilities(self, vectors: Vectors) -> dict[str, Vectors]:
        """Per class, each row's probability."""
        if vectors.shape[1] != self.weights.shape[0]:
            raise ValueError(
                f"the request model for {self.model_id} reads {self.weights.shape[0]} "
                f"dimensions, got {vectors.shape[1]}; retrain it with "
                "bench/train_request_model.py"
            )
        z = vectors.astype(np.float32) @ self.weights + self.bias
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        return {c: p[:, i] for i, c in enumerate(self.classes)}

    def strongest(self, vectors: Vectors) -> Asked | None:
        """The sentence (row) most likely to be an ask, or None when there are no rows."""
        if len(vectors) == 0:
            return None
        p = self.probabilities(vectors)
        asked = 1.0 - p[NONE]
        best = int(np.argmax(asked))
        code = MONEY if p[MONEY][best] >= p[ACCOUNT][best] else ACCOUNT
        return Asked(best, code, float(asked[best]))

    def save(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / model_file(self.model_id)
        save_linear(path, self.weights, self.bias, self.meta)
        return path


def model_file(model_id: str) -> str:
    return vector_file_stem(MODEL_GROUP, model_id) + ".npz"


def load_request_model(model_id: str, folder: Path | None = None) -> RequestModel | None:
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
    model = RequestModel(*load_linear(source))
    if model.model_id != model_id:
        raise ValueError(f"{model_file(model_id)} was trained on {model.model_id}, not {model_id}")
    return model


@functools.cache
def shipped_request_model(model_id: str) -> RequestModel | None:
    return load_request_model(model_id)
