"""The shipped exemplar vectors match the exemplar files: an edited file without a rebuild
(``bench/build_exemplar_vectors.py``) would make every process embed the exemplars again."""

from __future__ import annotations

import pytest

from supportagent.retrieval.dense import MINILM_MODEL_ID
from supportagent.retrieval.exemplars import load_exemplars, shipped_vectors
from supportagent.retrieval.multilingual import E5_MODEL_ID


@pytest.mark.parametrize("model_id", [MINILM_MODEL_ID, E5_MODEL_ID])
@pytest.mark.parametrize("group", ["safety", "triage"])
def test_shipped_vectors_are_current(group: str, model_id: str) -> None:
    exemplars = load_exemplars(group)
    vectors = shipped_vectors(exemplars, model_id)
    assert vectors is not None, f"rebuild: python bench/build_exemplar_vectors.py ({group})"
    assert vectors.shape[0] == len(exemplars.texts)
