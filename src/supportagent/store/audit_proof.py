"""What a verify of the audit log proves, and what it cannot, in words for the person reading it.

Pure: it turns the verdicts of ``audit_verify`` (the chain, the MACs, the head file, an anchor)
into two lists of sentences. What the log can prove depends on what seals it (``audit_seal``),
and saying so is part of the answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from supportagent.store.audit_seal import AuditSeal, HeadFile

if TYPE_CHECKING:
    from supportagent.store.audit_verify import AuditProblem


@dataclass
class MacCheck:
    """MAC verdicts gathered along the walk (only counted when a key is set)."""

    good: int = 0
    last_good: int = 0
    bad: list[int] = field(default_factory=list)
    bad_rows: dict[int, tuple[str, str]] = field(default_factory=dict)
    #: Events without a MAC before the first one with a MAC (written before the key was set).
    before_key: int = 0
    missing_after_keyed: list[int] = field(default_factory=list)
    seen: bool = False
    #: Events carrying a MAC that could not be checked: no key here.
    unchecked: int = 0
    head_ok: bool = False
    problems: list[AuditProblem] = field(default_factory=list)


@dataclass
class HeadFileCheck:
    """The head file's verdict: what it vouches for, and what disagrees with it."""

    found: HeadFile | None
    #: Every append to this database writes this file (see ``AuditSeal.head_file_complete``).
    complete: bool = False
    vouched_through: int = 0
    #: The chain goes on past the file's last line, though the file should hold every append.
    behind: bool = False
    problems: list[AuditProblem] = field(default_factory=list)


def describe_proof(
    events: int,
    head_seq: int,
    seal: AuditSeal,
    macs: MacCheck,
    files: HeadFileCheck,
    anchored: int | None,
    *,
    chain_ok: bool,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(What this verify proves, what it cannot prove.) ``proves`` is empty when it failed."""
    proves: list[str] = []
    if chain_ok:
        if events:
            proves.append(
                f"the chain: events 1 to {head_seq} each match their hash and link to the one "
                f"before, the head names event {head_seq}, and no event lies past it"
            )
        else:
            proves.append("the chain is empty, and its head says so")
        if seal.keyed and macs.good and macs.head_ok and not macs.before_key:
            proves.append(
                "the key: every event and the head carry a valid MAC under "
                "SUPPORTAGENT_AUDIT_KEY, so nobody without the key inserted, edited, re-hashed "
                "or appended an event, or rewrote the head"
            )
        elif seal.keyed and macs.good and macs.head_ok:
            first = macs.before_key + 1
            proves.append(
                f"the key: events {first} to {head_seq} and the head carry a valid MAC under "
                "SUPPORTAGENT_AUDIT_KEY, and a MAC covers the chain before it, so nobody "
                f"without the key has changed any event since event {first} was appended"
            )
        if files.found is not None and files.vouched_through:
            proves.append(
                f"the head file ({files.found.path}): events 1 to {files.vouched_through} are "
                "as they were when this data directory appended them"
            )
        if anchored is not None:
            proves.append(f"the anchor: events 1 to {anchored} are as they were when it was taken")
    return tuple(proves), tuple(_cannot(events, head_seq, seal, macs, files, anchored))


def _cannot(
    events: int,
    head_seq: int,
    seal: AuditSeal,
    macs: MacCheck,
    files: HeadFileCheck,
    anchored: int | None,
) -> list[str]:
    cannot: list[str] = []
    if not seal.keyed:
        if macs.unchecked:
            cannot.append(
                f"{macs.unchecked} events carry MACs, but SUPPORTAGENT_AUDIT_KEY is not set "
                "here, so none was checked"
            )
        else:
            cannot.append(
                "no key (SUPPORTAGENT_AUDIT_KEY): someone who can write to the database can "
                "rewrite an event, every hash after it and the head"
            )
    elif events and not macs.seen:
        cannot.append(
            "no event carries a MAC: the log was written before SUPPORTAGENT_AUDIT_KEY was set, "
            "or rewritten with every MAC stripped; the key cannot tell which (the head file "
            "can), and the next event appended with the key will cover the chain as it is"
        )
    elif macs.before_key:
        cannot.append(
            f"events 1 to {macs.before_key} carry no MAC: written before SUPPORTAGENT_AUDIT_KEY "
            f"was set, or rewritten with every MAC stripped before event {macs.before_key + 1} "
            "was appended; the key cannot tell which (the head file can)"
        )
    cut = "cutting off the last events and moving the head back"
    replay = " (putting back an old head row with its MAC)" if seal.keyed else ""
    if files.found is None:
        where = (
            f"no head file at {seal.head_file} yet"
            if seal.head_file is not None
            else "no head file (SUPPORTAGENT_AUDIT_HEAD_FILE=off)"
        )
        cannot.append(f"{where}: {cut}{replay} would not show")
    else:
        if events and files.vouched_through < head_seq and not files.complete:
            cannot.append(
                f"events {files.vouched_through + 1} to {head_seq} are not in the head file "
                "(appended from another machine or data directory, or while it could not be "
                "written)"
            )
        cannot.append(
            "the head file is only as safe as its folder: whoever can rewrite it and the "
            f"database could also hide {cut}; keep it on append-only storage "
            "(SUPPORTAGENT_AUDIT_HEAD_FILE) or copy the anchor elsewhere"
        )
    if anchored is None and events:
        cannot.append(
            "keep the anchor below somewhere else: `audit verify --anchor` then proves every "
            "event up to it, whatever else is rewritten"
        )
    return cannot
