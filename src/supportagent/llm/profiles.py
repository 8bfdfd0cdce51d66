"""Endpoint profiles as data: where a model lives, which key it takes, and what it supports.

One OpenAI-compatible client talks to every endpoint; what differs between them (structured
output mode, tool calls, token limits, the name of the token-limit parameter) is a row here,
merged into the request by the client. Adding an endpoint is adding a row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import SecretStr

from supportagent.config import Settings
from supportagent.errors import UserError

#: How a profile asks for JSON: a JSON schema, plain JSON-object mode, or only the prompt.
OutputMode = Literal["json_schema", "json_object", "prompt"]

#: What a local server that checks no key is sent as a key (the SDK insists on one).
NO_KEY_NEEDED = "not-needed"


@dataclass(frozen=True, slots=True)
class Profile:
    """What one kind of endpoint supports. ``None`` for base URL or model: the user must say."""

    name: str
    base_url: str | None
    model: str | None
    output_mode: OutputMode
    strict_schema: bool
    tool_calls: bool
    max_output_tokens: int
    context_tokens: int
    needs_key: bool
    #: The Settings field holding this endpoint's own key (read from its usual variable).
    key_setting: str | None = None
    key_variable: str = "SUPPORTAGENT_LLM_API_KEY"
    max_tokens_param: str = "max_tokens"
    temperature: float | None = 0.0
    #: Substrings of a base URL that identify this kind of endpoint.
    url_markers: tuple[str, ...] = field(default=())


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile(
            name="deepseek",
            base_url="https://api.deepseek.com",
            model="deepseek-chat",
            output_mode="json_object",
            strict_schema=False,
            tool_calls=True,
            max_output_tokens=8192,
            context_tokens=65536,
            needs_key=True,
            key_setting="deepseek_api_key",
            key_variable="DEEPSEEK_API_KEY",
            url_markers=("api.deepseek.com",),
        ),
        Profile(
            name="openai",
            base_url="https://api.openai.com/v1",
            model="gpt-4.1-mini",
            output_mode="json_schema",
            strict_schema=True,
            tool_calls=True,
            max_output_tokens=16384,
            context_tokens=128000,
            needs_key=True,
            key_setting="openai_api_key",
            key_variable="OPENAI_API_KEY",
            max_tokens_param="max_completion_tokens",
            url_markers=("api.openai.com",),
        ),
        Profile(
            name="gemini",
            base_url="https://generativelanguage.googleapis.com/v1beta/openai/",
            model="gemini-2.5-flash",
            output_mode="json_schema",
            strict_schema=False,
            tool_calls=True,
            max_output_tokens=65536,
            context_tokens=1048576,
            needs_key=True,
            url_markers=("generativelanguage.googleapis.com",),
        ),
        Profile(
            name="ollama",
            base_url="http://localhost:11434/v1",
            model="qwen2.5:7b-instruct",
            output_mode="json_schema",
            strict_schema=False,
            tool_calls=True,
            max_output_tokens=4096,
            context_tokens=8192,
            needs_key=False,
            url_markers=(":11434",),
        ),
        Profile(
            name="vllm",
            base_url="http://localhost:8000/v1",
            model=None,  # whatever `vllm serve MODEL` serves
            output_mode="json_schema",
            strict_schema=False,
            tool_calls=False,  # needs --enable-auto-tool-choice and a parser on the server
            max_output_tokens=4096,
            context_tokens=32768,
            needs_key=False,
            url_markers=(":8000",),
        ),
        Profile(
            name="llamacpp",
            base_url="http://localhost:8080/v1",
            model="local-model",  # llama-server answers with the model it loaded
            output_mode="json_schema",
            strict_schema=False,
            tool_calls=False,  # needs --jinja on the server
            max_output_tokens=4096,
            context_tokens=8192,
            needs_key=False,
            url_markers=(":8080",),
        ),
        Profile(
            name="compatible",
            base_url=None,
            model=None,
            output_mode="json_object",
            strict_schema=False,
            tool_calls=True,
            max_output_tokens=4096,
            context_tokens=32768,
            needs_key=False,
        ),
    )
}

DEFAULT_PROFILE = "deepseek"
#: The profile for a base URL no row recognises.
FALLBACK_PROFILE = "compatible"


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A resolved endpoint: profile, base URL, model and key. The key never prints."""

    profile: Profile
    base_url: str
    model: str
    api_key: SecretStr = field(repr=False)
    key_source: str = NO_KEY_NEEDED

    def describe(self) -> str:
        return f"model {self.model}, profile {self.profile.name}, {self.base_url}"


def key_configured(settings: Settings) -> bool:
    """True when any model key is set: what makes ``auto`` choose the llm engine."""
    return any(_secret(settings, name) for name in _KEY_SETTINGS)


def choose_profile(settings: Settings) -> Profile:
    """The named profile, else the one the base URL points at, else the one the key belongs to."""
    if settings.llm_profile:
        try:
            return PROFILES[settings.llm_profile.strip().lower()]
        except KeyError:
            known = ", ".join(PROFILES)
            raise UserError(
                f"Unknown SUPPORTAGENT_LLM_PROFILE {settings.llm_profile!r}; use one of {known}."
            ) from None
    if settings.llm_base_url:
        url = settings.llm_base_url.lower()
        for profile in PROFILES.values():
            if any(marker in url for marker in profile.url_markers):
                return profile
        return PROFILES[FALLBACK_PROFILE]
    only_openai = _secret(settings, "openai_api_key") and not (
        _secret(settings, "llm_api_key") or _secret(settings, "deepseek_api_key")
    )
    return PROFILES["openai" if only_openai else DEFAULT_PROFILE]


def resolve_endpoint(settings: Settings) -> Endpoint:
    """Base URL, model and key for the llm engine; a UserError that says what to set if not."""
    profile = choose_profile(settings)
    base_url = settings.llm_base_url or profile.base_url
    if not base_url:
        raise UserError(
            f"The {profile.name} profile has no default address: set SUPPORTAGENT_LLM_BASE_URL."
        )
    model = settings.llm_model or profile.model
    if not model:
        raise UserError(
            f"The {profile.name} profile has no default model: set SUPPORTAGENT_LLM_MODEL to the "
            "name the server serves."
        )
    if secret := _secret(settings, "llm_api_key"):
        return Endpoint(profile, base_url, model, secret, "SUPPORTAGENT_LLM_API_KEY")
    if profile.key_setting and (secret := _secret(settings, profile.key_setting)):
        return Endpoint(profile, base_url, model, secret, profile.key_variable)
    if not profile.needs_key:
        return Endpoint(profile, base_url, model, SecretStr(NO_KEY_NEEDED))
    raise UserError(
        f"No API key for the llm engine ({profile.name}): set {profile.key_variable}"
        + (
            ""
            if profile.key_variable == "SUPPORTAGENT_LLM_API_KEY"
            else " or SUPPORTAGENT_LLM_API_KEY"
        )
        + ", or run with --engine offline (the default without a key)."
    )


_KEY_SETTINGS = ("llm_api_key", "deepseek_api_key", "openai_api_key")


def _secret(settings: Settings, name: str) -> SecretStr | None:
    value = getattr(settings, name, None)
    if isinstance(value, SecretStr) and value.get_secret_value().strip():
        return SecretStr(value.get_secret_value().strip())
    return None
