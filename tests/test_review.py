"""Review over real SQLite and PostgreSQL: decisions, refusals, the learning loop, the race."""

from __future__ import annotations

import multiprocessing
import queue
from pathlib import Path
from typing import Any

import pytest

from supportagent.agent.knowledge import Knowledge
from supportagent.agent.pipeline import Pipeline, PipelineConfig
from supportagent.domain import (
    Bucket,
    DocKind,
    Document,
    Draft,
    DraftSentence,
    Outcome,
    Status,
    Ticket,
)
from supportagent.engines.offline import OfflineEngine
from supportagent.errors import ConflictError, NotFoundError, UserError
from supportagent.review import amend, approve, measure_edit, near_duplicate, reject
from supportagent.store.audit import read_events, read_reviews
from supportagent.store.audit_verify import verify
from supportagent.store.store import Store

KB = [
    Document(
        "kb-contacts",
        DocKind.KB,
        "Contacts",
        "# Contacts\n\n## Importing contacts\n\nUpload a CSV file with a phone column from the "
        "Contacts page. Imports run in the background and send an email when they finish.\n\n"
        "## Deleting contacts\n\nDeleting a contact also removes it from every list.",
    ),
    Document(
        "kb-rate-limits",
        DocKind.KB,
        "Rate limits",
        "# Rate limits\n\n## Handling 429\n\nWhen you exceed the limit the API answers 429 with a "
        "Retry-After header. Wait the number of seconds in Retry-After before retrying.",
    ),
]
IMPORT_SENTENCE = "Upload a CSV file with a phone column from the Contacts page."


def stage_pending(
    store: Store, ticket: Ticket, sentences: list[tuple[str, str]], confidence: float = 0.7
) -> None:
    """Put ``ticket`` in review with a draft of (sentence, citation) pairs, as the agent would."""
    store.add_tickets([ticket])
    attempt = store.begin_attempt(ticket.id)
    draft = Draft(tuple(DraftSentence(text, (cite,)) for text, cite in sentences), confidence)
    outcome = Outcome(
        ticket.id, Status.PENDING_REVIEW, "drafted", Bucket.ANSWERABLE, draft, None, (), "offline"
    )
    store.stage_outcome(outcome, attempt)


@pytest.fixture
def pending(any_store: Store) -> Store:
    stage_pending(
        any_store,
        Ticket("T-1", "Importing contacts", "How do I import our contacts from a spreadsheet?"),
        [(IMPORT_SENTENCE, "kb-contacts#importing-contacts")],
    )
    return any_store


def test_approve_keeps_the_draft_and_adds_a_searchable_resolved_record(pending: Store) -> None:
    knowledge = Knowledge(KB)
    result = approve(pending, knowledge, "T-1", reviewer="ana")
    assert (result.decision, result.status, result.resolved_doc_id) == (
        "approve",
        Status.APPROVED,
        "AR-T-1",
    )
    assert not result.linked_existing and result.edit_chars == 0
    assert pending.ticket_status("T-1") is Status.APPROVED
    [review] = read_reviews(pending.engine)
    assert review["reviewer"] == "ana" and review["decided_at"] is not None
    assert review["final_text"] == IMPORT_SENTENCE
    assert review["original_draft"] == f"{IMPORT_SENTENCE} [kb-contacts#importing-contacts]"
    assert review["resolved_added"] is True and review["edit_chars"] == 0
    [doc] = pending.documents(DocKind.RESOLVED)
    assert doc.linked_docs == ("kb-contacts",)
    assert doc.meta["reviewer"] == "ana" and doc.meta["ticket_id"] == "T-1"
    assert doc.meta["citations"] == ["kb-contacts#importing-contacts"]
    hits = knowledge.search("import contacts spreadsheet", k=3, kinds={DocKind.RESOLVED})
    assert hits and hits[0].passage.doc_id == "AR-T-1"


def test_amend_records_its_diff_beside_the_original(pending: Store) -> None:
    final = "Import the CSV from the Contacts page; the file needs a phone column."
    result = amend(pending, None, "T-1", final, reviewer="bo")
    assert result.status is Status.AMENDED and result.final_text == final
    assert result.edit_chars > 0 and 0 < result.edit_ratio <= 1
    assert result.diff.startswith("--- draft\n+++ final")
    assert f"-{IMPORT_SENTENCE}" in result.diff and f"+{final}" in result.diff
    [review] = read_reviews(pending.engine)
    assert review["diff"] == result.diff and review["edit_chars"] == result.edit_chars
    assert review["original_draft"].startswith(IMPORT_SENTENCE)
    assert review["final_text"] == final
    [doc] = pending.documents(DocKind.RESOLVED)
    assert doc.body.endswith(final)


def test_citation_markers_in_an_amendment_become_the_records_links(pending: Store) -> None:
    text = "Wait for the Retry-After seconds. [kb-rate-limits#handling-429]"
    result = amend(pending, None, "T-1", text, reviewer="bo")
    assert result.final_text == "Wait for the Retry-After seconds."
    [doc] = pending.documents(DocKind.RESOLVED)
    assert doc.linked_docs == ("kb-rate-limits",)
    assert doc.meta["citations"] == ["kb-rate-limits#handling-429"]


def test_reject_hands_off_adds_nothing_and_a_second_decision_is_refused(pending: Store) -> None:
    result = reject(pending, "T-1", "Wrong article.", reviewer="cy")
    assert (result.status, result.resolved_doc_id) == (Status.HANDED_OFF, None)
    assert pending.documents(DocKind.RESOLVED) == []
    [review] = read_reviews(pending.engine)
    assert (review["reason"], review["final_text"]) == ("Wrong article.", None)
    assert review["original_draft"].startswith(IMPORT_SENTENCE)
    with pytest.raises(ConflictError, match=r"handed_off, not pending_review \(decided by cy at"):
        approve(pending, None, "T-1", reviewer="ana")
    with pytest.raises(ConflictError, match="only once"):
        reject(pending, "T-1", "again", reviewer="ana")
    # The store refuses too, even when asked directly.
    with pytest.raises(ConflictError, match="decided by cy"):
        pending.record_review("T-1", "approve", Status.APPROVED, "ana", "x", None, None)
    assert len(read_reviews(pending.engine)) == 1


def test_a_taken_record_id_refuses_the_decision_and_changes_nothing(pending: Store) -> None:
    pending.upsert_documents([Document("AR-T-1", DocKind.KB, "Taken", "An article.")])
    with pytest.raises(ConflictError, match="AR-T-1 already exists"):
        approve(pending, None, "T-1", reviewer="ana")
    assert pending.ticket_status("T-1") is Status.PENDING_REVIEW
    assert read_reviews(pending.engine) == []
    assert [e["event"] for e in read_events(pending.engine)] == ["agent.staged"]


def test_only_pending_drafts_can_be_reviewed(any_store: Store) -> None:
    any_store.add_tickets([Ticket("T-9", "Bug", "The dashboard crashes.")])
    with pytest.raises(ConflictError, match="T-9 is new, not pending_review"):
        approve(any_store, None, "T-9", reviewer="ana")
    attempt = any_store.begin_attempt("T-9")
    routed = Outcome(
        "T-9", Status.ROUTED, "bug_report", Bucket.NOT_A_QUESTION, None, None, (), "offline"
    )
    any_store.stage_outcome(routed, attempt)
    with pytest.raises(ConflictError, match="routed, not pending_review"):
        reject(any_store, "T-9", "no", reviewer="ana")
    with pytest.raises(NotFoundError, match="T-404"):
        approve(any_store, None, "T-404", reviewer="ana")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: amend(s, None, "T-1", "   ", "ana"), "needs the final answer"),
        (lambda s: amend(s, None, "T-1", "[kb-contacts#intro]", "ana"), "empty once"),
        (lambda s: amend(s, None, "T-1", "x" * 20_001, "ana"), "at most 20000"),
        (lambda s: reject(s, "T-1", "", "ana"), "needs a reason"),
        (lambda s: approve(s, None, "T-1", "  "), "reviewer's name"),
        (lambda s: approve(s, None, "T-1", "r" * 129), "at most 128"),
    ],
)
def test_bad_input_is_a_user_error_and_changes_nothing(
    pending: Store, call: Any, message: str
) -> None:
    with pytest.raises(UserError, match=message):
        call(pending)
    assert pending.ticket_status("T-1") is Status.PENDING_REVIEW
    assert read_reviews(pending.engine) == []


@pytest.mark.parametrize("with_index", [True, False])
def test_a_near_identical_answer_links_to_the_existing_record(
    any_store: Store, with_index: bool
) -> None:
    existing = Document(
        "RT-7",
        DocKind.RESOLVED,
        "Contacts import",
        "How do I import contacts?\n\nUpload a CSV file with a phone column from the Contacts "
        "page!",
        meta={
            "question": "How do I import contacts?",
            "answer": "Upload a CSV file with a phone column from the Contacts page!",
        },
    )
    any_store.upsert_documents([existing])
    stage_pending(
        any_store,
        Ticket("T-1", "Contacts", "Where do I upload my contacts?"),
        [(IMPORT_SENTENCE, "RT-7#answer")],
    )
    knowledge = Knowledge([*KB, existing]) if with_index else None
    result = approve(any_store, knowledge, "T-1", reviewer="ana")
    assert (result.resolved_doc_id, result.linked_existing) == ("RT-7", True)
    assert [d.id for d in any_store.documents(DocKind.RESOLVED)] == ["RT-7"]
    [review] = read_reviews(any_store.engine)
    assert (review["resolved_doc_id"], review["resolved_added"]) == ("RT-7", False)
    event = list(read_events(any_store.engine, "T-1"))[-1]
    assert event["data"]["resolved_doc_id"] == "RT-7" and event["data"]["resolved_added"] is False


def test_near_duplicate_needs_nearly_the_same_words() -> None:
    doc = Document("RT-1", DocKind.RESOLVED, "t", "q\n\nWait 30 seconds, then retry the call.")
    assert near_duplicate("wait 30 seconds then retry the call", [doc]) is doc
    assert near_duplicate("Wait 60 seconds, then retry the request.", [doc]) is None
    kb = Document("kb-1", DocKind.KB, "t", "Wait 30 seconds, then retry the call.")
    assert near_duplicate("Wait 30 seconds, then retry the call.", [kb]) is None


def test_measure_edit_counts_changed_words() -> None:
    edit = measure_edit("Wait 30 seconds. Then retry.", "Wait 60 seconds. Then retry.")
    assert edit.chars == 4  # "30" out, "60" in
    assert edit.ratio == pytest.approx(0.2)  # one of five words
    assert "-Wait 30 seconds." in edit.diff and "+Wait 60 seconds." in edit.diff
    assert measure_edit("Same text.", "Same  text.") == measure_edit("a", "a")


def test_the_learning_loop_a_paraphrase_retrieves_and_cites_the_approved_answer(
    any_store: Store,
) -> None:
    any_store.upsert_documents(KB)
    knowledge = Knowledge.from_store(any_store)
    stage_pending(
        any_store,
        Ticket("T-A", "Contacts import size limit", "How many contacts can one CSV import hold?"),
        [(IMPORT_SENTENCE, "kb-contacts#importing-contacts")],
    )
    final = (
        "One contacts import accepts at most 50,000 rows; split a bigger CSV into several imports."
    )
    result = amend(any_store, knowledge, "T-A", final, reviewer="ana")
    assert result.resolved_doc_id == "AR-T-A"

    # The same question in other words; before the review nothing in the corpus answered it.
    paraphrase = Ticket(
        "T-B",
        "Size limit when importing contacts",
        "Is there a cap on how many contacts a CSV import can hold? Our file has a lot of rows.",
    )
    any_store.add_tickets([paraphrase])
    outcome = Pipeline(any_store, knowledge, OfflineEngine(), PipelineConfig()).run("T-B")
    assert outcome.status is Status.PENDING_REVIEW, outcome.reason_code
    assert outcome.draft is not None
    assert "AR-T-A#answer" in outcome.draft.citations
    assert any("50,000" in s.text for s in outcome.draft.sentences)
    retrieved = [
        h["doc_id"]
        for e in any_store.trace("T-B")
        if e["stage"] == "retrieve"
        for h in e["detail"]["hits"]
    ]
    assert "AR-T-A" in retrieved


def test_reject_adds_nothing_to_what_the_next_ticket_finds(any_store: Store) -> None:
    any_store.upsert_documents(KB)
    knowledge = Knowledge.from_store(any_store)
    stage_pending(
        any_store,
        Ticket("T-A", "Contacts import size limit", "How many contacts can one CSV import hold?"),
        [(IMPORT_SENTENCE, "kb-contacts#importing-contacts")],
    )
    before = len(knowledge.retriever)
    reject(any_store, "T-A", "Does not answer the limit.", reviewer="ana")
    assert len(knowledge.retriever) == before
    assert len(Knowledge.from_store(any_store).retriever) == before


# --- two reviewers, two processes ------------------------------------------------------------


def _race_worker(
    url: str, ticket_ids: list[str], decision: str, barrier: Any, results: Any
) -> None:
    """One reviewer in its own process: decide each ticket the moment the other one does."""
    store = Store(url)
    try:
        for ticket_id in ticket_ids:
            barrier.wait(timeout=120)
            try:
                if decision == "approve":
                    done = approve(store, None, ticket_id, reviewer="proc-approve")
                else:
                    done = reject(store, ticket_id, "not right", reviewer="proc-reject")
                results.put((ticket_id, decision, "won", done.status.value))
            except ConflictError as exc:
                results.put((ticket_id, decision, "refused", str(exc)))
    except Exception as exc:  # reported to the parent, which fails the test
        results.put(("?", decision, "error", f"{type(exc).__name__}: {exc}"))
    finally:
        store.close()


def _race(url: str, ticket_ids: list[str]) -> list[tuple[str, str, str, str]]:
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(2)
    results = ctx.Queue()
    procs = [
        ctx.Process(target=_race_worker, args=(url, ticket_ids, d, barrier, results))
        for d in ("approve", "reject")
    ]
    for proc in procs:
        proc.start()
    out = []
    try:
        for _ in range(2 * len(ticket_ids)):
            out.append(results.get(timeout=180))
    except queue.Empty:
        pytest.fail(f"the reviewers did not finish; got {out}")
    finally:
        for proc in procs:
            proc.join(timeout=60)
    return out


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_two_reviewers_in_two_processes_exactly_one_wins(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = (
        f"sqlite:///{tmp_path / 'race.db'}"
        if backend == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    store = Store(url)
    store.migrate()
    ticket_ids = [f"T-{i}" for i in range(6)]
    for ticket_id in ticket_ids:
        stage_pending(
            store,
            Ticket(ticket_id, f"Import {ticket_id}", "How do I import contacts?"),
            [(f"{IMPORT_SENTENCE} Ticket {ticket_id}.", "kb-contacts#importing-contacts")],
        )
    results = _race(url, ticket_ids)
    assert not [r for r in results if r[2] == "error"], results
    for ticket_id in ticket_ids:
        mine = [r for r in results if r[0] == ticket_id]
        assert sorted(r[2] for r in mine) == ["refused", "won"], mine
        [winner] = [r for r in mine if r[2] == "won"]
        [loser] = [r for r in mine if r[2] == "refused"]
        assert f"Ticket {ticket_id} is {winner[3]}, not pending_review" in loser[3]
        assert store.ticket_status(ticket_id).value == winner[3]
        [review] = store.reviews(ticket_id)
        assert review["decision"] == winner[1]
    report = verify(store.engine)
    assert report.intact, report.problems
    assert report.events == 2 * len(ticket_ids)  # one staged and one decision per ticket
    store.close()
