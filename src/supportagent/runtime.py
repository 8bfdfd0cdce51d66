"""Wiring: settings to a migrated store, the knowledge index, an engine and a pipeline."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from supportagent.agent.knowledge import Knowledge
from supportagent.agent.language import language_of
from supportagent.agent.pipeline import Pipeline, PipelineConfig
from supportagent.agent.safety import screen
from supportagent.agent.safety_semantic import SemanticSafety
from supportagent.config import Settings
from supportagent.domain import SafetyResult, Ticket
from supportagent.engines.base import Engine
from supportagent.engines.llm import LLMEngine
from supportagent.engines.offline import OfflineEngine
from supportagent.ingest import IngestProblem, read_kb, read_resolved, read_tickets
from supportagent.llm.budget import Budget
from supportagent.llm.chat import OpenAIChatModel
from supportagent.llm.detect import probe_server
from supportagent.llm.profiles import Probe, key_configured, resolve_endpoint
from supportagent.retrieval.dense import OnnxMiniLM
from supportagent.retrieval.exemplars import ExemplarIndex, load_exemplars
from supportagent.retrieval.multilingual import MultilingualE5, multilingual_available
from supportagent.store.llm_records import StoreResponseCache
from supportagent.store.store import Store


def open_store(settings: Settings) -> Store:
    """The store named by the settings, created and migrated if needed."""
    if settings.database_url is None:
        settings.home.mkdir(parents=True, exist_ok=True)
    store = Store(settings.resolved_database_url())
    store.migrate()
    return store


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
    endpoint = resolve_endpoint(settings, probe=probe)
    return LLMEngine(
        OpenAIChatModel(endpoint),
        budget=budget or run_budget(settings),
        trace_prompts=settings.trace_prompts,
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
    settings: Settings, store: Store, engine: Engine, knowledge: Knowledge | None = None
) -> Pipeline:
    config = PipelineConfig(
        max_revisions=settings.max_revisions,
        max_reformulations=settings.max_reformulations,
        evidence_k=settings.evidence_k,
        evidence_threshold=settings.confidence_threshold,
        greeting=settings.draft_greeting,
        closing=settings.draft_closing,
    )
    if isinstance(engine, LLMEngine):
        engine.use_cache(StoreResponseCache(store))  # the same question twice costs one call
    return Pipeline(store, knowledge or Knowledge.from_store(store, settings), engine, config)


def build_screen(settings: Settings) -> Callable[[Ticket], SafetyResult]:
    """The safety screen every ticket passes before anything else runs."""
    del settings  # the screen has no settings yet
    return lambda ticket: screen(ticket.text)


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


def build_semantic_safety() -> SemanticSafety | None:
    """The semantic safety detector: MiniLM for English, multilingual-e5 for the rest.

    None when the exemplars or the MiniLM model cannot be loaded; the rules still run.
    """
    safety, triage = load_exemplars("safety"), load_exemplars("triage")
    minilm = OnnxMiniLM()
    english = ExemplarIndex(safety, minilm)
    negatives = {"minilm": ExemplarIndex(triage, minilm)}
    multilingual = None
    if multilingual_available():
        e5 = MultilingualE5()
        multilingual = ExemplarIndex(safety, e5)
        negatives["e5"] = ExemplarIndex(triage, e5)
    return SemanticSafety(english, multilingual, negatives=negatives, language_of=language_of)
