"""Throughput of the outer loop. Run by hand, never by the test suite.

1. The llm engine against the local stub model server (tests/llm_stub.py) answering each call
   after a fixed latency, at several concurrencies, beside the ideal
   ``concurrency / (calls per ticket x latency)``.
   The same spread over several worker processes on one store (what `supportagent worker`
   on each core does), since one process runs Python on one core at a time.
2. The offline engine's tickets per second on one core (concurrency 1, the process pinned).
3. Pipeline overhead per ticket outside model time at a large corpus: the llm engine against a
   stub with no latency; overhead = wall time - time spent inside model calls, per ticket.

Run: .venv/bin/python bench/throughput.py [--tickets 500] [--latency 0.3]
       [--concurrency 1 4 16 64] [--corpus 10000] [--embedder none|onnx]
       [--processes 2] [--only llm split offline overhead] [--postgres URL]
Each measurement uses a fresh store: SQLite in a temporary directory, or with --postgres a new
database on that server, dropped afterwards.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from multiprocessing.connection import Connection
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import sqlalchemy as sa

from llm_stub import KEY, EvidenceModel, Received, StubLLM, StubReply
from store_checks import temporary_database
from supportagent.agent.knowledge import Knowledge
from supportagent.config import Settings, load_settings
from supportagent.domain import DocKind, Document, Ticket
from supportagent.engines.llm import LLMEngine
from supportagent.engines.offline import OfflineEngine
from supportagent.ingest import read_kb, read_resolved, read_tickets
from supportagent.llm.budget import Budget
from supportagent.llm.chat import ChatReply, ChatRequest, OpenAIChatModel, RequestMeter
from supportagent.llm.profiles import resolve_endpoint
from supportagent.runtime import build_pipeline, demo_path, open_store
from supportagent.scheduler import Scheduler
from supportagent.store.store import Store


def demo_documents() -> list[Document]:
    root = demo_path()
    return [*read_kb(root / "kb").records, *read_resolved(root / "resolved.jsonl").records]


def bench_tickets(n: int) -> list[Ticket]:
    """``n`` tickets cycling through the demo inbox, each made unique so no reply is cached."""
    inbox = read_tickets(demo_path() / "inbox.jsonl").records
    return [
        replace(inbox[i % len(inbox)], id=f"B-{i:05d}", body=f"{inbox[i % len(inbox)].body} #{i}")
        for i in range(n)
    ]


def synthetic_corpus(n: int, seed: int = 7) -> list[Document]:
    """Filler articles made of the demo's own words, so that they compete in every search."""
    rng = random.Random(seed)
    words = sorted({w for d in demo_documents() for w in d.body.split() if w.isalpha()})
    docs = []
    for i in range(n):
        sections = [f"## Part {j}\n\n" + " ".join(rng.choices(words, k=60)) + "." for j in range(3)]
        docs.append(Document(f"kb-filler-{i:05d}", DocKind.KB, f"Note {i}", "\n\n".join(sections)))
    return docs


#: Set by --postgres: the server to create a fresh database on for each measurement.
PG_SERVER: str | None = None


@contextmanager
def fresh_store(docs: list[Document], tickets: list[Ticket]) -> Iterator[tuple[Settings, Store]]:
    """A fresh store: SQLite in a temporary directory, or a new PostgreSQL database."""
    with tempfile.TemporaryDirectory() as tmp, fresh_database() as url:
        settings = load_settings(home=Path(tmp), database_url=url)
        store = open_store(settings)
        store.upsert_documents(docs)
        store.add_tickets(tickets)
        try:
            yield settings, store
        finally:
            store.close()


@contextmanager
def fresh_database() -> Iterator[str | None]:
    if PG_SERVER is None:
        yield None
        return
    admin = sa.create_engine(f"{PG_SERVER}/postgres", isolation_level="AUTOCOMMIT")
    try:
        with temporary_database(admin, "supportagent_bench") as url:
            yield url
    finally:
        admin.dispose()


class TimedModel:
    """A ChatModel that adds up the time spent inside the model calls it passes on."""

    def __init__(self, inner: OpenAIChatModel) -> None:
        self.inner, self.model, self.seconds = inner, inner.model, 0.0

    def complete(self, request: ChatRequest, meter: RequestMeter | None = None) -> ChatReply:
        start = time.perf_counter()
        try:
            return self.inner.complete(request, meter)
        finally:
            self.seconds += time.perf_counter() - start


def llm_engine(url: str, home: Path) -> tuple[LLMEngine, TimedModel]:
    settings = load_settings(
        home=home, engine="llm", llm_base_url=url, llm_model="stub-model", llm_api_key=KEY
    )
    model = TimedModel(OpenAIChatModel(resolve_endpoint(settings), timeout=60))
    return LLMEngine(model, budget=Budget()), model


#: What differs between two bench tickets made from the same demo ticket: the number added to
#: the body (the prompts' fences carry no digest of the text any more).
_VARIES = re.compile(r"#\d+")


def _serve_stub(latency: float, urls: Queue[str], stop: Event) -> None:
    model = EvidenceModel()
    replies: dict[tuple[str, bool, str], StubReply] = {}

    def answer(request: Received) -> StubReply:
        # On a 2-core machine the stub's own parsing would compete with the system under test,
        # so it works each reply out once per prompt and then only waits the latency.
        key = (request.stage, request.is_repair, _VARIES.sub("", request.prompt))
        if key not in replies:
            replies[key] = model(request)
        return replace(replies[key], delay=latency)

    with StubLLM(answer) as stub:
        urls.put(stub.url)
        stop.wait()


@contextmanager
def stub_server(latency: float) -> Iterator[str]:
    """The stub model server in a process of its own, so that its work is not counted as ours."""
    context = multiprocessing.get_context("spawn")
    urls: Queue[str] = context.Queue()
    stop = context.Event()
    process = context.Process(target=_serve_stub, args=(latency, urls, stop), daemon=True)
    process.start()
    try:
        yield urls.get(timeout=60)
    finally:
        stop.set()
        process.join(10)


def knowledge(docs: list[Document], embedder: str) -> Knowledge:
    return Knowledge(docs, embedder="default" if embedder == "onnx" else None)


def run_llm(args: argparse.Namespace) -> None:
    docs, tickets = demo_documents(), bench_tickets(args.tickets)
    kb = knowledge(docs, args.embedder)
    ms = args.latency * 1000
    print(f"\nllm engine, stub model at {ms:.0f} ms a call, {len(tickets)} tickets")
    print(
        "| concurrency | tickets/s | calls/ticket | ideal tickets/s | share of ideal | CPU/ticket |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for k in args.concurrency:
        with stub_server(args.latency) as url, fresh_store(docs, tickets) as (s, store):
            engine, _ = llm_engine(url, s.home)
            pipeline = build_pipeline(s, store, engine, kb)
            start, cpu = time.perf_counter(), time.process_time()
            summary = Scheduler(pipeline, concurrency=k).run()
            wall = time.perf_counter() - start
            cpu_ms = 1000 * (time.process_time() - cpu) / summary.processed
            calls = engine.budget.run.calls / summary.processed
            rate, ideal = summary.processed / wall, k / (calls * args.latency)
            share = rate / ideal
            print(
                f"| {k} | {rate:.2f} | {calls:.2f} | {ideal:.2f} | {share:.0%} | {cpu_ms:.0f} ms |"
            )


def _process_worker(
    home: Path, database_url: str | None, stub_url: str, k: int, embedder: str, pipe: Connection
) -> None:
    """One worker process of the split runs: set up, say ready, wait for go, run, report."""
    settings = load_settings(home=home, database_url=database_url)
    store = open_store(settings)
    engine, _ = llm_engine(stub_url, home)
    pipeline = build_pipeline(settings, store, engine, knowledge(demo_documents(), embedder))
    pipe.send("ready")
    pipe.recv()
    summary = Scheduler(pipeline, concurrency=k).run()
    pipe.send((summary.processed, engine.budget.run.calls, time.time()))


def run_split(args: argparse.Namespace) -> None:
    """K tickets in flight spread over P worker processes sharing one store."""
    docs, tickets = demo_documents(), bench_tickets(args.tickets)
    print(f"\nthe same, {len(tickets)} tickets, K in flight over P worker processes")
    print("| P x concurrency | tickets/s | calls/ticket | ideal tickets/s | share of ideal |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    context = multiprocessing.get_context("spawn")
    for k in [k for k in args.concurrency if k >= 2 * args.processes]:
        per = k // args.processes
        with stub_server(args.latency) as url, fresh_store(docs, tickets) as (s, _store):
            pipes, processes = [], []
            for _ in range(args.processes):
                mine, theirs = context.Pipe()
                worker_args = (s.home, s.database_url, url, per, args.embedder, theirs)
                processes.append(context.Process(target=_process_worker, args=worker_args))
                processes[-1].start()
                pipes.append(mine)
            for pipe in pipes:
                pipe.recv()
            start = time.time()
            for pipe in pipes:
                pipe.send("go")
            done = [pipe.recv() for pipe in pipes]
            for process in processes:
                process.join(30)
        processed, calls = sum(d[0] for d in done), sum(d[1] for d in done)
        rate = processed / (max(d[2] for d in done) - start)
        ideal = k / (calls / processed * args.latency)
        label = f"{args.processes} x {per}"
        print(
            f"| {label} | {rate:.2f} | {calls / processed:.2f} | {ideal:.2f} | {rate / ideal:.0%} |"
        )


def run_offline(args: argparse.Namespace) -> None:
    docs, tickets = demo_documents(), bench_tickets(args.tickets)
    kb = knowledge(docs, args.embedder)
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(before)})  # the scheduler's threads inherit this
    try:
        with fresh_store(docs, tickets) as (settings, store):
            pipeline = build_pipeline(settings, store, OfflineEngine(), kb)
            start = time.perf_counter()
            summary = Scheduler(pipeline).run()
            wall = time.perf_counter() - start
    finally:
        os.sched_setaffinity(0, before)
    print(
        f"\noffline engine, one core: {summary.processed} tickets in {wall:.1f} s = "
        f"{summary.processed / wall:.1f} tickets/s ({1000 * wall / summary.processed:.1f} ms each)"
    )


def run_overhead(args: argparse.Namespace) -> None:
    docs = [*demo_documents(), *synthetic_corpus(args.corpus - len(demo_documents()))]
    tickets = bench_tickets(args.overhead_tickets)
    searching = [0.0]
    with stub_server(0.0) as url, fresh_store(docs, tickets) as (settings, store):
        # As the agent builds it: from the store, so that the index starts in sync with it.
        start = time.perf_counter()
        kb = Knowledge.from_store(store, settings.model_copy(update={"embedder": args.embedder}))
        build = time.perf_counter() - start
        search = kb.search

        def timed_search(*a: Any, **kw: Any) -> Any:
            begun = time.perf_counter()
            try:
                return search(*a, **kw)
            finally:
                searching[0] += time.perf_counter() - begun

        kb.search = timed_search  # type: ignore[method-assign]
        engine, model = llm_engine(url, settings.home)
        pipeline = build_pipeline(settings, store, engine, kb)
        start, cpu = time.perf_counter(), time.process_time()
        summary = Scheduler(pipeline).run()
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    n = summary.processed

    def ms(seconds: float) -> str:
        return f"{1000 * seconds / n:.1f} ms"

    print(
        f"\npipeline overhead at {len(docs)} documents ({len(kb.retriever)} passages, index "
        f"built in {build:.1f} s), {n} tickets, {engine.budget.run.calls} model calls, one at a "
        f"time. Per ticket: wall {ms(wall)}, inside model calls {ms(model.seconds)}, "
        f"overhead {ms(wall - model.seconds)} (of which search {ms(searching[0])}); "
        f"CPU of this process {ms(cpu)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tickets", type=int, default=500)
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per model call")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16, 64])
    parser.add_argument("--corpus", type=int, default=10_000, help="documents, for the overhead")
    parser.add_argument("--overhead-tickets", type=int, default=100)
    parser.add_argument("--embedder", choices=["none", "onnx"], default="none")
    parser.add_argument("--processes", type=int, default=2, help="worker processes, for split")
    parser.add_argument("--only", nargs="+", choices=["llm", "split", "offline", "overhead"])
    parser.add_argument(
        "--postgres",
        metavar="URL",
        help="server URL without a database, e.g. postgresql+psycopg://postgres@127.0.0.1:5432",
    )
    args = parser.parse_args()
    global PG_SERVER
    PG_SERVER = args.postgres
    parts: dict[str, Callable[[argparse.Namespace], Any]] = {
        "llm": run_llm,
        "split": run_split,
        "offline": run_offline,
        "overhead": run_overhead,
    }
    store = "PostgreSQL" if args.postgres else "SQLite"
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"cpus: {os.cpu_count()} (load average {load}); store: {store}; embedder: {args.embedder}"
    )
    for name in args.only or parts:
        parts[name](args)


if __name__ == "__main__":
    main()
