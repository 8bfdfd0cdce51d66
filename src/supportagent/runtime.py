"""Wiring: settings to a migrated store, the knowledge index, an engine and a pipeline."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from supportagent.agent.knowledge import Knowledge
from supportagent.agent.pipeline import Pipeline, PipelineConfig
from supportagent.config import Settings
from supportagent.engines.base import Engine
from supportagent.engines.offline import OfflineEngine
from supportagent.errors import UserError
from supportagent.ingest import IngestProblem, read_kb, read_resolved, read_tickets
from supportagent.store.store import Store


def open_store(settings: Settings) -> Store:
    """The store named by the settings, created and migrated if needed."""
    if settings.database_url is None:
        settings.home.mkdir(parents=True, exist_ok=True)
    store = Store(settings.resolved_database_url())
    store.migrate()
    return store


def build_engine(settings: Settings, *, demo_forbidden_post: bool = False) -> Engine:
    """The engine the settings ask for. Only the offline engine exists so far."""
    if settings.engine == "llm":
        raise UserError(
            "The llm engine is not available in this version; run with --engine offline "
            "(the default)."
        )
    return OfflineEngine(demo_forbidden_post=demo_forbidden_post)


def build_pipeline(
    settings: Settings, store: Store, engine: Engine, knowledge: Knowledge | None = None
) -> Pipeline:
    config = PipelineConfig(
        max_revisions=settings.max_revisions,
        max_reformulations=settings.max_reformulations,
        evidence_k=settings.evidence_k,
        evidence_threshold=settings.confidence_threshold,
    )
    return Pipeline(store, knowledge or Knowledge.from_store(store), engine, config)


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
    root = demo_path()
    kb = read_kb(root / "kb")
    resolved = read_resolved(root / "resolved.jsonl")
    inbox = read_tickets(root / "inbox.jsonl")
    store.upsert_documents([*kb.records, *resolved.records])
    store.add_tickets(inbox.records)
    problems = (*kb.problems, *resolved.problems, *inbox.problems)
    return DemoLoad(len(kb.records), len(resolved.records), len(inbox.records), problems)
