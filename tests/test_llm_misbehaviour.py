"""What real small models and real local servers did to the llm engine, replayed by the stub.

Each test scripts one misbehaviour seen with Qwen2.5-Coder-1.5B on llama-cpp-python (issue 13)
and asserts the outcome and the trace: the schema echoed back with the answer inside, JSON in
fences among prose, digests cited as ids, HTTP 500 with a body, a reply that outlives the
timeout while the server keeps working, a checker that cries conflict on a correct draft.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llm_stub import (
    StubLLM,
    StubReply,
    as_json,
    draft_sentences,
    stub_engine,
    stub_settings,
)
from supportagent.agent.conflicts import confirm_model_conflicts, values_differ
from supportagent.agent.facts import extract_facts, find_conflicts
from supportagent.agent.knowledge import Knowledge
from supportagent.agent.safety import screen
from supportagent.config import Settings, load_settings
from supportagent.domain import (
    DocKind,
    Draft,
    DraftSentence,
    Hit,
    Passage,
    Problem,
    Status,
    Ticket,
    Verdict,
)
from supportagent.errors import ModelError
from supportagent.llm.chat import ModelUnavailable
from supportagent.runtime import build_pipeline, load_demo, open_store
from supportagent.store.llm_records import model_call_records
from supportagent.store.store import Store

TICKET = Ticket("T-1", "Rate limit on Growth?", "How many requests per second may we send?")
CLASSIFIED = {"reason_code": "question", "reason": "asks about limits", "confidence": 0.8}
DEMO_TICKET = "T-2001"  # "Rate limit on the Growth plan?"


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[tuple[Store, Knowledge]]:
    store = open_store(load_settings(home=tmp_path / "home"))
    load_demo(store)
    yield store, Knowledge.from_store(store)
    store.close()


def run(settings: Settings, demo: tuple[Store, Knowledge], engine: Any, ticket: str) -> Any:
    store, knowledge = demo
    return build_pipeline(settings, store, engine, knowledge).run(ticket)


def classify(engine: Any) -> Any:
    return engine.classify(TICKET, screen(TICKET.text))


# --- replies wrapped in what small models wrap them in ----------------------------------------


def test_the_schema_echoed_back_with_the_answer_under_properties_is_read(
    llm_stub: StubLLM, tmp_path: Path
) -> None:
    envelope = {
        "type": "object",
        "properties": CLASSIFIED,
        "required": ["reason_code", "reason", "confidence"],
    }
    engine = stub_engine(stub_settings(llm_stub, tmp_path))
    llm_stub.push(as_json(envelope))
    assert classify(engine).reason_code == "question"
    assert len(llm_stub.requests) == 1  # no repair spent on the packaging
    [call] = engine.take_calls("T-1")
    assert (call.status, call.requests, call.error) == ("ok", 1, None)


def test_a_bare_schema_is_sent_back_saying_it_is_a_schema(
    llm_stub: StubLLM, tmp_path: Path
) -> None:
    schema_only = {
        "type": "object",
        "properties": {"reason_code": {"type": "string"}, "reason": {"type": "string"}},
    }
    engine = stub_engine(stub_settings(llm_stub, tmp_path))
    llm_stub.push(as_json(schema_only), as_json(CLASSIFIED))
    classify(engine)
    repair = llm_stub.requests[1].messages[-1]["content"]
    assert "the JSON Schema, not an answer" in repair
    assert [c.status for c in engine.take_calls("T-1")] == ["invalid", "ok"]


@pytest.mark.parametrize(
    "text",
    [
        "Sure! Here is the classification:\n```json\n{body}\n```\nLet me know if you need more.",
        "The ticket {{asks}} about limits, so: {body} (I am confident.)",
        '{{"classification": {body}}}',
        "[{body}]",
        "```\n{body}",  # a fence that is never closed
    ],
)
def test_fences_prose_and_wrappers_around_a_valid_answer_cost_no_repair(
    llm_stub: StubLLM, tmp_path: Path, text: str
) -> None:
    engine = stub_engine(stub_settings(llm_stub, tmp_path))
    llm_stub.push(StubReply(content=text.format(body=json.dumps(CLASSIFIED))))
    assert classify(engine).reason_code == "question"
    assert len(llm_stub.requests) == 1
    assert [c.status for c in engine.take_calls("T-1")] == ["ok"]


def test_a_field_the_schema_lacks_is_dropped_not_repaired(
    llm_stub: StubLLM, tmp_path: Path
) -> None:
    engine = stub_engine(stub_settings(llm_stub, tmp_path))
    llm_stub.push(as_json({**CLASSIFIED, "bucket": "answerable", "explanation": "limits"}))
    assert classify(engine).reason_code == "question" and len(llm_stub.requests) == 1


def test_a_reply_cut_off_at_the_token_limit_is_told_so(llm_stub: StubLLM, tmp_path: Path) -> None:
    engine = stub_engine(stub_settings(llm_stub, tmp_path))
    cut = StubReply(content='{"reason_code": "question", "reason": "asks ab')
    llm_stub.push(
        lambda r: StubReply(raw=_finished(r, cut.content or "", "length")), as_json(CLASSIFIED)
    )
    classify(engine)
    assert "cut off at the limit of 200 tokens" in llm_stub.requests[1].messages[-1]["content"]


def test_a_problem_code_outside_the_known_set_is_invalid(llm_stub: StubLLM, tmp_path: Path) -> None:
    engine = stub_engine(stub_settings(llm_stub, tmp_path))
    made_up = {
        "claims": [],
        "problems": [{"code": "hallucination", "message": "x", "sentence": 0}],
        "verdict": "fail",
        "suggested_action": "escalate",
    }
    passage = Passage("kb-a#x", "kb-a", DocKind.KB, "A", (), "The limit is 50 requests.")
    draft = Draft((DraftSentence("The limit is 50 requests.", ("kb-a#x",)),), 0.9)
    llm_stub.push(as_json(made_up), as_json(made_up))
    with pytest.raises(ModelError) as raised:
        engine.check(TICKET, draft, [Hit(passage, 1, 1.0)])
    assert raised.value.reason_code == "model_output_invalid"
    assert "problems.0.code: Input should be 'unsupported_sentence'" in str(raised.value)


def _finished(request: Any, content: str, reason: str) -> dict[str, Any]:
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "stub-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": reason,
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 200, "total_tokens": 210},
    }


# --- citations ---------------------------------------------------------------------------------


def test_the_draft_prompt_offers_one_id_per_passage_and_a_schema_that_allows_only_those(
    tmp_path: Path, demo: tuple[Store, Knowledge]
) -> None:
    with StubLLM(persona="llama-cpp-python") as stub:
        settings = stub_settings(stub, tmp_path, llm_profile="llamacpp-python")
        outcome = run(settings, demo, stub_engine(settings), DEMO_TICKET)
        draft_request = next(r for r in stub.requests if r.stage == "draft")
    prompt = draft_request.prompt
    ids = re.findall(r'<<<PASSAGE id="([^"]+)"', prompt)
    assert ids and not re.search(r"\b[0-9a-f]{10}\b", prompt)  # no digest to cite by mistake
    schema = draft_request.body["response_format"]["schema"]
    assert draft_request.body["response_format"]["type"] == "json_object"
    assert schema["$defs"]["SentenceOut"]["properties"]["citations"]["items"]["enum"] == ids
    assert outcome.status is Status.PENDING_REVIEW


def test_a_digest_cited_as_an_id_fails_grounding_and_the_revision_is_told_which_ids_exist(
    llm_stub: StubLLM, tmp_path: Path, demo: tuple[Store, Knowledge]
) -> None:
    settings = stub_settings(llm_stub, tmp_path)
    by_digest = {
        "sentences": [
            {"text": "The Growth plan allows 50 requests per second.", "citations": ["1f2853f325"]}
        ],
        "confidence": 0.9,
    }
    llm_stub.push(llm_stub.model, as_json(by_digest))
    outcome = run(settings, demo, stub_engine(settings), DEMO_TICKET)
    assert [r.stage for r in llm_stub.requests] == ["classify", "draft", "draft", "check"]
    revision = llm_stub.requests[2].prompt
    assert "unknown_citation" in revision and "'1f2853f325'" in revision
    assert outcome.status is Status.PENDING_REVIEW
    assert "1f2853f325" not in outcome.draft.citations


def test_citations_written_into_the_sentence_move_to_its_citations(
    llm_stub: StubLLM, tmp_path: Path, demo: tuple[Store, Knowledge]
) -> None:
    settings = stub_settings(llm_stub, tmp_path)

    def inline(request: Any) -> StubReply:
        [first, *_] = draft_sentences(request.prompt, limit=1)
        text = f"{first['text']} (source: {first['citations'][0]})"
        return as_json({"sentences": [{"text": text, "citations": []}], "confidence": 0.8})

    llm_stub.push(llm_stub.model, inline)
    outcome = run(settings, demo, stub_engine(settings), DEMO_TICKET)
    [sentence] = outcome.draft.sentences
    assert "source:" not in sentence.text and sentence.citations
    assert outcome.status is Status.PENDING_REVIEW


# --- HTTP errors and timeouts -----------------------------------------------------------------


def test_http_500_with_a_body_names_the_servers_words_in_the_message_and_the_trace(
    tmp_path: Path, demo: tuple[Store, Knowledge]
) -> None:
    # llama-cpp-python answers json_schema with HTTP 500; the old profile sent exactly that.
    with StubLLM(persona="llama-cpp-python") as stub:
        settings = stub_settings(stub, tmp_path, llm_profile="llamacpp")
        with pytest.raises(ModelUnavailable) as raised:
            run(settings, demo, stub_engine(settings), DEMO_TICKET)
        sent = len(stub.requests)
    message = str(raised.value)
    assert "HTTP 500: 1 validation error" in message
    assert "Input should be 'text' or 'json_object'" in message
    assert sent == 4  # the first try and three retries, then the run stops
    [record] = model_call_records(demo[0], DEMO_TICKET)
    assert record["status"] == "failed" and "Input should be 'text'" in record["error"]
    assert record["retries"] == 3


def test_a_reply_that_outlives_the_timeout_on_a_single_slot_server_is_not_sent_again(
    tmp_path: Path,
) -> None:
    with StubLLM(persona="llama-cpp-python", single_slot=True) as stub:
        settings = stub_settings(stub, tmp_path, llm_profile="llamacpp-python", llm_timeout=0.4)
        engine = stub_engine(settings)
        stub.push(StubReply(content=json.dumps(CLASSIFIED), delay=1.0))
        with pytest.raises(ModelUnavailable) as raised:
            classify(engine)
        assert len(stub.requests) == 1  # a retry would queue behind the abandoned request
    message = str(raised.value)
    assert "did not answer within 0.4 s (SUPPORTAGENT_LLM_TIMEOUT)" in message
    assert "raise SUPPORTAGENT_LLM_TIMEOUT" in message and "not sent again" in message
    used = engine.budget.used()
    # The server computed the request all the same: its prompt is counted, as an estimate.
    assert used.requests == 1 and used.prompt_tokens == used.estimated_tokens > 0
    [call] = engine.take_calls("T-1")
    assert (call.status, call.requests, call.retries) == ("failed", 1, 0)
    assert call.latency_ms >= 400 and call.prompt_tokens == used.estimated_tokens


def test_latency_and_retries_cover_every_attempt(llm_stub: StubLLM, tmp_path: Path) -> None:
    engine = stub_engine(stub_settings(llm_stub, tmp_path))
    llm_stub.push(StubReply(status=503, raw={"error": {"message": "busy"}}, delay=0.3))
    llm_stub.push(StubReply(content=json.dumps(CLASSIFIED), delay=0.3))
    classify(engine)
    [call] = engine.take_calls("T-1")
    assert (call.requests, call.retries) == (2, 1)
    assert call.latency_ms >= 600  # both attempts, not only the last


# --- the checker that cries conflict ------------------------------------------------------------


def _conflict_check(message: str, action: str = "escalate") -> Any:
    def answer(request: Any) -> StubReply:
        from llm_stub import draft_lines

        lines = draft_lines(request.prompt)
        claims = [
            {"claim": s["text"], "sentence": i, "supported_by": s["citations"][0]}
            for i, s in enumerate(lines)
        ]
        return as_json(
            {
                "claims": claims,
                "problems": [{"code": "conflicting_evidence", "message": message, "sentence": 0}],
                "verdict": "fail",
                "suggested_action": action,
            }
        )

    return answer


def test_a_checker_claiming_a_conflict_on_a_correct_draft_asks_for_a_revision_not_a_stop(
    llm_stub: StubLLM, tmp_path: Path, demo: tuple[Store, Knowledge]
) -> None:
    settings = stub_settings(llm_stub, tmp_path)
    wolf = _conflict_check(
        "the draft cites 50 requests per second, but the evidence states 50 requests per second"
    )

    def one_sentence(request: Any) -> StubReply:
        return as_json({"sentences": draft_sentences(request.prompt, limit=1), "confidence": 0.7})

    llm_stub.push(llm_stub.model, llm_stub.model, wolf, one_sentence)
    outcome = run(settings, demo, stub_engine(settings), DEMO_TICKET)
    assert [r.stage for r in llm_stub.requests] == ["classify", "draft", "check", "draft", "check"]
    checks = [e for e in demo[0].trace(DEMO_TICKET) if e["stage"] == "check"]
    assert [p["code"] for p in checks[0]["detail"]["problems"]] == ["unconfirmed_conflict"]
    assert "unconfirmed_conflict" in llm_stub.requests[3].prompt  # the drafter was told
    assert outcome.status is Status.PENDING_REVIEW


ARTICLE = Passage(
    "kb-retention#period",
    "kb-retention",
    DocKind.KB,
    "Message log retention",
    ("Retention period",),
    "Message logs are retained for 30 days on all plans. Bodies are deleted after that.",
)
RESOLVED = Passage(
    "RT-17#answer",
    "RT-17",
    DocKind.RESOLVED,
    "How long do you keep logs?",
    (),
    "How long do you keep logs?\n\nMessage logs are retained for 90 days on all plans.",
)
CORRECT = Draft((DraftSentence("Message logs are retained for 30 days.", (ARTICLE.id,)),), 0.9)


def _model_verdict(message: str) -> Verdict:
    return Verdict(
        False,
        (
            Problem("conflicting_evidence", message, 0),
            Problem("checker_escalates", "The checker says no draft from this evidence can pass."),
        ),
        "llm",
        (("Message logs are retained for 30 days.", ARTICLE.id),),
    )


def test_a_model_conflict_naming_two_passages_with_different_values_stands() -> None:
    verdict = _model_verdict(f"{ARTICLE.id} says 30 days but {RESOLVED.id} says 90 days")
    settled = confirm_model_conflicts(verdict, Verdict(True), [ARTICLE, RESOLVED])
    assert settled == verdict  # it stops the revisions: both codes stay
    by_doc = _model_verdict("kb-retention says 30 days, RT-17 says 90")  # document ids do too
    assert confirm_model_conflicts(by_doc, Verdict(True), [ARTICLE, RESOLVED]) == by_doc


def test_a_model_conflict_the_deterministic_checks_also_saw_stands() -> None:
    verdict = _model_verdict("the passages disagree")
    grounding = Verdict(False, (Problem("conflicting_evidence", "states 30 vs 90", 0),))
    assert confirm_model_conflicts(verdict, grounding, [ARTICLE]) == verdict
    # The fact check found the contradiction in the evidence; the model names one side of it.
    found = find_conflicts(extract_facts([ARTICLE, RESOLVED]))
    assert [c.kind for c in found] == ["contradiction"]
    one_side = _model_verdict(f"{RESOLVED.id} disagrees with the draft")
    assert confirm_model_conflicts(one_side, Verdict(True), [ARTICLE, RESOLVED], found) == one_side
    unnamed = confirm_model_conflicts(verdict, Verdict(True), [ARTICLE, RESOLVED], found)
    assert [p.code for p in unnamed.problems] == ["unconfirmed_conflict"]


@pytest.mark.parametrize(
    "message",
    [
        "the draft cites 30 days, but the evidence states 30 days",
        f"{ARTICLE.id} contradicts the draft",  # one passage named
        f"{ARTICLE.id} and {ARTICLE.id} disagree",
    ],
)
def test_an_unconfirmed_model_conflict_is_a_request_to_revise(message: str) -> None:
    settled = confirm_model_conflicts(_model_verdict(message), Verdict(True), [ARTICLE, RESOLVED])
    assert [p.code for p in settled.problems] == ["unconfirmed_conflict"]  # no escalate either
    assert message in settled.problems[0].message and not settled.passed


def test_passages_of_one_document_do_not_conflict_and_equal_values_do_not_either() -> None:
    same_doc = Passage("kb-retention#plans", "kb-retention", DocKind.KB, "R", (), "Logs: 90 days.")
    assert not values_differ(ARTICLE, same_doc)
    agreeing = Passage(
        "RT-9#answer", "RT-9", DocKind.RESOLVED, "q", (), "Message logs are retained for 30 days."
    )
    assert not values_differ(ARTICLE, agreeing) and values_differ(ARTICLE, RESOLVED)
