"""Personal data and the llm engine: a real pipeline run against the stub server.

The stub records every request body the openai SDK sent over HTTP; none may hold a raw value
of the ticket (or of other customers, quoted as evidence). Traces, call records and the audit
log keep the placeholders; the draft staged for the reviewer has the real values back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from io import StringIO
from pathlib import Path

import pytest

from llm_stub import Received, StubLLM, StubReply, as_json, stub_engine, stub_settings
from supportagent.agent.knowledge import Knowledge
from supportagent.config import Settings, load_settings
from supportagent.domain import Outcome, Status, Ticket
from supportagent.runtime import build_engine, build_pipeline, load_demo, open_store
from supportagent.store.audit import export_csv, read_events
from supportagent.store.llm_records import model_call_records
from supportagent.store.store import Store

#: Every kind of personal data the redactor knows, in one answerable ticket.
RAW = {
    "EMAIL": "jane.doe@example.com",
    "PHONE": "+44 7700 900123",
    "CARD": "4111 1111 1111 1111",
    "IBAN": "GB82 WEST 1234 5698 7654 32",
    "SECRET": "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl",
    "ADDRESS": "221B Baker Street",
}
#: What must reach the model untouched: none of it is personal data.
KEPT = ("3.11.2", "ORD-58213", "T-2012", "$1,234.56", "50 requests per second", "2026-11-02")
#: A value of another customer's kind, in the demo knowledge base the evidence comes from.
EVIDENCE_EMAIL = "support@kestrel.example"
TICKET = Ticket(
    "T-9001",
    "How do I contact support by email?",
    f"Hi, this is Jane ({RAW['EMAIL']}, {RAW['PHONE']}). What is the email address of your "
    f"support team, and which hours do you answer? Some details from our notes, in case they "
    f"help: release of 2026-11-02, budget $1,234.56, reference ORD-58213 (see also T-2012), "
    f"card {RAW['CARD']}, IBAN {RAW['IBAN']}, office {RAW['ADDRESS']}, London, SDK 3.11.2, "
    f"50 requests per second, key {RAW['SECRET']}. Again: {RAW['EMAIL']}.",
)


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[tuple[Store, Knowledge]]:
    store = open_store(load_settings(home=tmp_path / "home"))
    load_demo(store)
    store.add_tickets([TICKET])
    yield store, Knowledge.from_store(store)
    store.close()


def run(settings: Settings, demo: tuple[Store, Knowledge]) -> Outcome:
    store, knowledge = demo
    return build_pipeline(settings, store, stub_engine(settings), knowledge).run(TICKET.id)


def bodies(stub: StubLLM) -> list[str]:
    """Each request body as sent, in both JSON spellings (escaped and not)."""
    return [
        text
        for r in stub.requests
        for text in (json.dumps(r.body), json.dumps(r.body, ensure_ascii=False))
    ]


def echoing_draft(request: Received) -> StubReply:
    """A draft that quotes the passage naming the support address, as a model would."""
    found = re.search(
        r'<<<PASSAGE id="(kb-support-and-sla#[^"]+)"[^>]*>>>\n(.*?)\n<<<END', request.prompt, re.S
    )
    assert found is not None, "the support passage is in the evidence"
    sentence = next(s for s in found[2].split(". ") if "[EMAIL_" in s).rstrip(".") + "."
    return as_json({"sentences": [{"text": sentence, "citations": [found[1]]}], "confidence": 0.8})


def scripted(stub: StubLLM) -> None:
    """Classify and check by the stub's evidence model, the draft by :func:`echoing_draft`."""

    def answer(request: Received) -> StubReply:
        return echoing_draft(request) if request.stage == "draft" else stub_model(request)

    stub_model = stub.model
    stub.model = answer


def test_no_raw_value_reaches_the_model_and_the_reviewer_gets_them_back(
    llm_stub: StubLLM, tmp_path: Path, demo: tuple[Store, Knowledge]
) -> None:
    scripted(llm_stub)
    settings = stub_settings(llm_stub, tmp_path, trace_prompts=True)
    outcome = run(settings, demo)
    assert outcome.status is Status.PENDING_REVIEW, outcome.reason_code
    assert llm_stub.stages() == ["classify", "draft", "check"]

    sent = bodies(llm_stub)
    for value in (*RAW.values(), EVIDENCE_EMAIL, "4111111111111111"):
        assert not any(value in body for body in sent), value
    prompt = llm_stub.requests[0].prompt
    for kind in RAW:
        assert f"[{kind}_1]" in prompt, kind
    # The same address twice is one placeholder.
    assert prompt.count("[EMAIL_1]") == 2 and "[EMAIL_2]" not in prompt
    for kept in KEPT:
        assert kept in prompt, kept
    # Evidence passages are redacted too, with placeholders of their own in the ticket's series.
    assert "[EMAIL_2]" in llm_stub.requests[1].prompt

    # The reviewer's draft has the real value where the model echoed the placeholder.
    assert outcome.draft is not None
    assert EVIDENCE_EMAIL in outcome.draft.answer and "[EMAIL_" not in outcome.draft.answer
    store = demo[0]
    staged = store.latest_outcome(TICKET.id)
    assert staged is not None and staged.draft is not None
    assert EVIDENCE_EMAIL in staged.draft["answer"]

    # The trace, the call records (prompts traced) and the audit event keep placeholders.
    trace = json.dumps(store.trace(TICKET.id), ensure_ascii=False, default=str)
    records = json.dumps(model_call_records(store, TICKET.id), ensure_ascii=False, default=str)
    [event] = [e for e in read_events(store.engine, TICKET.id) if e["event"] == "agent.staged"]
    assert "[EMAIL_2]" in event["data"]["response"]
    audit = json.dumps(event["data"], ensure_ascii=False, default=str)
    export = StringIO()
    export_csv(store.engine, export)
    for text in (trace, records, audit, export.getvalue()):
        assert "[EMAIL_2]" in text
        for value in (*RAW.values(), EVIDENCE_EMAIL):
            assert value not in text, value


def test_with_the_setting_off_the_raw_values_are_sent(
    llm_stub: StubLLM, tmp_path: Path, demo: tuple[Store, Knowledge]
) -> None:
    settings = stub_settings(llm_stub, tmp_path, redact_pii=False)
    run(settings, demo)
    prompt = llm_stub.requests[0].prompt
    for value in RAW.values():
        assert value in prompt, value
    assert not re.search(
        r"\[(EMAIL|PHONE|CARD|IBAN|SECRET|ADDRESS)_\d+\]", " ".join(bodies(llm_stub))
    )


def test_the_setting_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings().redact_pii is True
    monkeypatch.setenv("SUPPORTAGENT_REDACT_PII", "0")
    assert load_settings().redact_pii is False


def test_a_second_run_renders_the_same_prompts_and_is_served_from_the_cache(
    llm_stub: StubLLM, tmp_path: Path, demo: tuple[Store, Knowledge]
) -> None:
    settings = stub_settings(llm_stub, tmp_path)
    first = run(settings, demo)
    sent = len(llm_stub.requests)
    assert sent >= 3
    second = run(settings, demo)  # a new engine numbers the placeholders the same way
    assert len(llm_stub.requests) == sent
    assert (first.status, first.draft) == (second.status, second.draft)


def test_a_revision_sees_its_previous_draft_and_the_problems_redacted(
    llm_stub: StubLLM, tmp_path: Path, demo: tuple[Store, Knowledge]
) -> None:
    """The previous draft comes back to the engine with the real values (the checks need
    them); the revision prompt must carry the placeholders again, the same ones."""
    objection = as_json(
        {
            "verdict": "fail",
            "claims": [{"claim": "the address", "sentence": 0, "supported_by": None}],
            "problems": [
                {
                    "code": "incomplete_answer",
                    "message": "say when [EMAIL_2] answers",
                    "sentence": 0,
                }
            ],
            "suggested_action": "revise",
        }
    )
    llm_stub.push(llm_stub.model, echoing_draft, objection)
    settings = stub_settings(llm_stub, tmp_path)
    run(settings, demo)
    assert llm_stub.stages()[:4] == ["classify", "draft", "check", "draft"]
    revision = llm_stub.requests[3].prompt
    assert "This is a revision" in revision
    assert re.search(r"\[0\] [^\n]*\[EMAIL_2\][^\n]*\(cites: kb-support-and-sla#", revision)
    assert "say when [EMAIL_2] answers" in revision
    for body in bodies(llm_stub):
        for value in (*RAW.values(), EVIDENCE_EMAIL):
            assert value not in body, value


def test_the_offline_engine_sends_nothing_and_redacts_nothing(
    tmp_path: Path, demo: tuple[Store, Knowledge]
) -> None:
    settings = load_settings(home=tmp_path / "home", engine="offline")
    assert settings.redact_pii
    store, knowledge = demo
    outcome = build_pipeline(settings, store, build_engine(settings), knowledge).run(TICKET.id)
    assert outcome.engine == "offline"
    trace = json.dumps(store.trace(TICKET.id), ensure_ascii=False, default=str)
    assert not re.search(r"\[(EMAIL|PHONE|CARD|IBAN|SECRET|ADDRESS)_\d+\]", trace)
    assert outcome.draft is None or outcome.draft.redacted_answer == ""
