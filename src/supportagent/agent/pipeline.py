"""The inner loop for one ticket: safety, classify, retrieve, draft, check, stage.

This is the only module that knows the order of the stages. Each stage returns a result; the
pipeline appends it to the trace (persisted as it goes) and decides what happens next.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from supportagent.agent.conflicts import confirm_model_conflicts
from supportagent.agent.evidence import EvidenceGate, is_ambiguous, reformulate, signals_agree
from supportagent.agent.facts import Conflict, Fact, extract_facts, find_conflicts, states_value
from supportagent.agent.grounding import (
    check_grounding,
    differing_flags,
    differing_values,
    exception_flags,
    one_sided_values,
)
from supportagent.agent.knowledge import Knowledge
from supportagent.agent.questions import ticket_prose, ticket_questions
from supportagent.agent.safety import default_screen
from supportagent.agent.tools import MODEL_TOOLS, GateDecision, ToolDenied, ToolGate
from supportagent.domain import (
    Bucket,
    Classification,
    DocKind,
    Draft,
    EvidenceDecision,
    Hit,
    Outcome,
    Passage,
    SafetyResult,
    Status,
    Ticket,
    TraceEvent,
    Verdict,
    resolved_answer,
)
from supportagent.engines.base import Engine, MeteredEngine
from supportagent.errors import ModelError, UserError
from supportagent.language import detect_language, language_name
from supportagent.planted import find_flags
from supportagent.store.records import AttemptHistory, PipelineStore, TraceBatch
from supportagent.store.serde import draft_to_json, hit_to_json, safety_to_json


@dataclass(frozen=True, slots=True)
class PipelineConfig:
    max_revisions: int = 2
    max_reformulations: int = 2
    evidence_k: int = 6
    evidence_threshold: float | None = None
    #: The team's opening and closing lines, put around every draft staged for review.
    greeting: str = ""
    closing: str = ""
    #: Demo of the tool gate: ask for the decoy ``post_to_customer`` before anything else, so
    #: every ticket's trace shows the refusal, whether it ends escalated, routed or drafted.
    demo_forbidden_post: bool = False


class _Trace:
    """Collects a run's events and commits each stage result in a transaction of its own.

    The tool decisions and model calls (events and call records) that lead to a stage result
    commit with it; the final ``stage`` event commits with the staged outcome itself.
    """

    def __init__(
        self,
        store: PipelineStore,
        ticket_id: str,
        attempt: int,
        conceal: Callable[[str], str] | None = None,
    ) -> None:
        self.store, self.ticket_id, self.attempt = store, ticket_id, attempt
        #: Puts the ticket's personal data back as placeholders in what is traced (an engine
        #: that redacts what it sends a model provides it); identity otherwise.
        self.conceal = conceal
        self.events: list[TraceEvent] = []
        self.calls: list[dict[str, Any]] = []  # model-call records
        self._written = 0  # events[:_written] are in the store
        self._unwritten_calls: list[dict[str, Any]] = []
        self._t0 = time.perf_counter()

    def add(self, stage: str, status: str, **detail: Any) -> None:
        now = time.perf_counter()
        if self.conceal is not None:
            detail = _concealed(detail, self.conceal)
        self.events.append(TraceEvent(stage, status, detail, (now - self._t0) * 1000))
        self._t0 = now
        if stage not in _COMMITTED_WITH_NEXT:
            self.flush()  # each stage result commits in its own transaction

    def add_call(self, record: dict[str, Any]) -> None:
        self.calls.append(record)
        self._unwritten_calls.append(record)

    def tool(self, decision: GateDecision) -> None:
        status = "allowed" if decision.allowed else "denied"
        self.add(
            "tool", status, tool=decision.tool, reason=decision.reason, args=decision.arguments
        )

    def flush(self) -> None:
        """Write what is pending, in one transaction."""
        self.store.append_trace(self._pending())
        self._written, self._unwritten_calls = len(self.events), []

    def stage(self, outcome: Outcome, attempt: int) -> int:
        """Stage ``outcome`` together with the pending events and a final ``stage`` event."""
        self.add("stage", outcome.status.value, reason_code=outcome.reason_code)
        try:
            history = AttemptHistory(self.events, self.calls)
            row = self.store.stage_outcome(outcome, attempt, self._pending(), history)
        except Exception:
            self.events.pop()  # nothing was staged; keep the rest of the trace for diagnosis
            self.flush()
            raise
        self._written, self._unwritten_calls = len(self.events), []
        return row

    def _pending(self) -> TraceBatch:
        start = self._written
        pending = list(enumerate(self.events[start:], start=start))
        return TraceBatch(self.ticket_id, self.attempt, pending, list(self._unwritten_calls))


class Pipeline:
    """Runs tickets through the stages with one engine over one store and one knowledge base."""

    def __init__(
        self,
        store: PipelineStore,
        knowledge: Knowledge,
        engine: Engine,
        config: PipelineConfig | None = None,
        screen: Callable[[Ticket], SafetyResult] | None = None,
    ) -> None:
        self.store = store
        self.knowledge = knowledge
        self.engine = engine
        self.config = config or PipelineConfig()
        #: The safety gate; by default the rules and the semantic detector.
        self.screen = screen or default_screen()
        threshold = self.config.evidence_threshold
        self.evidence_gate = EvidenceGate() if threshold is None else EvidenceGate(threshold)
        use_embedder = getattr(engine, "use_embedder", None)
        if callable(use_embedder):  # an engine that ranks sentences by meaning
            use_embedder(knowledge.sentence_embedder())
        use_own_names = getattr(engine, "use_own_names", None)
        if callable(use_own_names):  # an engine that compares meanings without them
            use_own_names(knowledge.own_names)  # read on the first draft, not here
        use_links = getattr(engine, "use_links", None)
        if callable(use_links):  # an engine that looks for conflicts as the checks do
            use_links(knowledge.links)

    def run(
        self,
        ticket_id: str,
        on_stage: Callable[[str], None] | None = None,
        *,
        attempt: int | None = None,
    ) -> Outcome:
        """Take one ticket from the inbox to a staged outcome, tracing every step.

        ``attempt``: an attempt the caller already began (a scheduler's claim); default: begin one.
        """
        if attempt is None:
            attempt = self.store.begin_attempt(ticket_id)
        self.knowledge.sync(self.store)  # answers approved elsewhere are evidence now
        trace = _Trace(self.store, ticket_id, attempt, self._concealer(ticket_id))
        gate = ToolGate(self._tools(trace), on_decision=trace.tool)
        notify = on_stage or (lambda _stage: None)
        try:
            return self._run(ticket_id, attempt, trace, gate, notify)
        except BaseException:
            with contextlib.suppress(Exception):  # the original error matters more
                trace.flush()  # what happened so far, for diagnosis
            raise

    def _run(
        self,
        ticket_id: str,
        attempt: int,
        trace: _Trace,
        gate: ToolGate,
        notify: Callable[[str], None],
    ) -> Outcome:
        def stage(
            status: Status,
            reason: str,
            bucket: Bucket | None,
            safety: SafetyResult | None,
            draft: Draft | None = None,
        ) -> Outcome:
            notify("stage")
            if draft is not None:
                draft = self._for_review(ticket_id, draft)
            outcome = Outcome(
                ticket_id, status, reason, bucket, draft, safety, (), self.engine.name
            )
            gate.call("stage_draft", outcome=outcome, attempt=attempt)
            return replace(outcome, trace=tuple(trace.events))

        ticket: Ticket = gate.call("get_ticket", ticket_id=ticket_id)
        if self.config.demo_forbidden_post:
            self._request_decoy(ticket, gate, trace)
        notify("safety")
        safety = self.screen(ticket)
        trace.add(
            "safety", "escalate" if safety.auto_escalate else "pass", **safety_to_json(safety)
        )
        if safety.auto_escalate:
            return stage(Status.ESCALATED, safety.reason_code, Bucket.NEEDS_HUMAN, safety)

        bucket: Bucket | None = None
        try:
            notify("classify")
            classification = self.engine.classify(ticket, safety)
            self._record_model_calls(trace)
            bucket = classification.bucket
            trace.add("classify", bucket.value, **_classification(classification))
            if bucket is Bucket.NOT_A_QUESTION:
                return stage(Status.ROUTED, classification.reason_code, bucket, safety)
            if bucket is Bucket.NEEDS_HUMAN:
                return stage(Status.ESCALATED, classification.reason_code, bucket, safety)

            language = detect_language(ticket_prose(ticket))
            corpus = self.knowledge.language()
            foreign = language.reliable and language.code != corpus
            trace.add(
                "language",
                "other" if foreign else "same",
                code=language.code,
                name=language.name,
                confidence=language.confidence,
                reliable=language.reliable,
                corpus=corpus,
            )
            if foreign and getattr(self.engine, "quotes_evidence", False):
                # An extract of English passages is no answer to a Spanish ticket.
                trace.add(
                    "language_gate",
                    "escalate",
                    reason=f"The ticket is in {language.name} ({language.code}, "
                    f"{language.confidence:.2f}); the {self.engine.name} engine quotes the "
                    f"knowledge base, which is in {language_name(corpus)}, and cannot answer "
                    f"in {language.name}.",
                )
                return stage(Status.ESCALATED, "language_unsupported", Bucket.ANSWERABLE, safety)

            notify("retrieve")
            decision = self._gather(ticket, gate, trace)
            self._record_model_calls(trace)
            if not decision.sufficient:
                return stage(Status.ESCALATED, "weak_evidence", Bucket.ANSWERABLE, safety)

            notify("draft")
            hits = self._per_question(ticket, decision.hits, gate, trace)
            draft, verdict = self._draft_and_check(
                ticket, hits, gate, trace, notify, translated=foreign
            )
            if not draft.sentences and getattr(self.engine, "quotes_evidence", False):
                # Nothing found answers: the best article's other sections, once (no model
                # call is spent: only an engine that quotes the evidence looks again).
                more = self._sections(ticket, hits, trace)
                if more:
                    draft, verdict = self._draft_and_check(
                        ticket, [*hits, *more], gate, trace, notify, translated=foreign
                    )
        except ModelError as exc:
            # The model misbehaved (or this ticket spent its budget): a person takes over.
            self._record_model_calls(trace)
            trace.add("model_error", exc.reason_code, message=str(exc))
            return stage(Status.ESCALATED, exc.reason_code, bucket, safety)
        except UserError:
            # The run stops (endpoint down, run budget spent); the ticket waits for the next.
            self._record_model_calls(trace)
            raise
        if verdict.passed:
            draft = replace(draft, greeting=self.config.greeting, closing=self.config.closing)
            return stage(Status.PENDING_REVIEW, "drafted", Bucket.ANSWERABLE, safety, draft)
        return stage(
            Status.ESCALATED,
            verdict.reason_code or "check_failed",
            Bucket.ANSWERABLE,
            safety,
            draft,
        )

    # --- stages --------------------------------------------------------------------------

    def _gather(self, ticket: Ticket, gate: ToolGate, trace: _Trace) -> EvidenceDecision:
        """Search, judge the evidence, and reformulate up to the cap while it is too weak."""
        query = ticket.text
        decision: EvidenceDecision | None = None
        hits: list[Hit] = []
        # A model engine brings its own reformulator; otherwise the offline one, which drops
        # words the corpus never uses and borrows vocabulary from the resolved tickets found.
        engine_reformulate = getattr(self.engine, "reformulate", None)
        for attempt in range(self.config.max_reformulations + 1):
            if attempt > 0:
                retry = (
                    engine_reformulate(ticket, attempt, query)
                    if callable(engine_reformulate)
                    else reformulate(
                        ticket,
                        attempt,
                        self.knowledge.knows,
                        self.knowledge.idf,
                        [h.passage for h in hits],
                    )
                )
                if retry is None:
                    break
                query = retry
                trace.add("reformulate", "retry", attempt=attempt, query=query)
            hits = self._search(gate, query)
            retriever = self.knowledge.retriever
            trace.add(
                "retrieve",
                "ok",
                query=query,
                hits=[hit_to_json(h) for h in hits],
                # With these, each hit's fused score follows from its signals' raw scores.
                fusion=retriever.fusion.describe(),
                scales={name: round(v, 6) for name, v in retriever.scales(query).items()},
            )
            decision, signals = self.evidence_gate.judge(
                ticket, hits, query, attempt, self.knowledge
            )
            decision = self._assess(ticket, hits, decision, signals, trace)
            trace.add(
                "evidence",
                "sufficient" if decision.sufficient else "weak",
                confidence=decision.top_score,
                reason=decision.reason,
                attempt=attempt,
                **signals,
            )
            if decision.sufficient:
                break
        assert decision is not None
        return decision

    def _assess(
        self,
        ticket: Ticket,
        hits: Sequence[Hit],
        decision: EvidenceDecision,
        signals: dict[str, Any],
        trace: _Trace,
    ) -> EvidenceDecision:
        """Ask the engine's evidence assessor, if it has one, only when the signals are torn."""
        assess = getattr(self.engine, "assess_evidence", None)
        if (
            not callable(assess)
            or signals.get("measure") == "none"
            or not is_ambiguous(decision.top_score, float(signals["threshold"]))
        ):
            return decision
        sufficient, why = assess(ticket, hits)
        self._record_model_calls(trace)
        trace.add("assess", "sufficient" if sufficient else "weak", reason=why)
        return replace(
            decision, sufficient=sufficient, reason=f"{decision.reason}; assessor: {why}"
        )

    def _per_question(
        self, ticket: Ticket, hits: Sequence[Hit], gate: ToolGate, trace: _Trace
    ) -> list[Hit]:
        """For a ticket that asks several things, the best passages for each question too.

        One search for the whole ticket favours what most of it is about; the second question
        ("and what happens if we reuse a key?") may need a passage of its own.
        """
        questions = ticket_questions(ticket)
        out = list(hits)
        have = {h.id for h in out}
        # The articles a resolved ticket found was answered from: the drafter may quote them
        # (an article is preferred to a ticket saying the same), the best few of them.
        linked = [p for p in self.knowledge.linked_passages([h.passage for h in hits])]
        if linked:
            similar = self.knowledge.similarity(ticket_prose(ticket), [p.id for p in linked])
            order = sorted(range(len(linked)), key=lambda i: -(similar[i] if similar else 0.0))[
                :LINKED_HITS
            ]
            extra = [Hit(linked[i], len(out) + n + 1, 0.0) for n, i in enumerate(order)]
            trace.add("retrieve", "linked", query="", hits=[hit_to_json(h) for h in extra])
            out.extend(extra)
            have.update(h.id for h in extra)
        if len(questions) < 2:
            return out
        for question in questions:
            found = [h for h in self._search(gate, question.text) if h.id not in have]
            extra = found[:PER_QUESTION_HITS]
            if not extra:
                continue
            trace.add(
                "retrieve",
                "question",
                query=question.text,
                hits=[hit_to_json(h) for h in extra],
            )
            for hit in extra:
                have.add(hit.id)
                out.append(Hit(hit.passage, len(out) + 1, hit.score, hit.signals))
        return out

    def _sections(self, ticket: Ticket, hits: Sequence[Hit], trace: _Trace) -> list[Hit]:
        """The best article's other sections, the best few by meaning, when both searches put
        that article first (round 11 of the drafter): passage search can rank an article's
        introduction and leave out the section that answers. When only one search ranks the
        top hit, its other sections are more wrong passages to quote from, so none."""
        if not hits or not signals_agree(hits[0]):
            return []
        siblings = self.knowledge.sibling_passages([h.passage for h in hits])
        if not siblings:
            return []
        similar = self.knowledge.similarity(ticket_prose(ticket), [p.id for p in siblings])
        if not similar:
            return []
        order = sorted(range(len(siblings)), key=lambda i: -similar[i])[:SIBLING_HITS]
        extra = [Hit(siblings[i], len(hits) + n + 1, 0.0) for n, i in enumerate(order)]
        trace.add("retrieve", "sections", query="", hits=[hit_to_json(h) for h in extra])
        return extra

    def _search(self, gate: ToolGate, query: str) -> list[Hit]:
        k = self.config.evidence_k
        docs: list[Hit] = gate.call("search_docs", query=query, k=k)
        resolved: list[Hit] = gate.call("search_resolved", query=query, k=k)
        merged = sorted([*docs, *resolved], key=lambda h: (-h.score, h.rank, h.id))[:k]
        return [Hit(h.passage, rank, h.score, h.signals) for rank, h in enumerate(merged, start=1)]

    def _draft_and_check(
        self,
        ticket: Ticket,
        hits: Sequence[Hit],
        gate: ToolGate,
        trace: _Trace,
        notify: Callable[[str], None],
        *,
        translated: bool = False,
    ) -> tuple[Draft, Verdict]:
        """Draft, check, revise while the checker objects (at most ``max_revisions`` times)."""
        passages = [h.passage for h in hits]
        # What the drafter cites from resolved tickets is also held against their sources.
        context = self.knowledge.linked_passages(passages)
        conflicts = self._conflicts_among([*passages, *context])
        if conflicts:
            trace.add("conflicts", "found", conflicts=_conflicts_json(conflicts))
        untrusted = planted_flags(passages)
        if untrusted:
            trace.add("untrusted_text", "flagged", flags=untrusted, handling=FLAG_HANDLING)
        draft: Draft | None = None
        verdict: Verdict | None = None
        for revision in range(self.config.max_revisions + 1):
            previous = draft
            draft = self.engine.draft(ticket, hits, previous, verdict)
            self._record_model_calls(trace)
            # The trace keeps the draft as the model wrote it (personal data as placeholders);
            # the checks and the reviewer get the real values back.
            trace.add("draft", f"revision {revision}", **draft_to_json(draft))
            draft = self._restored(ticket.id, draft)
            # What the model asks for passes a gate of its own, narrowed to MODEL_TOOLS.
            model_gate = gate.narrowed(MODEL_TOOLS)
            for request in draft.tool_requests:
                try:
                    model_gate.call(request.name, **request.arguments)
                except ToolDenied as denied:
                    trace.add("gate", "denied", tool=denied.name, reason=denied.reason)
            # The other side of a value the draft states may sit in a passage the question
            # did not retrieve: look for it with the draft's own sentences (round 22).
            probed = self._probe(gate, draft, [*passages, *context], trace)
            if probed:
                found = self._probed_conflicts(draft, [*passages, *context], probed)
                context = [*context, *(p for extra in probed.values() for p in extra)]
                if found:
                    conflicts = [*conflicts, *found]
                    trace.add("conflicts", "probed", conflicts=_conflicts_json(found))
            if previous is not None and previous.sentences == draft.sentences:
                trace.add("revise", "unchanged", reason="the drafter could not fix the problems")
                assert verdict is not None
                return draft, verdict
            notify("check")
            grounding = check_grounding(
                draft, [*passages, *context], conflicts=conflicts, translated=translated
            )
            verdict = grounding
            if grounding.passed:
                flags = exception_flags(draft, conflicts)
                if flags:  # a scoped exception, cited with its rule: the reviewer confirms
                    draft = replace(draft, flags=tuple(dict.fromkeys((*draft.flags, *flags))))
                # Two quoted sources, two values for what one question asks: the reviewer is
                # told, whether or not the conflict check paired them.
                questions = ticket_questions(ticket)
                pairs = differing_values(draft, [*passages, *context], questions)
                # A draft that states one of two such values alone, the other in a document it
                # cites: flagged the same way, the other source's sentence named. (Holding it
                # against retrieved passages it does not cite too flagged correct drafts.)
                one_sided = one_sided_values(draft, [*passages, *context], questions)
                flags = differing_flags(draft, [*pairs, *one_sided])
                if flags:
                    trace.add(
                        "values",
                        "differ",
                        pairs=[
                            *(_value_pair(a, b) for a, b in pairs),
                            *(_value_pair(a, b, one_sided=True) for a, b in one_sided),
                        ],
                    )
                    draft = replace(draft, flags=tuple(dict.fromkeys((*draft.flags, *flags))))
                verdict = self.engine.check(ticket, draft, hits)
                self._record_model_calls(trace)
                # A model's word alone is not a conflict that stops the revisions.
                verdict = confirm_model_conflicts(
                    verdict, grounding, [*passages, *context], conflicts
                )
            trace.add(
                "check",
                "pass" if verdict.passed else "fail",
                checker=verdict.checker,
                context=[p.id for p in context],
                problems=[
                    {"code": p.code, "message": p.message, "sentence": p.sentence}
                    for p in verdict.problems
                ],
                **({"claims": [list(c) for c in verdict.claims]} if verdict.claims else {}),
            )
            if verdict.passed:
                break
            if any(p.code in _NO_REVISION for p in verdict.problems):
                break  # no draft from this evidence can pass; revising would hide that
        assert draft is not None and verdict is not None
        return draft, verdict

    def _conflicts_among(self, passages: Sequence[Passage]) -> list[Conflict]:
        """The conflicts between the facts of ``passages``, read with the knowledge base's
        sentence embedder, term weights and links."""
        return find_conflicts(
            extract_facts(passages),
            embed=self.knowledge.sentence_embedder(),
            idf=self.knowledge.idf,
            links=self.knowledge.links,
        )

    def _probe(
        self, gate: ToolGate, draft: Draft, have: Sequence[Passage], trace: _Trace
    ) -> dict[str, list[Passage]]:
        """Per draft sentence with a value (at most ``PROBE_SENTENCES``), the article passages
        that a search for that very sentence finds and the evidence lacks (``PROBE_HITS``).
        Articles only: a knowledge base is written to agree with itself, where resolved
        tickets are full of one customer's amounts and dates."""
        known = {p.id for p in have}
        out: dict[str, list[Passage]] = {}
        asked = [s.text for s in draft.sentences if states_value(s.text)][:PROBE_SENTENCES]
        if asked:
            # Said before the searches: they are the pipeline's own, not the drafter's requests.
            trace.add("probe", "searching", sentences=asked)
        for sentence in asked:
            hits: list[Hit] = gate.call("search_docs", query=sentence, k=PROBE_HITS)
            extra = [h for h in hits if h.id not in known]
            if extra:
                known.update(h.id for h in extra)
                out[sentence] = [h.passage for h in extra]
                trace.add("probe", "found", query=sentence, hits=[hit_to_json(h) for h in extra])
        return out

    def _probed_conflicts(
        self,
        draft: Draft,
        evidence: Sequence[Passage],
        probed: dict[str, list[Passage]],
    ) -> list[Conflict]:
        """Conflicts between a value the draft states (its sentence, in a passage it cites)
        and a passage that the search for that sentence found; conflicts among the evidence
        alone were found before drafting."""
        cited = {c for s in draft.sentences for c in s.citations}
        out: list[Conflict] = []
        conflicts = self._conflicts_among(
            [*evidence, *(p for found in probed.values() for p in found)]
        )
        for sentence, found in probed.items():
            new = {p.id for p in found}
            said = " ".join(sentence.split())
            for conflict in conflicts:
                sides = (conflict.general, conflict.specific)
                theirs = [f for f in sides if f.passage_id in new]
                own = [f for f in sides if f.passage_id not in new]
                if len(theirs) != 1 or len(own) != 1 or conflict in out:
                    continue
                fact = own[0]
                if (fact.passage_id in cited or fact.doc_id in cited) and " ".join(
                    fact.sentence.split()
                ) == said:
                    out.append(conflict)
        return out

    def _request_decoy(self, ticket: Ticket, gate: ToolGate, trace: _Trace) -> None:
        """The demo's first step: ask the gate for the decoy; its refusal goes in the trace."""
        try:
            gate.call("post_to_customer", ticket_id=ticket.id, text="(demo: sent before triage)")
        except ToolDenied as denied:
            trace.add("gate", "denied", tool=denied.name, reason=denied.reason, step="start")
        else:  # pragma: no cover - the decoy is not on the allowlist, so this cannot happen
            raise AssertionError("the tool gate let post_to_customer through")

    # --- personal data (an engine that redacts what it sends a model) ----------------------

    def _restored(self, ticket_id: str, draft: Draft) -> Draft:
        """The draft with real values where the model echoed a placeholder."""
        restore = getattr(self.engine, "restore_draft", None)
        return restore(ticket_id, draft) if callable(restore) else draft

    def _concealer(self, ticket_id: str) -> Callable[[str], str] | None:
        """Text to trace, with the ticket's personal data as placeholders again."""
        conceal = getattr(self.engine, "conceal", None)
        if not callable(conceal):
            return None
        return lambda text: str(conceal(ticket_id, text))

    def _for_review(self, ticket_id: str, draft: Draft) -> Draft:
        """The staged draft: real values for the reviewer, placeholders for the audit log."""
        conceal = self._concealer(ticket_id)
        redacted = conceal(draft.answer) if conceal is not None else draft.answer
        return replace(draft, redacted_answer=redacted if redacted != draft.answer else "")

    def _record_model_calls(self, trace: _Trace) -> None:
        """Store and trace the model calls the engine made for this ticket since the last look."""
        if not isinstance(self.engine, MeteredEngine):
            return
        for call in self.engine.take_calls(trace.ticket_id):
            record = call.to_json()
            trace.add_call(record)
            detail = {k: v for k, v in record.items() if k not in {"stage", "status"}}
            trace.add("model", call.status, call=call.stage, **detail)

    # --- tools ---------------------------------------------------------------------------

    def _tools(self, trace: _Trace) -> dict[str, Callable[..., Any]]:
        def search(kind: DocKind) -> Callable[..., list[Hit]]:
            return lambda query, k: self.knowledge.search(query, k=k, kinds={kind})

        def stage_draft(outcome: Outcome, attempt: int) -> int:
            return trace.stage(outcome, attempt)

        return {
            "get_ticket": self.store.get_ticket,
            "search_docs": search(DocKind.KB),
            "search_resolved": search(DocKind.RESOLVED),
            "stage_draft": stage_draft,
        }


#: Passages added for each question of a ticket that asks several things.
PER_QUESTION_HITS = 2
#: Passages of the articles that resolved tickets in the evidence link to.
LINKED_HITS = 2
#: Other sections of the best article, added for the drafter.
SIBLING_HITS = 2
#: Draft sentences with a value searched for the other side of a conflict, and the article
#: passages taken from each search.
PROBE_SENTENCES = 3
PROBE_HITS = 2


def _conflicts_json(conflicts: Sequence[Conflict]) -> list[dict[str, str]]:
    """Conflicts as the trace names them: the kind and each side's value and passage."""
    return [
        {"kind": c.kind, "general": c.general.describe(), "specific": c.specific.describe()}
        for c in conflicts
    ]


def _value_pair(a: Fact, b: Fact, *, one_sided: bool = False) -> dict[str, Any]:
    """A pair of differing values as the trace names it: both quotes and both values; for a
    one-sided draft, ``first`` is the draft's sentence and ``second`` the other source's."""
    pair: dict[str, Any] = {
        "first": a.sentence,
        "second": b.sentence,
        "values": [a.quantity.raw, b.quantity.raw],
    }
    if one_sided:
        pair.update(one_sided=True, source=b.passage_id)
    return pair


#: Events that commit with the stage result after them: the tool decisions and model calls
#: that led to it, and ``stage``, which commits with the staged outcome.
#: The language and conflict findings and the probe's searches are small and commit with what
#: they lead to.
_COMMITTED_WITH_NEXT = frozenset(
    {
        *("tool", "model", "stage", "language", "language_gate", "conflicts", "values"),
        *("untrusted_text", "probe"),
    }
)

#: Problems a revision cannot fix: the evidence contradicts itself (a reviewer must see it), or
#: the model checker says no draft from this evidence can pass.
_NO_REVISION = frozenset({"conflicting_evidence", "checker_escalates"})


#: Trace details that carry no ticket text (passage ids, scores) or that an engine already
#: redacted (prompts and replies): concealing them again would only cost time.
_NOT_CONCEALED = frozenset(
    {"hits", "fusion", "scales", "messages", "reply", "context", "citations"}
)


def _concealed(value: Any, conceal: Callable[[str], str]) -> Any:
    """``value`` (a trace detail) with every string in it passed through ``conceal``."""
    if isinstance(value, str):
        return conceal(value)
    if isinstance(value, dict):
        return {k: v if k in _NOT_CONCEALED else _concealed(v, conceal) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_concealed(v, conceal) for v in value]
    return value


#: What the agent did with the flagged sentences of the evidence, as the reviewer reads it.
FLAG_HANDLING = (
    "never quoted by the offline drafter; shown to a model only as a [withheld: ...] marker"
)


def planted_flags(passages: Sequence[Passage]) -> list[dict[str, str]]:
    """The flags (``planted`` rules) of the text a drafter may use from ``passages``: an
    article's text, a resolved ticket's answer (its question is never quoted or shown)."""
    found: list[dict[str, str]] = []
    for passage in dict.fromkeys(passages):
        text = passage.text
        if passage.kind is DocKind.RESOLVED:
            text = resolved_answer(text)
        found.extend({"passage": passage.id, **flag.to_json()} for flag in find_flags(text))
    return found


def _classification(c: Classification) -> dict[str, Any]:
    return {
        "reason_code": c.reason_code,
        "reason": c.reason,
        "confidence": c.confidence,
        "decided_by": c.decided_by,
    }
