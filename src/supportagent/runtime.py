"""Wiring: settings to a migrated store, the knowledge index, an engine and a pipeline."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from supportagent.agent.knowledge import Knowledge
from supportagent.agent.pipeline import Pipeline, PipelineConfig
from supportagent.agent.safety import SafetyScreen, default_screen
from supportagent.config import Settings
from supportagent.domain import SafetyResult, Ticket
from supportagent.engines.base import Engine
from supportagent.engines.offline import OfflineEngine
from supportagent.errors import UserError
from supportagent.llm.budget import Budget
from supportagent.llm.detect import probe_server
from supportagent.llm.profiles import Probe, key_configured, resolve_endpoint
from supportagent.store.audit_seal import AuditSeal, key_problem
from supportagent.store.records import PipelineStore

if TYPE_CHECKING:
    from supportagent.ingest import IngestProblem
    from supportagent.store.store import Store


def open_store(settings: Settings) -> Store:
    """The store named by the settings, created and migrated if needed.

    Raises UserError, saying what to fix, for a data directory that is not a folder, a URL of
    a database SupportAgent does not support, or an audit key that is too short. Failures of
    the database itself are SQLAlchemy errors, which the edge describes (``store/failures``).
    """
    from supportagent.store.store import Store  # SQLAlchemy: not for a triage of a warm index

    seal = audit_seal(settings)
    url = settings.resolved_database_url()
    _check_backend(url)
    folders = [seal.head_file.parent] if seal.head_file is not None else []
    if settings.database_url is None:
        folders.append(settings.home)
    for folder in folders:
        _make_folder(folder)
    store = Store(url, audit=seal)
    store.migrate()
    return store


def mapped_knowledge(settings: Settings) -> Knowledge | None:
    """The knowledge of the data directory's SQLite store read without writing to it, when
    the index on disk is that of its documents; None when the store must be opened
    (``open_store``): another database, one not created or not fully migrated yet, an index
    missing or out of date (opening the store builds it, filling the embedding cache).

    For a one-shot ``triage``, which writes nothing to the store when its index is warm: this
    way it imports no SQLAlchemy (``store/readonly.py``, docs/scaling.md).
    """
    from supportagent.store.readonly import open_readonly

    if settings.database_url is not None:
        return None  # PostgreSQL, or a file another data directory may share: the Store's
    audit_seal(settings)  # an unusable audit key is refused here too, as by open_store
    store = open_readonly(settings.home / "supportagent.db")
    if store is None:
        return None
    try:
        knowledge = Knowledge.from_readonly(store, settings)
    except sqlite3.Error:  # the Store reads it again, and says what is wrong if it still is
        knowledge = None
    if knowledge is None:
        store.close()
    # Otherwise the store stays open for the process: its embedding cache is read at search.
    return knowledge


def audit_seal(settings: Settings) -> AuditSeal:
    """The key and head file that seal the audit log, from the settings (docs/review.md)."""
    key = settings.audit_key.get_secret_value() if settings.audit_key is not None else None
    if key is not None and (problem := key_problem(key)):
        raise UserError(problem)
    head_file = settings.resolved_audit_head_file()
    # The SQLite file inside the data directory is written only by processes that use this
    # data directory, so they all write this head file; a database URL may be shared.
    complete = settings.database_url is None and settings.audit_head_file is None
    return AuditSeal(key.encode("utf-8") if key else None, head_file, head_file_complete=complete)


_BACKENDS = ("sqlite", "postgresql")


def _check_backend(url: str) -> None:
    import sqlalchemy as sa

    try:
        backend = sa.engine.make_url(url).get_backend_name()
    except sa.exc.ArgumentError:
        backend = None
    if backend not in _BACKENDS:
        raise UserError(
            "SUPPORTAGENT_DATABASE_URL must name a SQLite or PostgreSQL database "
            "(sqlite:///PATH or postgresql://USER@HOST:PORT/NAME)"
            + (f", not {backend}" if backend else "; it is not a URL")
            + "."
        )


def _make_folder(folder: Path) -> None:
    if folder.exists() and not folder.is_dir():
        raise UserError(
            f"{folder} is a file, not a folder: SUPPORTAGENT_HOME (and the audit head file's "
            "folder) must be folders. Point SUPPORTAGENT_HOME elsewhere or move the file."
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(
            f"Cannot create the data folder {folder}: {exc.strerror}. Set SUPPORTAGENT_HOME to "
            "a folder you can write to."
        ) from None


def build_engine(
    settings: Settings,
    *,
    demo_forbidden_post: bool = False,
    budget: Budget | None = None,
    probe: Probe | None = probe_server,
) -> Engine:
    """The engine the settings ask for; ``auto`` means llm when a key is set, else offline.

    ``budget``: the run's budget, when several engines share one (the web app's worker and
    its /triage requests); default: a new one with the settings' caps. ``probe`` asks a server
    the profiles do not name what it is. Raises UserError (saying what to set) for ``llm``
    without a usable endpoint.
    """
    choice = settings.engine
    if choice == "auto":
        choice = "llm" if key_configured(settings) else "offline"
    if choice == "offline":
        return OfflineEngine(demo_forbidden_post=demo_forbidden_post)
    from supportagent.engines.llm import LLMEngine  # not for offline runs: it loads the SDK
    from supportagent.llm.chat import OpenAIChatModel

    endpoint = resolve_endpoint(settings, probe=probe)
    return LLMEngine(
        OpenAIChatModel(endpoint),
        budget=budget or run_budget(settings),
        trace_prompts=settings.trace_prompts,
        redact_pii=settings.redact_pii,
        demo_forbidden_post=demo_forbidden_post,
        description=(
            f"llm ({endpoint.describe()}) [profile: {endpoint.profile_reason}; "
            f"timeout {endpoint.timeout:g} s]"
        ),
    )


def run_budget(settings: Settings) -> Budget:
    """A budget with the run's caps (``--max-api-calls`` counts every request, retries too)."""
    return Budget(settings.max_api_calls, settings.max_tokens)


def describe_engine(engine: Engine) -> str:
    """What the CLI prints as the engine of a run: its name, and for a model, which one."""
    return str(getattr(engine, "description", engine.name))


def usage_summary(engine: Engine) -> str | None:
    """Model requests and tokens this engine has spent in this run; None for an engine without."""
    budget = getattr(engine, "budget", None)
    if not isinstance(budget, Budget):
        return None
    return budget.used().describe()


def build_pipeline(
    settings: Settings,
    store: PipelineStore,
    engine: Engine,
    knowledge: Knowledge | None = None,
    *,
    demo_forbidden_post: bool = False,
) -> Pipeline:
    """The pipeline the settings describe; ``demo_forbidden_post`` asks for the decoy tool at
    the first step of every ticket (the engine's drafter asks again when it drafts).

    ``store``: a ``Store``, or the one-shot triage's ``ScratchStore`` with ``knowledge`` given
    and the offline engine (a model's response cache and the knowledge's documents are read
    from a ``Store``)."""
    config = PipelineConfig(
        max_revisions=settings.max_revisions,
        max_reformulations=settings.max_reformulations,
        evidence_k=settings.evidence_k,
        evidence_threshold=settings.confidence_threshold,
        greeting=settings.draft_greeting,
        closing=settings.draft_closing,
        demo_forbidden_post=demo_forbidden_post,
    )
    llm = sys.modules.get("supportagent.engines.llm")  # an LLMEngine exists only if it is loaded
    if llm is not None and isinstance(engine, llm.LLMEngine):
        from supportagent.store.llm_records import StoreResponseCache

        engine.use_cache(StoreResponseCache(_sql_store(store)))  # a question twice: one call
    knowledge = knowledge or Knowledge.from_store(_sql_store(store), settings)
    return Pipeline(store, knowledge, engine, config, build_screen(settings))


def _sql_store(store: PipelineStore) -> Store:
    from supportagent.store.store import Store

    if not isinstance(store, Store):
        raise TypeError(f"a Store is needed here, not {type(store).__name__}")
    return store


def build_screen(settings: Settings) -> Callable[[Ticket], SafetyResult]:
    """The safety screen every ticket passes before anything else runs: the rules, and unless
    ``SUPPORTAGENT_SEMANTIC_SAFETY=0`` the semantic detector too."""
    return default_screen() if settings.semantic_safety else SafetyScreen()


def demo_path() -> Path:
    """The folder of the demo corpus shipped inside the package."""
    return Path(str(resources.files("supportagent") / "demo"))


@dataclass(frozen=True, slots=True)
class DemoLoad:
    articles: int
    resolved: int
    tickets: int
    problems: tuple[IngestProblem, ...]


def load_demo(store: Store) -> DemoLoad:
    """Load the demo KB, resolved tickets and inbox into ``store``."""
    from supportagent.ingest import read_kb, read_resolved, read_tickets  # not for a triage

    root = demo_path()
    kb = read_kb(root / "kb")
    resolved = read_resolved(root / "resolved.jsonl")
    inbox = read_tickets(root / "inbox.jsonl")
    store.upsert_documents([*kb.records, *resolved.records])
    store.add_tickets(inbox.records)
    problems = (*kb.problems, *resolved.problems, *inbox.problems)
    return DemoLoad(len(kb.records), len(resolved.records), len(inbox.records), problems)
