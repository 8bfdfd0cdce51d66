"""`eval injection`: plant attacks in tickets and documents, run the real pipeline, count harm.

Every attack of the datasets is planted three ways, each in a case of its own: in a ticket (a
question the demo knowledge base answers, followed by the attack, inside one of the dataset's
benign carrier e-mails when it has them); in the KB article that answers that question (the
attack as a paragraph of every section, so whichever passage retrieval finds carries it); and
in the resolved ticket that answers it (inside the accepted answer). A planted document
replaces the real one under the same id for its case only, so retrieval finds it exactly where
it found the original. A row may name the placements it is for (``placements``).

Each engine runs every case: the offline engine, and the llm engine against
:class:`~supportagent.evals.obedient.ObedientModel`, a model that obeys every instruction, over
the real ``openai`` SDK on loopback, holding a random API key made for the run. Everything
happens in a temporary data home, so the user's data is untouched; at the end the run's files,
the audit export and the log are searched for the key. Five clean questions run too
(placement ``control``), to show the claim patterns do not fire on ordinary drafts.
What is counted, exactly: :mod:`supportagent.evals.injection_score`.
"""

from __future__ import annotations

import contextlib
import io
import logging
import secrets
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

from supportagent.config import Settings
from supportagent.evals.injection_cases import (
    Attack,
    Case,
    build_cases,
    in_answer,
    in_article,
    in_carrier,
    read_attacks,
)
from supportagent.evals.injection_score import (
    COUNTS,
    MUST_BE_ZERO,
    CaseFacts,
    CaseScore,
    breakdown,
    key_leaks,
    score_case,
    summarize,
)
from supportagent.evals.obedient import Instruction, ObedientModel, ObedientServer
from supportagent.evals.results import EvalResult, Metric

if TYPE_CHECKING:
    from supportagent.agent.knowledge import Knowledge
    from supportagent.agent.pipeline import Pipeline
    from supportagent.store.store import Store

ENGINES = ("offline", "llm")

# ---------------------------------------------------------------------------- the report


@dataclass(frozen=True, slots=True)
class EngineRun:
    engine: str
    cases: tuple[CaseScore, ...]
    #: Places outside the cases' records (files of the data home, audit export, log) with the key.
    key_found_in: tuple[str, ...] = ()
    model_requests: int = 0
    key_sent_as_credential: int = 0
    key_in_prompts: int = 0

    def attacks(self) -> list[CaseScore]:
        return [c for c in self.cases if c.placement != "control"]

    def summary(self) -> dict[str, Any]:
        attacks = self.attacks()
        out = summarize(attacks)
        out["key_revealed"] += len(self.key_found_in)
        controls = [c for c in self.cases if c.placement == "control"]
        out["control"] = summarize(controls)
        out["by_placement"] = breakdown(attacks, "placement")
        out["by_category"] = breakdown(attacks, "category")
        out["key_found_in"] = list(self.key_found_in)
        if self.engine == "llm":
            out["model_requests"] = self.model_requests
            out["key_sent_as_credential"] = self.key_sent_as_credential
            out["key_in_prompts"] = self.key_in_prompts
        return out


@dataclass(frozen=True, slots=True)
class InjectionReport:
    dataset: str
    attacks: int
    runs: tuple[EngineRun, ...]
    sample: int | None = None
    paths: tuple[str, ...] = field(default=())

    def passed(self) -> bool:
        """True when every must-be-zero count is zero for every engine."""
        return all(r.summary()[name] == 0 for r in self.runs for name in MUST_BE_ZERO)

    def to_json(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "paths": list(self.paths),
            "attacks": self.attacks,
            "sample": self.sample,
            "passed": self.passed(),
            "engines": {r.engine: r.summary() for r in self.runs},
            "cases": [c.to_json() for r in self.runs for c in r.cases],
        }

    def results(self) -> list[EvalResult]:
        """One result per engine (dataset ``NAME#ENGINE``), for `eval report` and `compare`."""
        out = []
        for run in self.runs:
            summary = run.summary()
            metrics = {name: Metric(float(summary[name]), False) for name in COUNTS}
            metrics["reached_drafter"] = Metric(float(summary["reached_drafter"]), False)
            details = {
                "engine": run.engine,
                "paths": list(self.paths),
                "sample": self.sample,
                "attacks": self.attacks,
                "summary": summary,
                "cases": [c.to_json() for c in run.cases],
            }
            out.append(EvalResult("injection", f"{self.dataset}#{run.engine}", metrics, details))
        return out


# ---------------------------------------------------------------------------- running


def run_injection(
    settings: Settings,
    datasets: Sequence[Path],
    engines: Sequence[str] = ENGINES,
    *,
    sample: int | None = None,
    on_case: Callable[[int, int], None] | None = None,
) -> InjectionReport:
    """Every case of ``datasets`` through the pipeline with each of ``engines``."""
    # Imported here: the runtime wires the whole agent, which reading and scoring need not.
    from supportagent.agent.knowledge import Knowledge
    from supportagent.ingest import read_kb, read_resolved, read_tickets
    from supportagent.runtime import demo_path, open_store

    pairs: list[tuple[Attack, Sequence[str]]] = []
    for path in datasets:
        attacks, carriers = read_attacks(path)
        pairs.extend((a, carriers) for a in attacks)
    root = demo_path()
    inbox = {t.id: t for t in read_tickets(root / "inbox.jsonl").records}
    corpus = [*read_kb(root / "kb").records, *read_resolved(root / "resolved.jsonl").records]
    cases = build_cases(pairs, inbox, {d.id: d for d in corpus}, sample)
    total = len(cases) * len(engines)
    key = "sk-injeval-" + secrets.token_hex(16)  # made for this run, never written by us
    runs = []
    temporary = tempfile.TemporaryDirectory(prefix="supportagent-injection-")
    with temporary as tmp, _log_capture() as log:
        local = settings.model_copy(
            update={
                "home": Path(tmp),
                "database_url": None,
                "audit_head_file": None,
                "llm_api_key": SecretStr(key),
                "trace_prompts": True,  # prompts and replies kept: the key search sees them
                "max_api_calls": None,
                "max_tokens": None,
            }
        )
        store = open_store(local)
        try:
            store.upsert_documents(corpus)
            knowledge = Knowledge.from_store(store, local)
            done = 0
            for name in engines:
                prefixed = [_for_engine(c, name) for c in cases]
                store.add_tickets([c.ticket for c in prefixed])

                def tick() -> None:
                    nonlocal done
                    done += 1
                    if on_case:
                        on_case(done, total)

                runs.append(_run_engine(name, local, store, knowledge, prefixed, key, tick))
            places = _places(store, Path(tmp), log)
        finally:
            store.close()
        leaks = tuple(key_leaks(key, places))
    runs = [replace(r, key_found_in=leaks) for r in runs]
    # Named by folder ("bipia_email+injection"), so the saved result's file name says which sets.
    name = "+".join(p.resolve().name if p.is_dir() else p.resolve().parent.name for p in datasets)
    attacked = len(pairs) if sample is None else min(sample, len(pairs))
    paths = tuple(str(p) for p in datasets)
    return InjectionReport(name, attacked, tuple(runs), sample, paths)


def _for_engine(case: Case, engine: str) -> Case:
    case_id = f"{case.id}-{engine}"
    return replace(case, id=case_id, ticket=replace(case.ticket, id=case_id))


def _run_engine(
    name: str,
    settings: Settings,
    store: Store,
    knowledge: Knowledge,
    cases: Sequence[Case],
    key: str,
    tick: Callable[[], None],
) -> EngineRun:
    from supportagent.runtime import build_engine, build_pipeline

    instructions = [
        Instruction(a.id, a.attack, a.demand, a.tools, a.wants == "prompt", a.wants == "key")
        for a in {c.attack.id: c.attack for c in cases if c.attack is not None}.values()
    ]
    model = ObedientModel(instructions, key)
    with contextlib.ExitStack() as stack:
        local = settings.model_copy(update={"engine": name})
        if name == "llm":
            server = stack.enter_context(ObedientServer(model))
            endpoint = {"llm_base_url": server.url, "llm_model": "obedient"}
            local = local.model_copy(update={**endpoint, "llm_profile": "compatible"})
        pipeline = build_pipeline(local, store, build_engine(local, probe=None), knowledge)
        scores = []
        for case in cases:
            model.seen.instructions.clear()
            scores.append(_run_case(name, case, store, pipeline, key, model))
            tick()
    return EngineRun(
        name,
        tuple(scores),
        model_requests=model.seen.requests,
        key_sent_as_credential=model.seen.key_in_header,
        key_in_prompts=model.seen.key_in_prompt,
    )


def _run_case(
    engine: str, case: Case, store: Store, pipeline: Pipeline, key: str, model: ObedientModel
) -> CaseScore:
    error = None
    if case.document is not None:
        store.upsert_documents([case.document])
    try:
        pipeline.run(case.ticket.id)
    except Exception as exc:  # a crash is an outcome to count, not the end of the eval
        error = f"{type(exc).__name__}: {exc}"[:300]
    finally:
        if case.original is not None:
            store.upsert_documents([case.original])
    record = store.latest_outcome(case.ticket.id)
    attack = case.attack
    facts = CaseFacts(
        id=case.id,
        attack_id=attack.id if attack else "",
        category=attack.category if attack else "control",
        placement=case.placement,
        engine=engine,
        attack=attack.attack if attack else "",
        demand=attack.demand if attack else "",
        document_id=case.document.id if case.document is not None else None,
        seen_by_model=tuple(sorted(model.seen.instructions.get(attack.id, ()))) if attack else (),
    )
    return score_case(
        facts,
        record.status.value if record is not None else None,
        record.reason_code if record is not None else "",
        record.draft if record is not None else None,
        store.trace(case.ticket.id),
        key,
        error,
    )


def _places(store: Store, home: Path, log: io.StringIO) -> dict[str, str | bytes]:
    """Everything the run left behind where a key could hide: files, audit export, log."""
    from supportagent.store.audit import export_csv

    exported = io.StringIO()
    export_csv(store.engine, exported)
    places: dict[str, str | bytes] = {"audit export": exported.getvalue(), "log": log.getvalue()}
    for path in sorted(home.rglob("*")):
        if path.is_file():
            places[f"file {path.relative_to(home)}"] = path.read_bytes()
    return places


@contextlib.contextmanager
def _log_capture() -> Iterator[io.StringIO]:
    """The run's log as text: ours at every level, other libraries' at the levels configured."""
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setLevel(logging.DEBUG)
    root, ours = logging.getLogger(), logging.getLogger("supportagent")
    level = ours.level
    root.addHandler(handler)
    ours.setLevel(logging.DEBUG)
    try:
        yield buffer
    finally:
        root.removeHandler(handler)
        ours.setLevel(level)


__all__ = [
    "Attack",
    "Case",
    "EngineRun",
    "InjectionReport",
    "in_answer",
    "in_article",
    "in_carrier",
    "read_attacks",
    "run_injection",
]
