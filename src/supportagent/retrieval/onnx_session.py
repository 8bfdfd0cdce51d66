"""ONNX Runtime sessions on the pinned MiniLM model, from its optimised graph in the user cache.

Apart from ``dense.py`` so that the embedders stay readable; ``OnnxMiniLM`` opens its session
here on first use.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from supportagent.usercache import cache_folder, publish_folder, remove_stale

if TYPE_CHECKING:
    from supportagent.retrieval.dense import PinnedFile

#: ONNX Runtime's Linux wheels (1.32 here) carry Microsoft's usage telemetry client: on import it
#: opens a device id and an SQLite event store under the user cache
#: (``Microsoft/DeveloperTools/.onnxruntime``) and writes it back, with a dozen fsyncs, when
#: the process ends. SupportAgent runs offline, so it is off unless the environment says
#: otherwise (``ORT_DISABLE_TELEMETRY``, the runtime's own switch; ``0`` turns it back on).
#: Set before this module imports onnxruntime; it changes no vector. A one-shot ``triage``
#: spends about 0.02 s less CPU (load 8), and less wall time at exit.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

#: Where a pinned model's optimised graph lives in the user's cache: a folder named
#: ``<prefix><sha256[:16]>-ort<version>`` with the graph and its weights.
OPTIMIZED_PREFIX = "minilm-"
_GRAPH, _WEIGHTS = "model.onnx", "weights.bin"


def _session_options(threads: int | None, level: Any) -> Any:
    import onnxruntime as ort  # type: ignore[import-untyped]

    options = ort.SessionOptions()
    options.graph_optimization_level = level
    options.log_severity_level = 3
    # Idle worker threads must sleep, not spin: right after a query is embedded the same
    # cores run BM25 and the dense matrix product, which spinning threads would slow.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if threads:
        options.intra_op_num_threads = threads
    return options


def open_session(model: PinnedFile, threads: int | None = None) -> Any:
    """An ONNX Runtime session on ``model``, from its optimised graph in the user's cache.

    Optimising the int8 graph (folding its constants) took about 0.3 s CPU of every process's
    first embedding, so the optimised graph is saved once, its weights (about 90 MB, unpacked
    from int8) in a file of their own that the runtime maps instead of parsing, in a folder
    named after the pin and the runtime's version; later sessions load it with optimisation
    off and compute the very same vectors, bit for bit. It is saved at the extended level,
    without the highest level's layout changes, which may depend on the CPU (a cache folder
    can be shared between machines). A hit does not hash the model file again: the graph was
    made from the verified file. A folder that cannot be read is made again; one that cannot
    be written costs the optimisation, nothing else.
    """
    import onnxruntime as ort

    level = ort.GraphOptimizationLevel
    try:
        folder = cache_folder() / f"{OPTIMIZED_PREFIX}{model.sha256[:16]}-ort{ort.__version__}"
    except OSError:
        return _session(model.locate(), _session_options(threads, level.ORT_ENABLE_ALL))
    if folder.is_dir():
        try:
            return _session(folder / _GRAPH, _session_options(threads, level.ORT_DISABLE_ALL))
        except _onnx_load_errors():
            shutil.rmtree(folder, ignore_errors=True)
    source = model.locate()
    made: list[Any] = []

    def optimise(work: Path) -> None:
        options = _session_options(threads, level.ORT_ENABLE_EXTENDED)
        options.optimized_model_filepath = str(work / _GRAPH)
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_file_name", _WEIGHTS
        )
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes", "1024"
        )
        made.append(_session(source, options))

    try:
        publish_folder(folder, optimise)
        remove_stale(folder.parent, OPTIMIZED_PREFIX, keep=folder.name)
    except _onnx_load_errors():  # the cache folder or the graph could not be written
        if not made:
            made.append(_session(source, _session_options(threads, level.ORT_ENABLE_ALL)))
    return made[0]


def _session(path: Path, options: Any) -> Any:
    import onnxruntime as ort

    return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])


def _onnx_load_errors() -> tuple[type[Exception], ...]:
    """What ONNX Runtime raises for a model file it cannot read (its own types, not OSError)."""
    from onnxruntime.capi import onnxruntime_pybind11_state as state  # type: ignore[import-untyped]

    return (OSError, state.InvalidProtobuf, state.InvalidGraph, state.Fail, state.NoSuchFile)
