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
from pathlib import Path

import numpy as np

from supportagent.engines.triage_model import SentenceModel
from supportagent.retrieval.dense import Vectors

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


class RequestModel(SentenceModel):
    """The request model; its metadata also holds the calibrated threshold and floor."""

    GROUP = MODEL_GROUP
    TRAINER = "bench/train_request_model.py"

    @property
    def threshold(self) -> float:
        return float(self.meta.get("threshold", 1.0))

    @property
    def floor(self) -> float:
        """Below this, the model disagrees with another model's money or account decision."""
        return float(self.meta.get("floor", 0.0))

    def strongest(self, vectors: Vectors) -> Asked | None:
        """The sentence (row) most likely to be an ask, or None when there are no rows."""
        if len(vectors) == 0:
            return None
        p = self.probabilities(vectors)
        asked = 1.0 - p[NONE]
        best = int(np.argmax(asked))
        code = MONEY if p[MONEY][best] >= p[ACCOUNT][best] else ACCOUNT
        return Asked(best, code, float(asked[best]))


def load_request_model(model_id: str, folder: Path | None = None) -> RequestModel | None:
    """The shipped model for ``model_id`` (or the one in ``folder``); None when there is none."""
    return RequestModel.load(model_id, folder)


@functools.cache
def shipped_request_model(model_id: str) -> RequestModel | None:
    return load_request_model(model_id)
