"""Embed the packaged exemplar sets with every embedder and store the vectors for shipping.

    python bench/build_exemplar_vectors.py

Run it after editing any file under `src/supportagent/exemplars/`; a test fails while the
shipped vectors are stale (start-up would then embed the exemplars itself: seconds with MiniLM,
about a minute with multilingual-e5). Vectors are written as float16 `.npy` files beside a
JSON file naming the exemplars' digest and the model.
"""

from __future__ import annotations

import time
from importlib import resources
from pathlib import Path

from supportagent.retrieval.dense import Embedder, OnnxMiniLM
from supportagent.retrieval.exemplars import (
    EXEMPLARS_DIR,
    VECTORS_DIR,
    load_exemplars,
    write_vectors,
)
from supportagent.retrieval.multilingual import MultilingualE5, multilingual_available

GROUPS = ("safety", "triage")


def main() -> None:
    folder = Path(str(resources.files("supportagent").joinpath(EXEMPLARS_DIR, VECTORS_DIR)))
    embedders: list[Embedder] = [OnnxMiniLM()]
    if multilingual_available():
        embedders.append(MultilingualE5())
    for group in GROUPS:
        exemplars = load_exemplars(group)
        for embedder in embedders:
            start = time.perf_counter()
            vectors = embedder.embed(list(exemplars.texts))
            path = write_vectors(exemplars, embedder.model_id, vectors, folder)
            took = time.perf_counter() - start
            print(
                f"{group} x {embedder.model_id}: {len(exemplars.texts)} in {took:.1f} s -> {path}"
            )


if __name__ == "__main__":
    main()
