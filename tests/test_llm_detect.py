"""Which server is behind a base URL, from what it answers, against stub servers that answer
like llama-cpp-python, llama.cpp's llama-server, vLLM and Ollama; and the request each gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from llm_stub import KEY, StubLLM, as_json
from supportagent.agent.safety import screen
from supportagent.config import load_settings
from supportagent.domain import Ticket
from supportagent.engines.llm import LLMEngine
from supportagent.llm.detect import identify, probe_server
from supportagent.runtime import build_engine

TICKET = Ticket("T-1", "Rate limit on Growth?", "How many requests per second may we send?")
CLASSIFIED = {"reason_code": "question", "reason": "asks about limits", "confidence": 0.8}


@pytest.mark.parametrize(
    ("persona", "profile", "why", "format_type", "context"),
    [
        ("llama-cpp-python", "llamacpp-python", "owned_by 'me'", "json_object", 8192),
        ("llama-server", "llamacpp", "owned_by 'llamacpp'", "json_schema", 4096),
        ("vllm", "vllm", "owned_by 'vllm'", "json_schema", 32768),
        ("ollama", "ollama", "/api/version answers Ollama 0.12.3", "json_schema", 8192),
        (None, "compatible", "did not answer /v1/models", "json_object", 32768),
    ],
)
def test_the_server_says_what_it_is_and_gets_its_own_structured_output(
    tmp_path: Path, persona: str | None, profile: str, why: str, format_type: str, context: int
) -> None:
    with StubLLM(persona=persona) as stub:
        settings = load_settings(
            home=tmp_path, engine="llm", llm_base_url=stub.url, llm_model="m", llm_api_key=KEY
        )
        engine = build_engine(settings)
        assert isinstance(engine, LLMEngine)
        assert f"profile {profile}," in engine.description and why in engine.description
        assert engine.context_tokens == context  # vLLM and llama-server report theirs
        stub.push(as_json(CLASSIFIED))
        engine.classify(TICKET, screen(TICKET.text))
        [request] = stub.requests
        assert stub.gets[0] == "/v1/models" and len(stub.gets) <= 3
    response_format = request.body["response_format"]
    assert response_format["type"] == format_type
    if profile == "llamacpp-python":  # grammar-constrained JSON, the way it accepts a schema
        assert set(response_format["schema"]["properties"]) == set(CLASSIFIED)
    if format_type == "json_schema":
        assert set(response_format["json_schema"]["schema"]["properties"]) == set(CLASSIFIED)
    if profile == "compatible":
        assert "schema" not in response_format
    [call] = engine.take_calls("T-1")
    assert call.profile == profile and why in (call.profile_reason or "")


def test_a_named_profile_is_not_second_guessed_and_the_server_is_not_asked(
    tmp_path: Path,
) -> None:
    with StubLLM(persona="vllm") as stub:
        settings = load_settings(
            home=tmp_path,
            engine="llm",
            llm_base_url=stub.url,
            llm_model="m",
            llm_profile="llamacpp-python",
        )
        engine = build_engine(settings)
        assert "profile llamacpp-python," in engine.description
        assert "SUPPORTAGENT_LLM_PROFILE names it" in engine.description
        assert stub.gets == []


def test_identify_reads_each_answer() -> None:
    def models(owner: str) -> dict[str, object]:
        return {"data": [{"id": "m", "owned_by": owner}]}

    assert identify(models("vllm"), None, None).profile == "vllm"
    assert identify(models("llamacpp"), None, None).profile == "llamacpp"
    assert identify(models("me"), None, None).profile == "llamacpp-python"
    assert identify(models("library"), {"version": "0.9"}, None).profile == "ollama"
    assert identify(None, None, {"default_generation_settings": {}}).profile == "llamacpp"
    unknown = identify(models("openrouter"), None, None)
    assert unknown.profile is None and "'openrouter', which no profile knows" in unknown.reason
    assert identify("not json", [], 3).profile is None


def test_a_server_that_is_not_up_falls_back_to_plain_json_and_says_why() -> None:
    found = probe_server("http://127.0.0.1:9/v1")  # nothing listens on the discard port
    assert found.profile is None and "did not answer /v1/models" in found.reason


def test_a_busy_single_slot_server_is_waited_for_and_a_miss_is_asked_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from supportagent.llm import detect

    monkeypatch.setattr(detect, "CONNECT_TIMEOUT", 0.2)
    with StubLLM() as stub:
        missed = probe_server(stub.url)  # not recognised: not remembered either
        assert missed.profile is None
        stub.persona, stub.get_delay = "llama-cpp-python", 0.6  # answers once it is free
        found = probe_server(stub.url)
        assert found.profile == "llamacpp-python"
        asked = len(stub.gets)
        assert probe_server(stub.url) == found and len(stub.gets) == asked  # remembered
