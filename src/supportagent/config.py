"""Settings: one place, one order (explicit argument, environment, `.env`, default).

The environment and ``.env`` are read here rather than by pydantic-settings: importing it
(and the asyncio it brings) took about 0.05 s alone, and 0.026 s of a warm one-shot ``triage``
once typer had loaded pydantic (issue 17). What it did for us is small and kept exactly: a variable
``SUPPORTAGENT_<FIELD>`` (or a field's own alias, such as ``DEEPSEEK_API_KEY``), matched
without regard to case, from the environment over ``.env`` (read with python-dotenv), with
explicit arguments over both; unknown names are ignored, and every value is validated by
pydantic as the field's type, so ``"false"`` is a bool and ``"abc"`` for a number an error.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

ENV_PREFIX = "SUPPORTAGENT_"
ENV_FILE = ".env"


class Settings(BaseModel):
    """Everything configurable, read from ``SUPPORTAGENT_*`` variables and ``.env``.

    ``Settings(**values)`` reads the environment and ``.env`` (in the working directory) under
    ``values``; ``_env_file=None`` leaves ``.env`` out. Secrets are ``SecretStr``: they print
    as ``**********`` and are never written anywhere.
    """

    model_config = ConfigDict(extra="ignore")

    home: Path = Field(default=Path(".supportagent"), description="Data directory.")
    database_url: str | None = Field(
        default=None, description="SQLAlchemy URL; default: SQLite file under home."
    )
    engine: Literal["auto", "offline", "llm"] = "auto"
    max_revisions: int = Field(default=2, ge=0, le=5)
    max_reformulations: int = Field(default=2, ge=0, le=5)
    evidence_k: int = Field(default=6, ge=1, le=50)
    confidence_threshold: float | None = Field(
        default=None, description="Evidence gate threshold; default: the calibrated one."
    )
    # --- model endpoint (issue: LLM engine) ---
    llm_base_url: str | None = Field(
        default=None, description="OpenAI-compatible base URL; default: the profile's (DeepSeek)."
    )
    llm_model: str | None = Field(default=None, description="Model name; default: the profile's.")
    llm_api_key: SecretStr | None = Field(
        default=None, description="Key for the endpoint; else DEEPSEEK_API_KEY / OPENAI_API_KEY."
    )
    # The endpoints' own key variables, unprefixed, from the environment or `.env`.
    deepseek_api_key: SecretStr | None = Field(default=None, validation_alias="DEEPSEEK_API_KEY")
    openai_api_key: SecretStr | None = Field(default=None, validation_alias="OPENAI_API_KEY")
    llm_profile: str | None = Field(
        default=None, description="Endpoint profile name; default: guessed from the base URL."
    )
    llm_timeout: float | None = Field(
        default=None, gt=0, description="Seconds per model request; default: the profile's."
    )
    llm_context: int | None = Field(
        default=None, ge=512, description="The model's context window; default: the profile's."
    )
    trace_prompts: bool = Field(default=False, description="Keep prompts and replies in traces.")
    redact_pii: bool = Field(
        default=True, description="Personal data becomes placeholders before any model call."
    )
    max_api_calls: int | None = Field(
        default=None, ge=0, description="Cap on model requests per run (retries count)."
    )
    max_tokens: int | None = Field(default=None, ge=0, description="Cap on tokens per run.")
    # --- embeddings (issue: hybrid retrieval) ---
    embedder: Literal["onnx", "openai", "none"] = "onnx"
    semantic_safety: bool = Field(
        default=True, description="Screen each sentence's meaning, not only the rule table."
    )
    embedding_model: str | None = None
    embedding_base_url: str | None = None
    # --- drafts ---
    draft_greeting: str = Field(
        default="Hello,", description="First line of every draft staged for review."
    )
    draft_closing: str = Field(
        default="Best regards,\nThe support team",
        description="Last lines of every draft staged for review (\\n for a line break).",
    )
    # --- audit log (docs/review.md) ---
    audit_key: SecretStr | None = Field(
        default=None, description="Key for the audit log's MACs; never written anywhere."
    )
    audit_head_file: str | None = Field(
        default=None,
        description="Append-only record of the audit head; default: audit-head.log in home; "
        "'off' keeps none.",
    )
    # --- triage log (`supportagent triage`) ---
    triage_log: str | None = Field(
        default=None,
        description="CSV file every `triage` run appends one row per ticket to; default: "
        "triage-log.csv in home; 'off' keeps none.",
    )
    # --- web ---
    host: str = "127.0.0.1"
    port: int = Field(default=5050, ge=1, le=65535)
    token: SecretStr | None = None

    def __init__(self, _env_file: str | Path | None = ENV_FILE, **values: Any) -> None:
        keys = _input_keys()
        given = {keys.get(name, name): value for name, value in values.items()}
        super().__init__(**{**_from_environment(_env_file, keys), **given})

    @field_validator("draft_greeting", "draft_closing", mode="after")
    @classmethod
    def _line_breaks(cls, value: str) -> str:
        # An environment variable cannot hold a line break easily: "\n" stands for one.
        return value.replace("\\n", "\n").strip()

    @field_validator("home", mode="before")
    @classmethod
    def _expand_home(cls, value: object) -> object:
        return Path(value).expanduser() if isinstance(value, str) else value

    def resolved_audit_head_file(self) -> Path | None:
        """Where the audit head file is, or None when it is switched off."""
        value = (self.audit_head_file or "").strip()
        if value.lower() == "off":
            return None
        return Path(value).expanduser() if value else self.home / "audit-head.log"

    def resolved_triage_log(self) -> Path | None:
        """Where `triage` appends its CSV rows, or None when the log is switched off."""
        value = (self.triage_log or "").strip()
        if value.lower() == "off":
            return None
        return Path(value).expanduser() if value else self.home / "triage-log.csv"

    def resolved_database_url(self) -> str:
        """The database URL, with ``postgresql://`` mapped to the psycopg 3 driver."""
        url = self.database_url or f"sqlite:///{(self.home / 'supportagent.db').resolve()}"
        if url.startswith("postgresql://") or url.startswith("postgres://"):
            url = "postgresql+psycopg://" + url.split("://", 1)[1]
        return url


def _input_keys() -> dict[str, str]:
    """Field name -> the key validation reads it under (its alias, if it has one)."""
    keys = {}
    for name, field in Settings.model_fields.items():
        alias = field.validation_alias
        keys[name] = alias if isinstance(alias, str) else name
    return keys


def _from_environment(env_file: str | Path | None, keys: dict[str, str]) -> dict[str, str]:
    """The fields' values found in ``.env`` and then the environment (which wins), each under
    the key validation reads (``keys``: :func:`_input_keys`); variable names match without
    regard to case."""
    wanted = {
        (key if key != name else ENV_PREFIX + name).lower(): key for name, key in keys.items()
    }
    found: dict[str, str] = {}
    if env_file is not None and Path(env_file).is_file():
        from dotenv import dotenv_values

        for variable, value in dotenv_values(env_file, encoding="utf-8").items():
            key = wanted.get(variable.lower())
            if key is not None and value is not None:  # a bare NAME line has no value
                found[key] = value
    for variable, value in os.environ.items():
        key = wanted.get(variable.lower())
        if key is not None:
            found[key] = value
    return found


def load_settings(**overrides: object) -> Settings:
    """Settings from the environment and ``.env``, with explicit ``overrides`` winning."""
    explicit = {k: v for k, v in overrides.items() if v is not None}
    return Settings(**explicit)  # type: ignore[arg-type]
