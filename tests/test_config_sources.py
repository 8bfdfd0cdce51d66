"""Where settings come from: explicit arguments over the environment over `.env` over defaults.

config.py reads the environment and `.env` itself (issue 17: pydantic-settings cost 0.05 s of
every start). These pin the behaviour it kept: the names, their order, case, aliases, unknown
names, `.env`'s syntax, and errors that name the variable without echoing its value.
"""

from __future__ import annotations

from pathlib import Path

import pydantic
import pytest
from typer.testing import CliRunner

from supportagent.cli import app
from supportagent.config import Settings, load_settings


def _dotenv(folder: Path, text: str) -> None:
    (folder / ".env").write_text(text, encoding="utf-8")


def test_defaults_without_environment_or_dotenv(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SUPPORTAGENT_HOME")
    settings = load_settings()
    assert settings.home == Path(".supportagent")
    assert (settings.engine, settings.max_revisions, settings.port) == ("auto", 2, 5050)
    assert settings.llm_api_key is None and settings.deepseek_api_key is None


def test_explicit_beats_environment_beats_dotenv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _dotenv(tmp_path, "SUPPORTAGENT_ENGINE=offline\nSUPPORTAGENT_PORT=6001\nSUPPORTAGENT_HOST=h\n")
    monkeypatch.setenv("SUPPORTAGENT_PORT", "6002")
    monkeypatch.setenv("SUPPORTAGENT_HOST", "from-env")
    settings = load_settings(host="explicit")
    assert (settings.engine, settings.port, settings.host) == ("offline", 6002, "explicit")


def test_a_none_override_leaves_the_environment_in_charge(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUPPORTAGENT_ENGINE", "llm")
    assert load_settings(engine=None).engine == "llm"


def test_names_match_without_regard_to_case(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("supportagent_max_revisions", "4")
    monkeypatch.setenv("openai_api_key", "sk-lower")
    settings = load_settings()
    assert settings.max_revisions == 4
    assert settings.openai_api_key is not None
    assert settings.openai_api_key.get_secret_value() == "sk-lower"


def test_endpoint_keys_are_read_under_their_own_names_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SUPPORTAGENT_DEEPSEEK_API_KEY", "sk-prefixed")  # not a name we read
    assert load_settings().deepseek_api_key is None
    _dotenv(tmp_path, "DEEPSEEK_API_KEY=sk-from-file\n")
    key = load_settings().deepseek_api_key
    assert key is not None and key.get_secret_value() == "sk-from-file"
    # An explicit argument uses the field's name, and wins.
    key = load_settings(deepseek_api_key="sk-explicit").deepseek_api_key
    assert key is not None and key.get_secret_value() == "sk-explicit"


def test_unknown_names_are_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _dotenv(tmp_path, "SUPPORTAGENT_NO_SUCH_SETTING=1\nPATH_LIKE=x\n")
    monkeypatch.setenv("SUPPORTAGENT_ALSO_UNKNOWN", "2")
    assert load_settings().engine == "auto"


def test_dotenv_syntax_export_quotes_comments_and_bare_names(tmp_path: Path) -> None:
    _dotenv(
        tmp_path,
        "# a comment\n"
        "export SUPPORTAGENT_PORT=6003\n"
        "SUPPORTAGENT_HOST='0.0.0.0'\n"
        'SUPPORTAGENT_DRAFT_GREETING="Hi there," # trailing comment\n'
        "SUPPORTAGENT_TOKEN\n",  # a name with no value sets nothing
    )
    settings = load_settings()
    assert (settings.port, settings.host, settings.draft_greeting) == (6003, "0.0.0.0", "Hi there,")
    assert settings.token is None


def test_env_file_none_leaves_dotenv_out(tmp_path: Path) -> None:
    _dotenv(tmp_path, "SUPPORTAGENT_ENGINE=offline\n")
    assert Settings(_env_file=None).engine == "auto"
    assert Settings().engine == "offline"


def test_strings_are_validated_as_the_fields_types(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUPPORTAGENT_TRACE_PROMPTS", "yes")
    monkeypatch.setenv("SUPPORTAGENT_REDACT_PII", "0")
    monkeypatch.setenv("SUPPORTAGENT_LLM_TIMEOUT", "2.5")
    monkeypatch.setenv("SUPPORTAGENT_DRAFT_CLOSING", "Thanks,\\nThe team")
    settings = load_settings()
    assert (settings.trace_prompts, settings.redact_pii, settings.llm_timeout) == (True, False, 2.5)
    assert settings.draft_closing == "Thanks,\nThe team"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SUPPORTAGENT_PORT", "abc"),
        ("SUPPORTAGENT_EVIDENCE_K", "0"),
        ("SUPPORTAGENT_ENGINE", "sometimes"),
        ("SUPPORTAGENT_MAX_API_CALLS", ""),
    ],
)
def test_a_bad_value_is_an_error(name: str, value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(pydantic.ValidationError):
        load_settings()


def test_the_cli_names_the_bad_variable_and_never_echoes_its_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SUPPORTAGENT_PORT", "sk-looks-like-a-key")
    result = CliRunner().invoke(app, ["list-data"])
    assert result.exit_code == 1
    assert "SUPPORTAGENT_PORT" in result.output
    assert "sk-looks-like-a-key" not in result.output
