"""`make eval`: every eval on the demo data and on each eval set found, then the report.

Each eval runs as its own `supportagent` process, so one crash cannot hide another and every
command is exercised as a user runs it. A score never fails the suite; a command that exits
non-zero (a crash, or a dataset it cannot read) does, after the others have run and the
report is written. Big sets are sampled with ``--limit`` (a fixed sample by id hash, named in
the dataset) so the whole suite stays within minutes on a small machine. The sets are found by
``evals.catalog``: the repository's ``eval/``, ``../shared/eval`` and ``$SUPPORTAGENT_EVAL_DATA``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from supportagent.evals.catalog import Dataset, find_datasets

#: The public sets the project measures on (see ../shared/eval/README.md); each one missing
#: gets a line saying so, and the suite goes on without it.
EXPECTED_SETS = ("stackfaq", "ragtruth_qa_dev", "bitext_triage", "banking77_triage", "bipia_email")
#: Evals whose command takes ``--limit`` (a sample of rows by id hash).
LIMITED = ("triage", "checker", "retrieval")
DEFAULT_LIMIT = 200
#: The injection red team runs each attack through the whole pipeline three times (ticket, KB
#: article, resolved ticket) per engine, so it gets its own, smaller sample (``--sample``: the
#: first N attacks of each set).
DEFAULT_INJECTION_SAMPLE = 5


@dataclass(frozen=True, slots=True)
class Step:
    title: str
    args: tuple[str, ...]  # after `supportagent --home H --engine E`


def plan(
    datasets: Iterable[Dataset],
    demo: Path,
    *,
    limit: int | None,
    commands: Iterable[str],
    repeat: int = 1,
    cwd: Path | None = None,
    injection_sample: int | None = None,
) -> tuple[list[Step], list[str]]:
    """The steps to run, and a line for each set or eval skipped (pure). Paths are given
    relative to ``cwd`` where that is short."""

    def at(path: Path) -> str:
        return shown(path, cwd) if cwd is not None else str(path)

    known = set(commands)
    demo_run = _run_args(at, demo, "inbox.jsonl", demo / "labels.jsonl")
    if repeat > 1:
        demo_run += ("--repeat", str(repeat))
    steps = [
        Step("run: demo inbox", demo_run),
        Step("retrieval: demo paraphrases", ("eval", "retrieval", at(demo / "eval"))),
    ]
    skipped = []
    found = list(datasets)
    for data in found:
        kind = "run" if data.kind == "corpus" else data.kind
        if kind not in known:
            skipped.append(f"skipping {data.kind} on {data.name}: no `eval {kind}` command here")
            continue
        if data.kind == "corpus":
            args = _run_args(at, data.path, "tickets.jsonl")
            if not (data.path / "resolved.jsonl").is_file():
                skipped.append(f"skipping run on {data.name}: no resolved.jsonl beside its kb/")
                continue
        elif kind in LIMITED:
            args = ("eval", kind, at(data.path))
            if limit is not None:
                args += ("--limit", str(limit))
        else:
            # An eval this module does not know (injection, or one added later) gets the
            # dataset's folder, the one argument every eval command here accepts.
            folder = data.path if data.path.is_dir() else data.path.parent
            args = ("eval", kind, at(folder))
            if kind == "injection" and injection_sample is not None:
                args += ("--sample", str(injection_sample))
        steps.append(Step(f"{kind}: {data.name}", args))
    names = {d.name for d in found}
    skipped += [
        f"skipping {name}: not found in any eval folder"
        for name in EXPECTED_SETS
        if name not in names
    ]
    return steps, skipped


def shown(path: Path, cwd: Path) -> str:
    """``path`` as a user would type it from ``cwd`` (``../shared/eval/...``), so the same
    set has the same name in reports made from different checkouts; absolute when far off."""
    relative = Path(os.path.relpath(path, cwd))
    return str(path) if relative.parts[:2] == ("..", "..") else str(relative)


def _run_args(
    at: Callable[[Path], str], folder: Path, tickets: str, labels: Path | None = None
) -> tuple[str, ...]:
    """`eval run` on a corpus folder: ``kb/``, ``resolved.jsonl`` and the tickets file."""
    args: tuple[str, ...] = ("eval", "run", "--kb", at(folder / "kb"), "--resolved")
    args += (at(folder / "resolved.jsonl"), "--tickets", at(folder / tickets))
    return args + (("--labels", at(labels)) if labels else ())


def eval_commands() -> list[str]:
    """The `eval` subcommands this installation has (a new one is picked up by its name)."""
    from supportagent.cli import app  # noqa: F401 (registers every command module)
    from supportagent.cli.evaluate import eval_app

    return [c.name or "" for c in eval_app.registered_commands]


def run_steps(base: Sequence[str], steps: Sequence[Step], log: Path) -> list[str]:
    """Run each step, its table appended to ``log``; returns the titles of those that failed."""
    failed = []
    with log.open("w", encoding="utf-8") as out:
        for number, step in enumerate(steps, start=1):
            print(f"[{number}/{len(steps)}] {step.title}", flush=True)
            out.write(f"\n## {step.title}\n$ supportagent {' '.join(step.args)}\n")
            out.flush()
            start = time.monotonic()
            code = subprocess.call([*base, *step.args], stdout=out)
            took = time.monotonic() - start
            status = "ok" if code == 0 else f"FAILED (exit {code})"
            print(f"    {status} in {took:.0f} s", flush=True)
            if code != 0:
                failed.append(step.title)
    return failed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("reports"), help="report folder")
    parser.add_argument("--home", type=Path, help="data home (default: OUT/home)")
    parser.add_argument("--engine", default="offline", help="offline (default) or llm")
    parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT, help="rows per big set")
    parser.add_argument(
        "--injection-sample", type=int, default=DEFAULT_INJECTION_SAMPLE, help="attacks per set"
    )
    parser.add_argument("--repeat", type=int, default=2, help="runs of the demo inbox")
    options = parser.parse_args(argv)
    home = options.home or options.out / "home"
    # The suite's own results only: a set run last time and gone now must not linger.
    shutil.rmtree(home / "evals", ignore_errors=True)
    from supportagent.runtime import demo_path

    steps, skipped = plan(
        find_datasets(),
        demo_path(),
        limit=options.limit if options.limit > 0 else None,
        commands=eval_commands(),
        repeat=options.repeat,
        cwd=Path.cwd(),
        injection_sample=options.injection_sample if options.injection_sample > 0 else None,
    )
    for line in skipped:
        print(line, flush=True)
    base = [sys.executable, "-m", "supportagent", "--home", str(home), "--engine", options.engine]
    options.out.mkdir(parents=True, exist_ok=True)
    log = options.out / "eval-suite.log"
    failed = run_steps(base, steps, log)
    report = subprocess.call([*base, "eval", "report", "--out", str(options.out)])
    print(f"every eval's output: {log}")
    if failed or report != 0:
        print(f"failed: {', '.join(failed) or 'eval report'}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
