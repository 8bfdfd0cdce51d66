"""Prompt files: versioned YAML in ``supportagent/agent/prompts``, rendered strictly.

A prompt file has ``name``, ``version``, ``max_tokens`` (the reply's limit), ``system`` and
``user`` templates (Jinja2, StrictUndefined: a missing variable is an error, not an empty
string). Untrusted text goes into a prompt only through :func:`fence`, which wraps it in
markers the text itself cannot forge.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from importlib import resources
from typing import Any

import jinja2
import yaml

PROMPT_DIR = ("agent", "prompts")


@dataclass(frozen=True, slots=True)
class Prompt:
    name: str
    version: str
    max_tokens: int
    system: str
    user: str

    @property
    def ref(self) -> str:
        """``name@version``: what traces, call records and the cache key name."""
        return f"{self.name}@{self.version}"

    def render(self, **variables: Any) -> tuple[dict[str, str], ...]:
        """System and user messages with ``variables`` filled in; raises on a missing one."""
        return (
            {"role": "system", "content": _render(self.system, variables)},
            {"role": "user", "content": _render(self.user, variables)},
        )


def fence(kind: str, text: str, /, **attributes: str) -> str:
    """``text`` between an opening and a closing marker that carry a digest of the text.

    The digest ties the closing marker to this exact text, so a ticket that writes its own
    ``<<<END ...>>>`` line cannot end the block early and speak as the instructions.
    """
    kind = kind.upper()
    nonce = hashlib.sha256(f"{kind}\n{text}".encode()).hexdigest()[:10]
    attrs = "".join(
        f' {key}="{_attribute(value)}"' for key, value in attributes.items() if value is not None
    )
    return f"<<<{kind} {nonce}{attrs}>>>\n{text}\n<<<END {kind} {nonce}>>>"


def _attribute(value: object) -> str:
    return " ".join(str(value).split()).replace('"', "'")


_ENV = jinja2.Environment(
    undefined=jinja2.StrictUndefined,
    autoescape=False,  # plain text for a model, not HTML
    keep_trailing_newline=False,
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENV.globals["fence"] = fence


@functools.lru_cache(maxsize=64)
def _compiled(source: str) -> jinja2.Template:
    """Compiling a template costs milliseconds; the few prompt texts are compiled once."""
    return _ENV.from_string(source)


def _render(source: str, variables: dict[str, Any]) -> str:
    return _compiled(source).render(**variables).strip()


class PromptFileError(ValueError):
    """A prompt file that is missing a field or does not parse."""


@functools.cache
def load_prompt(name: str) -> Prompt:
    """The packaged prompt ``name`` (``agent/prompts/<name>.yaml``)."""
    resource = resources.files("supportagent").joinpath(*PROMPT_DIR, f"{name}.yaml")
    return parse_prompt(resource.read_text(encoding="utf-8"), f"{name}.yaml")


def parse_prompt(text: str, source: str = "<string>") -> Prompt:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise PromptFileError(f"{source}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise PromptFileError(f"{source}: expected a mapping")
    missing = [k for k in ("name", "version", "max_tokens", "system", "user") if k not in data]
    if missing:
        raise PromptFileError(f"{source}: missing {', '.join(missing)}")
    prompt = Prompt(
        name=str(data["name"]),
        version=str(data["version"]),
        max_tokens=int(data["max_tokens"]),
        system=str(data["system"]),
        user=str(data["user"]),
    )
    for template in (prompt.system, prompt.user):
        try:
            _ENV.parse(template)
        except jinja2.TemplateSyntaxError as exc:
            raise PromptFileError(f"{source}: template error: {exc}") from exc
    return prompt
