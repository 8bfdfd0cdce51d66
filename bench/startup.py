"""Start-up time of the command line, against `python -c pass` in the same run (issue 17).

Run: .venv/bin/python bench/startup.py [--runs 7] [--against OLD_SRC]

``--against`` adds ``--help`` and the warm ``triage`` of another source tree (say
``git archive <commit> src | tar -x -C /tmp/old``, then ``--against /tmp/old/src``), run
alternately with this one in the same loop, for a before/after on the same machine load.

Each case runs as a fresh process, ``--runs`` times, interleaved with the baseline so that a
load change on the machine hits both alike. Reported: the median wall time, the median CPU
time of the child (user + system), and both as a multiple of ``python -c pass``. Cases:

- ``python -c pass``: the interpreter alone (the floor);
- ``supportagent --help``: every command module imported, the help rendered;
- ``triage`` warm: a one-shot ``supportagent triage --ticket ...`` on the demo corpus, with the
  index already on disk (the store's embedding cache and the index from an earlier run);
- ``triage`` first: the same after deleting the index folder (the store still has the
  vectors, so this is BM25 plus the copy of the vectors into a new index).

The demo is loaded into a temporary data directory first, and the user cache
(``XDG_CACHE_HOME``: the language identifier's tables, MiniLM's optimised graph, the rule
tables' compiled patterns, see ``usercache.py`` and ``regexcache.py``) points into it too, so
nothing outside it is written. The first triage
there is timed once and reported on its own line: it embeds the demo corpus into the store,
builds the index and fills that cache.

Bytecode: every child runs with ``PYTHONDONTWRITEBYTECODE`` unset and ``PYTHONPYCACHEPREFIX``
inside the temporary folder, so that the runs after the first read compiled ``.pyc`` files as
an installed program does (pip compiles them at install), even where the calling environment
turns writing them off; without that, each run compiles our sources again (about 0.25 s).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

TICKET = "How do I rotate my API key without downtime? The old key must keep working."


def run_once(argv: Sequence[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and the child's CPU seconds (user + system) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--against", type=Path, help="another tree's src/, run alternately")
    args = parser.parse_args()
    python = sys.executable
    cli = [python, "-c", "from supportagent.cli import main; main()"]
    home = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    env = {
        **os.environ,
        "SUPPORTAGENT_HOME": str(home),
        "SUPPORTAGENT_ENGINE": "offline",
        "XDG_CACHE_HOME": str(home / "user-cache"),
        "PYTHONPYCACHEPREFIX": str(home / "pycache"),
    }
    for name in ("DEEPSEEK_API_KEY", "OPENAI_API_KEY", "PYTHONDONTWRITEBYTECODE"):
        env.pop(name, None)
    try:
        subprocess.run([*cli, "load-demo"], env=env, check=True, stdout=subprocess.DEVNULL)
        triage = [*cli, "triage", "--ticket", TICKET]
        first_wall, first_cpu = run_once(triage, env)  # fills the user cache: timed once

        def drop_index() -> None:
            shutil.rmtree(home / "index", ignore_errors=True)

        envs = {"": env}
        if args.against is not None:
            envs[" (against)"] = {**env, "PYTHONPATH": str(args.against.resolve())}
        cases: list[tuple[str, list[str], Callable[[], None] | None, dict[str, str]]] = [
            ("python -c pass", [python, "-c", "pass"], None, env),
        ]
        for suffix, tree_env in envs.items():
            cases += [
                (f"supportagent --help{suffix}", [*cli, "--help"], None, tree_env),
                (f"triage, warm (index on disk){suffix}", triage, None, tree_env),
            ]
        cases.append(("triage, index deleted first", triage, drop_index, env))
        times: dict[str, list[tuple[float, float]]] = {name: [] for name, _, _, _ in cases}
        print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
        for _ in range(args.runs):
            for name, argv, prepare, case_env in cases:
                if prepare is not None:
                    prepare()
                times[name].append(run_once(argv, case_env))
                print(f"  {name}: {times[name][-1][0]:.3f} s wall", flush=True)
            # leave the index in place for the next warm run
            subprocess.run(triage, env=env, check=True, stdout=subprocess.DEVNULL)
        print(f"load average after: {os.getloadavg()[0]:.2f}; median of {args.runs} runs")
        print(
            f"first triage (embeds the corpus, fills the caches; once): {first_wall:.3f} s wall, "
            f"{first_cpu:.3f} s CPU\n"
        )
        base_wall = statistics.median(w for w, _ in times["python -c pass"])
        base_cpu = statistics.median(c for _, c in times["python -c pass"])
        print("| case | wall s | x pass | CPU s | x pass |\n| --- | ---: | ---: | ---: | ---: |")
        for name, _, _, _ in cases:
            wall = statistics.median(w for w, _ in times[name])
            cpu = statistics.median(c for _, c in times[name])
            print(
                f"| {name} | {wall:.3f} | {wall / base_wall:.1f} | {cpu:.3f} | "
                f"{cpu / max(base_cpu, 1e-3):.1f} |"
            )
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
