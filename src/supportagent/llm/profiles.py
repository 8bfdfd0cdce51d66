"""Endpoint profiles as data: where a model lives, which key it takes, and what it supports.

One OpenAI-compatible client talks to every endpoint; what differs between them (how to ask
for structured output, tool calls, token limits, the name of the token-limit parameter, how
long to wait and whether a timed-out request may be sent again) is a row here, merged into the
request by the client. Adding an endpoint is adding a row.

Which row applies: the one ``SUPPORTAGENT_LLM_PROFILE`` names; else the hosted API the base URL
names; else what the server says it is when asked (:mod:`supportagent.llm.detect`); else
``compatible``. Every endpoint records which profile it got and why.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal
from urllib.parse import urlsplit

from pydantic import SecretStr

from supportagent.config import Settings
from supportagent.errors import UserError

#: How a profile asks for structured output:
#: ``json_schema``: OpenAI's ``{"type": "json_schema", "json_schema": {...}}`` (constrained
#: decoding on vLLM, llama-server, Ollama; strict mode on OpenAI);
#: ``json_object_schema``: llama-cpp-python's ``{"type": "json_object", "schema": {...}}``
#: (grammar-constrained; it rejects ``json_schema`` with HTTP 500);
#: ``json_object``: plain JSON mode, the shape comes from the prompt's example only;
#: ``prompt``: nothing in the request, only the prompt.
OutputMode = Literal["json_schema", "json_object_schema", "json_object", "prompt"]

#: What a local server that checks no key is sent as a key (the SDK insists on one).
NO_KEY_NEEDED = "not-needed"
#: Seconds to wait for one request: hosted APIs answer in seconds; a small machine running a
#: model itself may need minutes for one draft (about 100 s for a draft on two cores).
HOSTED_TIMEOUT = 60.0
LOCAL_TIMEOUT = 600.0


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
    #: Substrings of a base URL that identify this endpoint: host names of hosted APIs only.
    url_markers: tuple[str, ...] = field(default=())
    timeout: float = HOSTED_TIMEOUT
    #: False for a server that keeps computing a request its client gave up on and serves one
    #: request at a time: a retry would queue behind the abandoned one and double the work.
    #: None (not known): retried, except on a server on this machine or a private network.
    retry_timeouts: bool | None = None


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
            output_mode="json_schema",  # Ollama passes the schema on as its `format`
            strict_schema=False,
            tool_calls=True,
            max_output_tokens=4096,
            context_tokens=8192,
            needs_key=False,
            timeout=LOCAL_TIMEOUT,
            retry_timeouts=False,
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
            timeout=LOCAL_TIMEOUT,
            # vLLM batches requests and aborts the ones whose client went away.
            retry_timeouts=True,
        ),
        Profile(
            name="llamacpp",  # llama.cpp's own llama-server
            base_url="http://localhost:8080/v1",
            model="local-model",  # llama-server answers with the model it loaded
            output_mode="json_schema",
            strict_schema=False,
            tool_calls=False,  # needs --jinja on the server
            max_output_tokens=4096,
            context_tokens=8192,
            needs_key=False,
            timeout=LOCAL_TIMEOUT,
            retry_timeouts=False,
        ),
        Profile(
            name="llamacpp-python",  # llama-cpp-python's server (python -m llama_cpp.server)
            base_url="http://localhost:8000/v1",
            model=None,  # the --model_alias, or the model's path
            output_mode="json_object_schema",
            strict_schema=False,
            tool_calls=False,
            max_output_tokens=4096,
            context_tokens=8192,  # its default --n_ctx is 2048: set SUPPORTAGENT_LLM_CONTEXT
            needs_key=False,
            timeout=LOCAL_TIMEOUT,
            retry_timeouts=False,  # one request at a time, finished even when abandoned
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
#: The profile for a base URL no row recognises and no server answer identifies.
FALLBACK_PROFILE = "compatible"


@dataclass(frozen=True, slots=True)
class Detection:
    """What a server said it is: the profile it matches (None: not recognised) and why."""

    profile: str | None
    reason: str
    #: The context window the server reports, when it reports one.
    context_tokens: int | None = None


#: Asks the server at a base URL what it is (the I/O lives in llm/detect.py).
Probe = Callable[[str], Detection]


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A resolved endpoint: profile, base URL, model and key. The key never prints."""

    profile: Profile
    base_url: str
    model: str
    api_key: SecretStr = field(repr=False)
    key_source: str = NO_KEY_NEEDED
    #: Why this profile: the setting, the URL, or what the server answered.
    profile_reason: str = ""
    timeout: float = HOSTED_TIMEOUT
    retry_timeouts: bool = True
    context_tokens: int = 0

    def __post_init__(self) -> None:
        if not self.context_tokens:
            object.__setattr__(self, "context_tokens", self.profile.context_tokens)

    def describe(self) -> str:
        return f"model {self.model}, profile {self.profile.name}, {self.base_url}"


def key_configured(settings: Settings) -> bool:
    """True when any model key is set: what makes ``auto`` choose the llm engine."""
    return any(_secret(settings, name) for name in _KEY_SETTINGS)


def choose_profile(settings: Settings, probe: Probe | None = None) -> tuple[Profile, Detection]:
    """The profile for these settings and why: named, else the hosted API the URL names, else
    what the server answers to ``probe``, else ``compatible``; without a URL, the key's own."""
    if settings.llm_profile:
        name = settings.llm_profile.strip().lower()
        if name not in PROFILES:
            known = ", ".join(PROFILES)
            raise UserError(
                f"Unknown SUPPORTAGENT_LLM_PROFILE {settings.llm_profile!r}; use one of {known}."
            )
        return PROFILES[name], Detection(name, "SUPPORTAGENT_LLM_PROFILE names it")
    if settings.llm_base_url:
        url = settings.llm_base_url.lower()
        for profile in PROFILES.values():
            if any(marker in url for marker in profile.url_markers):
                return profile, Detection(profile.name, f"the base URL is {profile.name}'s API")
        if probe is None:
            return PROFILES[FALLBACK_PROFILE], Detection(None, "the server was not asked")
        found = probe(settings.llm_base_url)
        if found.profile in PROFILES:
            return PROFILES[found.profile], found
        return PROFILES[FALLBACK_PROFILE], replace(found, reason=f"{found.reason}; plain JSON")
    only_openai = _secret(settings, "openai_api_key") and not (
        _secret(settings, "llm_api_key") or _secret(settings, "deepseek_api_key")
    )
    if only_openai:
        return PROFILES["openai"], Detection("openai", "only OPENAI_API_KEY is set")
    return PROFILES[DEFAULT_PROFILE], Detection(DEFAULT_PROFILE, "the default endpoint")


def resolve_endpoint(settings: Settings, *, probe: Probe | None = None) -> Endpoint:
    """Base URL, model, key, profile and timeouts for the llm engine; a UserError that says
    what to set if something is missing. ``probe`` asks an unknown server what it is."""
    profile, why = choose_profile(settings, probe)
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
    key, source = _key_for(settings, profile)
    local = is_local_url(base_url)
    return Endpoint(
        profile,
        base_url,
        model,
        key,
        source,
        profile_reason=why.reason,
        timeout=settings.llm_timeout or max(profile.timeout, LOCAL_TIMEOUT * local),
        retry_timeouts=not local if profile.retry_timeouts is None else profile.retry_timeouts,
        context_tokens=settings.llm_context or why.context_tokens or profile.context_tokens,
    )


def _key_for(settings: Settings, profile: Profile) -> tuple[SecretStr, str]:
    """The key this endpoint gets and the variable it came from; a UserError if none fits."""
    if secret := _secret(settings, "llm_api_key"):
        return secret, "SUPPORTAGENT_LLM_API_KEY"
    if profile.key_setting and (secret := _secret(settings, profile.key_setting)):
        return secret, profile.key_variable
    if not profile.needs_key:
        return SecretStr(NO_KEY_NEEDED), NO_KEY_NEEDED
    raise UserError(
        f"No API key for the llm engine ({profile.name}): set {profile.key_variable}"
        + (
            ""
            if profile.key_variable == "SUPPORTAGENT_LLM_API_KEY"
            else " or SUPPORTAGENT_LLM_API_KEY"
        )
        + ", or run with --engine offline (the default without a key)."
    )


def is_local_url(url: str) -> bool:
    """True for a base URL on this machine or a private network: a server someone runs."""
    host = (urlsplit(url).hostname or "").lower()
    if host in {"localhost", "host.docker.internal"} or host.endswith((".local", ".internal")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


_KEY_SETTINGS = ("llm_api_key", "deepseek_api_key", "openai_api_key")


def _secret(settings: Settings, name: str) -> SecretStr | None:
    value = getattr(settings, name, None)
    if isinstance(value, SecretStr) and value.get_secret_value().strip():
        return SecretStr(value.get_secret_value().strip())
    return None
