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
from pathlib import Path

from supportagent.engines.triage_model import SentenceModel

HARMLESS = "harmless"
MODEL_GROUP = "risk_model"


class RiskModel(SentenceModel):
    """The risk model: classes the four risk categories and ``harmless``."""

    GROUP = MODEL_GROUP
    TRAINER = "bench/train_risk_model.py"


def load_risk_model(model_id: str, folder: Path | None = None) -> RiskModel | None:
    """The shipped model for ``model_id`` (or the one in ``folder``); None when there is none."""
    return RiskModel.load(model_id, folder)


@functools.cache
def shipped_risk_model(model_id: str) -> RiskModel | None:
    return load_risk_model(model_id)
