"""Prompt files: versioned YAML in ``supportagent/agent/prompts``, rendered strictly.

A prompt file has ``name``, ``version``, ``max_tokens`` (the reply's limit), ``system`` and
``user`` templates (Jinja2, StrictUndefined: a missing variable is an error, not an empty
string), and optionally ``example``: a reply in the shape asked for, which the templates show
the model as ``{{ example }}`` (small models copy an example well, and echo a raw JSON Schema
back). The system message holds only what never changes, so that providers' prefix caches
can serve it. Untrusted text goes into a prompt only through :func:`fence`, which wraps it in
markers the text itself cannot forge.
"""

from __future__ import annotations

import functools
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
    example: str = ""

    @property
    def ref(self) -> str:
        """``name@version``: what traces, call records and the cache key name."""
        return f"{self.name}@{self.version}"

    def render(self, **variables: Any) -> tuple[dict[str, str], ...]:
        """System and user messages with ``variables`` filled in; raises on a missing one."""
        variables = {"example": self.example, **variables}
        return (
            {"role": "system", "content": _render(self.system, variables)},
            {"role": "user", "content": _render(self.user, variables)},
        )


#: The marker characters; untrusted text cannot contain them, so it cannot forge a marker.
_OPEN, _CLOSE = "<<<", ">>>"
_NEUTRAL = {_OPEN: "\u2039\u2039\u2039", _CLOSE: "\u203a\u203a\u203a"}


def fence(kind: str, text: str, /, **attributes: str) -> str:
    """``text`` between an opening and a closing marker, ``<<<KIND ...>>>`` and
    ``<<<END KIND>>>``.

    Any ``<<<`` or ``>>>`` inside the text (or an attribute) is replaced by look-alike
    characters first, so a ticket that writes its own ``<<<END TICKET>>>`` cannot end the
    block early and speak as the instructions. The markers carry nothing that looks like an
    id: a model cites the one id a passage has (its ``id`` attribute), never a digest.
    """
    kind = kind.upper()
    attrs = "".join(f' {key}="{_attribute(value)}"' for key, value in attributes.items() if value)
    return f"{_OPEN}{kind}{attrs}{_CLOSE}\n{neutralise(text)}\n{_OPEN}END {kind}{_CLOSE}"


def neutralise(text: str) -> str:
    """``text`` with the marker sequences replaced by look-alikes."""
    for marker, lookalike in _NEUTRAL.items():
        text = text.replace(marker, lookalike)
    return text


def _attribute(value: object) -> str:
    return neutralise(" ".join(str(value).split()).replace('"', "'"))


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
        example=" ".join(str(data.get("example", "")).split()),
    )
    for template in (prompt.system, prompt.user):
        try:
            _ENV.parse(template)
        except jinja2.TemplateSyntaxError as exc:
            raise PromptFileError(f"{source}: template error: {exc}") from exc
    return prompt
