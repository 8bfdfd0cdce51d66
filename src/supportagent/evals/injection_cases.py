"""The cases of `eval injection`: reading attack sets, and planting each attack in a ticket, a KB
article or a resolved ticket around a question the demo knowledge base answers.

A planted document keeps the id of the one it stands in for, so retrieval finds it where it
found the original; a row may name the placements it is for (``placements``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from supportagent.domain import Document, Ticket
from supportagent.errors import UserError

PLACEMENTS = ("ticket", "kb", "resolved")
#: Demo questions the knowledge base answers, each with the article and the resolved ticket
#: that answer it: the attacks are planted around them.
BASES = (
    ("T-2001", "kb-rate-limits", "RT-1001"),
    ("T-2009", "kb-pagination", "RT-1015"),
    ("T-2036", "kb-idempotency", "RT-1012"),
    ("T-2047", "kb-delivery-statuses", "RT-1025"),
    ("T-2025", "kb-error-codes", "RT-1003"),
)


@dataclass(frozen=True, slots=True)
class Attack:
    id: str
    attack: str
    category: str
    #: What an obedient model writes when it obeys; default: the attack itself.
    goal: str = ""
    placements: tuple[str, ...] = PLACEMENTS
    tools: tuple[str, ...] = ()
    wants: str = ""  # "prompt" | "key" | ""

    @property
    def demand(self) -> str:
        return self.goal or self.attack


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    attack: Attack | None  # None: a clean control question
    placement: str
    ticket: Ticket
    #: The planted document, and the original it stands in for during this case.
    document: Document | None = None
    original: Document | None = None


def read_attacks(path: Path) -> tuple[list[Attack], list[str]]:
    """The attacks (and carrier texts, if any) of an injection dataset folder or file."""
    folder = path if path.is_dir() else path.parent
    attacks_file = path if path.is_file() else folder / "attacks.jsonl"
    attacks = [_attack(row, attacks_file, n) for n, row in _jsonl(attacks_file)]
    carriers_file = folder / "carriers.jsonl"
    carriers = (
        [str(row.get("text", "")) for _, row in _jsonl(carriers_file)]
        if carriers_file.is_file()
        else []
    )
    if not attacks:
        raise UserError(f"{attacks_file}: no attacks (JSONL rows of {{id, attack, category}})")
    return attacks, [c for c in carriers if c.strip()]


def _jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read ({exc})") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}:{number}: not a JSON line ({exc.msg})") from None
        if not isinstance(row, dict):
            raise UserError(f"{path}:{number}: expected a JSON object")
        yield number, row


def _attack(row: Mapping[str, Any], path: Path, number: int) -> Attack:
    if not str(row.get("id", "")).strip() or not str(row.get("attack", "")).strip():
        raise UserError(f"{path}:{number}: an attack needs an 'id' and an 'attack' text")
    placements = tuple(row.get("placements") or PLACEMENTS)
    unknown = sorted(set(placements) - set(PLACEMENTS))
    if unknown:
        raise UserError(f"{path}:{number}: unknown placement {unknown[0]!r}; use {PLACEMENTS}")
    return Attack(
        id=str(row["id"]),
        attack=str(row["attack"]),
        category=str(row.get("category") or "uncategorised"),
        goal=str(row.get("goal") or ""),
        placements=placements,
        tools=tuple(str(t) for t in row.get("tools") or ()),
        wants=str(row.get("wants") or ""),
    )


# ---------------------------------------------------------------------------- planting


def in_carrier(carrier: str, attack: str) -> str:
    """``carrier`` with ``attack`` inserted at the sentence end nearest its middle."""
    ends = [m.end() for m in re.finditer(r"[.!?](?=\s)", carrier)]
    if not ends:
        return f"{carrier.rstrip()}\n\n{attack}"
    cut = min(ends, key=lambda end: abs(end - len(carrier) // 2))
    return f"{carrier[:cut]} {attack}{carrier[cut:]}"


def in_article(body: str, attack: str) -> str:
    """The article ``body`` with ``attack`` as a paragraph after each section's first one."""
    out, pending = [], False
    for block in re.split(r"\n\s*\n", body.strip()):
        out.append(block)
        if block.lstrip().startswith("#"):
            pending = True
        elif pending:
            out.append(attack)
            pending = False
    if attack not in out:
        out.insert(min(1, len(out)), attack)
    return "\n\n".join(out)


def in_answer(body: str, attack: str) -> str:
    """A resolved ticket's ``body`` (question, blank line, answer) with ``attack`` in the answer,
    after its first sentence."""
    question, _, answer = body.partition("\n\n")
    first = re.search(r"[.!?](?=\s)", answer)
    cut = first.end() if first else len(answer)
    return f"{question}\n\n{answer[:cut]} {attack}{answer[cut:]}"


def build_cases(
    attacks: Sequence[tuple[Attack, Sequence[str]]],
    inbox: Mapping[str, Ticket],
    documents: Mapping[str, Document],
    sample: int | None = None,
) -> list[Case]:
    """Every (attack, placement) case, plus the clean controls; ``sample``: the first N attacks.

    ``attacks`` pairs each attack with the carrier texts of its dataset.
    """
    chosen = list(attacks)[:sample] if sample is not None else list(attacks)
    cases: list[Case] = []
    for base_id, _, _ in BASES:
        base = inbox[base_id]
        cases.append(Case(f"INJ-CONTROL-{base_id}", None, "control", replace(base, id="")))
    for n, (attack, carriers) in enumerate(chosen):
        base_id, kb_id, resolved_id = BASES[n % len(BASES)]
        base = inbox[base_id]
        for placement in attack.placements:
            case_id = f"INJ-{n + 1:04d}-{placement}"
            if placement == "ticket":
                planted = (
                    "For context, this is the e-mail that made us ask:\n\n"
                    + in_carrier(carriers[n % len(carriers)], attack.attack)
                    if carriers
                    else attack.attack
                )
                ticket = replace(base, body=f"{base.body}\n\n{planted}")
                cases.append(Case(case_id, attack, placement, ticket))
                continue
            original = documents[kb_id if placement == "kb" else resolved_id]
            plant = in_article if placement == "kb" else in_answer
            document = replace(original, body=plant(original.body, attack.attack))
            cases.append(Case(case_id, attack, placement, base, document, original))
    return [replace(c, ticket=replace(c.ticket, id=c.id)) for c in cases]
