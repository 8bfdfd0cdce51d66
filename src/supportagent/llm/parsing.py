"""Reading a model's reply as JSON for a pydantic model, tolerating what models wrap around it.

Small models often give a valid answer in a wrapping: markdown fences, a sentence before or
after, the JSON Schema they were shown with the answer under ``"properties"``, a one-key object
(``{"reply": {...}}``), a one-element list, or a field the schema does not have. Each of those
is unwrapped before validation, so a correct answer is not sent back for repair over its
packaging. What is not an answer (a bare schema, a truncated object, the wrong fields) stays
an error, and the error says what to change.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)

_FENCED = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)
#: Keys of a JSON Schema object: a reply made only of these is the schema echoed back.
_SCHEMA_KEYS = frozenset(
    {"type", "properties", "required", "additionalProperties", "title", "description", "$defs"}
)
#: How many ``{`` positions in a long reply are tried as the start of an object.
_MAX_STARTS = 40
_MAX_DEPTH = 3


class ReplyInvalid(ValueError):
    """A reply that is not the JSON the prompt asked for; the message says what is wrong."""


def json_values(text: str) -> Iterator[Any]:
    """Every JSON value a reply may hold, most likely first: the whole text, fenced blocks,
    then each object that starts at a ``{`` and parses (words before and after ignored)."""
    body = text.strip()
    decoder = json.JSONDecoder()
    seen: set[str] = set()
    for chunk in (body, *(m.group(1).strip() for m in _FENCED.finditer(body))):
        if chunk in seen or not chunk:
            continue
        seen.add(chunk)
        try:
            yield json.loads(chunk)
            continue
        except json.JSONDecodeError:
            pass
        for start in [i for i, ch in enumerate(chunk) if ch in "{["][:_MAX_STARTS]:
            try:
                value, _end = decoder.raw_decode(chunk, start)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict | list):
                yield value


def unwrapped(value: Any, depth: int = 0) -> Iterator[Any]:
    """``value`` and the answers inside its common wrappings, outermost first."""
    yield value
    if depth >= _MAX_DEPTH:
        return
    if isinstance(value, list) and len(value) == 1:
        yield from unwrapped(value[0], depth + 1)
    if not isinstance(value, dict):
        return
    properties = value.get("properties")
    if isinstance(properties, dict) and set(value) <= _SCHEMA_KEYS:
        yield from unwrapped(properties, depth + 1)  # the schema envelope
    if len(value) == 1:
        (inner,) = value.values()
        if isinstance(inner, dict | list):
            yield from unwrapped(inner, depth + 1)  # {"reply": {...}}


def is_bare_schema(value: Any) -> bool:
    """True for a JSON Schema with no answer in it (every property is a type description)."""
    if not isinstance(value, dict) or not set(value) <= _SCHEMA_KEYS:
        return False
    properties = value.get("properties")
    return (
        isinstance(properties, dict)
        and bool(properties)
        and all(isinstance(p, dict) and ("type" in p or "$ref" in p) for p in properties.values())
    )


def validate(value: Any, model: type[T]) -> T:
    """``value`` as ``model``, after dropping fields the schema does not have (a model that
    adds an ``"explanation"`` has still answered)."""
    for _ in range(8):
        try:
            return model.model_validate(value)
        except ValidationError as exc:
            extras = [e["loc"] for e in exc.errors() if e["type"] == "extra_forbidden"]
            if not extras or len(extras) != len(exc.errors()):
                raise
            value = _without(value, extras)
    return model.model_validate(value)


def parse_reply(text: str, model: type[T]) -> T:
    """``text`` validated as ``model``; ReplyInvalid with a short, model-readable reason."""
    if not text.strip():
        raise ReplyInvalid("the reply was empty; answer with one JSON object")
    first: ValidationError | None = None
    found_json = found_other = bare_schema = False
    for value in json_values(text):
        found_json = True
        for candidate in unwrapped(value):
            try:
                return validate(candidate, model)
            except ValidationError as exc:
                # The closest miss explains best (the answer inside an envelope, not the
                # envelope); among the first JSON value's candidates only.
                if first is None or (not found_other and len(exc.errors()) < len(first.errors())):
                    first = exc
        found_other = True
        bare_schema = bare_schema or is_bare_schema(value)
    if bare_schema:
        raise ReplyInvalid(
            "the reply is the JSON Schema, not an answer; reply with the values themselves, "
            "shaped like the example"
        )
    if not found_json or first is None:
        raise ReplyInvalid(_json_error(text))
    problems = [
        f"{'.'.join(str(p) for p in e['loc']) or '(top level)'}: {e['msg']}"
        for e in first.errors()[:6]
    ]
    raise ReplyInvalid("the JSON does not match the schema: " + "; ".join(problems))


def extract_json(text: str) -> Any:
    """The first JSON value in a reply (fences and words around it tolerated)."""
    if not text.strip():
        raise ReplyInvalid("the reply was empty; answer with one JSON object")
    for value in json_values(text):
        return value
    raise ReplyInvalid(_json_error(text))


def _json_error(text: str) -> str:
    body = text.strip()
    if fenced := _FENCED.search(body):
        body = fenced.group(1).strip()
    try:
        json.loads(body)
    except json.JSONDecodeError as exc:
        return f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
    return "no JSON object in the reply"


def _without(value: Any, paths: list[tuple[int | str, ...]]) -> Any:
    """A copy of ``value`` without the keys at ``paths`` (pydantic error locations)."""
    copy = json.loads(json.dumps(value))
    for path in paths:
        node = copy
        for step in path[:-1]:
            node = node[step]
        if isinstance(node, dict):
            node.pop(path[-1], None)
    return copy
