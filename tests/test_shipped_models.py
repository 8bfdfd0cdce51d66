"""The learned models that ship beside the exemplar vectors were trained on the exemplars that
ship with them: a line added to ``exemplars/safety/`` without retraining
(``bench/train_risk_model.py``) is caught here, not by a reviewer reading the npz."""

from __future__ import annotations

import pytest

from supportagent.agent.safety_model import shipped_risk_model
from supportagent.retrieval.dense import MINILM_MODEL_ID
from supportagent.retrieval.exemplars import load_exemplars
from supportagent.retrieval.multilingual import E5_MODEL_ID


@pytest.mark.parametrize("model_id", [MINILM_MODEL_ID, E5_MODEL_ID])
def test_risk_model_was_trained_on_the_shipped_safety_exemplars(model_id: str) -> None:
    model = shipped_risk_model(model_id)
    assert model is not None, f"no risk model ships for {model_id}"
    assert model.meta["exemplar_digest"] == load_exemplars("safety").digest, (
        "exemplars/safety/ changed since the risk model was trained: run "
        "bench/train_risk_model.py and bench/safety_calibration.py --model --write"
    )
