"""ONNX Runtime's usage telemetry stays off in SupportAgent's processes unless asked for.

Its Linux wheels open a device id and an event store under the user cache as soon as
``onnxruntime`` is imported; ``retrieval/onnx_session.py`` sets the runtime's own switch
first. Each check runs in a fresh interpreter, since this one may have imported the runtime.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

_SRC = Path(__file__).resolve().parents[1] / "src"
_PROBE = (
    "import os\n"
    "from supportagent.retrieval import onnx_session\n"
    "import onnxruntime\n"
    "print(os.environ.get('ORT_DISABLE_TELEMETRY'))\n"
)


def _run(cache: Path, setting: str | None) -> str:
    env = {**os.environ, "PYTHONPATH": str(_SRC), "XDG_CACHE_HOME": str(cache)}
    env.pop("ORT_DISABLE_TELEMETRY", None)
    if setting is not None:
        env["ORT_DISABLE_TELEMETRY"] = setting
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip().splitlines()[-1]


def test_the_runtime_writes_no_telemetry_store(tmp_path: Path) -> None:
    assert _run(tmp_path, None) == "1"
    assert not (tmp_path / "Microsoft").exists()


@pytest.mark.parametrize("setting", ["0", "1"])
def test_a_setting_in_the_environment_is_left_as_it_is(tmp_path: Path, setting: str) -> None:
    assert _run(tmp_path, setting) == setting
