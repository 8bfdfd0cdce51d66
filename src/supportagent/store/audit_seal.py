"""What anchors the audit chain outside its own table: a keyed MAC and an append-only head file.

The hash chain (``audit.py``) shows an edited or deleted event to anyone who cannot recompute
hashes. Someone with write access to the table can: they can rewrite every hash from an edit to
the head, or cut off the tail and move the head back. Two anchors that the table's writer does
not control rule that out:

- **a key** (``SUPPORTAGENT_AUDIT_KEY``): every event and the head carry an HMAC-SHA256 of their
  hash under it. Without the key nobody can forge, edit or re-hash an event, or rewrite the head,
  unseen. The key comes from the environment and is never written anywhere.
- **a head file** (``audit-head.log`` in the data directory, or ``SUPPORTAGENT_AUDIT_HEAD_FILE``):
  once an append has committed, its sequence number and hash are appended to the file as a line.
  A hash covers every event before it, so each line vouches for the whole chain up to it: cutting
  the tail, or rewriting anything below the last line, shows, even to someone who puts back an
  old head row with its old MAC.

Neither stops someone who holds the key and can also rewrite the head file; an anchor kept
elsewhere (``supportagent audit verify`` prints one) covers that, up to the anchor.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

#: Shortest accepted key: a MAC under a guessable key proves nothing.
MIN_KEY_CHARS = 32
KEY_HINT = 'generate one with: python -c "import secrets; print(secrets.token_hex(32))"'

_EVENT_LABEL = b"supportagent-audit-event:"
_HEAD_LABEL = b"supportagent-audit-head:"

_log = logging.getLogger("supportagent.audit")


@dataclass(frozen=True, slots=True)
class HeadFileEntry:
    """One line of the head file: the chain held ``seq`` events, the last with hash ``digest``."""

    line: int
    seq: int
    digest: str


@dataclass(slots=True)
class HeadFile:
    """The head file as verify reads it: its entries and the numbers of lines it could not read."""

    path: Path
    entries: list[HeadFileEntry] = field(default_factory=list)
    malformed: list[int] = field(default_factory=list)

    @property
    def highest(self) -> HeadFileEntry | None:
        return max(self.entries, key=lambda e: e.seq, default=None)


class AuditSeal:
    """The key and the head file that seal the chain; both optional (``AuditSeal()``: neither)."""

    __slots__ = ("_warned", "head_file", "head_file_complete", "key")

    def __init__(
        self,
        key: bytes | None = None,
        head_file: Path | None = None,
        *,
        head_file_complete: bool = False,
    ) -> None:
        self.key = key
        self.head_file = head_file
        #: True when every process that appends to this database writes this head file (the
        #: SQLite database inside the data directory): then an event missing from the file was
        #: not appended by SupportAgent. False for a shared database (PostgreSQL), where other
        #: machines append too.
        self.head_file_complete = head_file_complete
        self._warned = False

    def __repr__(self) -> str:  # never the key itself
        return (
            f"AuditSeal(keyed={self.keyed}, head_file={self.head_file}, "
            f"complete={self.head_file_complete})"
        )

    @property
    def keyed(self) -> bool:
        return self.key is not None

    def event_mac(self, digest: str) -> str | None:
        """The MAC of an event with hash ``digest``; None without a key."""
        if self.key is None:
            return None
        return hmac.new(self.key, _EVENT_LABEL + digest.encode("ascii"), hashlib.sha256).hexdigest()

    def head_mac(self, seq: int, digest: str) -> str | None:
        """The MAC of a chain head at ``seq`` with hash ``digest``; None without a key."""
        if self.key is None:
            return None
        data = _HEAD_LABEL + f"{seq}:{digest}".encode("ascii")
        return hmac.new(self.key, data, hashlib.sha256).hexdigest()

    def matches(self, expected: str | None, found: str | None) -> bool:
        return expected is not None and found is not None and hmac.compare_digest(expected, found)

    def note(self, seq: int, digest: str) -> None:
        """Append ``seq digest`` to the head file, after the append committed. Never raises.

        The append is already committed, so a failure here must not look like a failed write:
        it is logged once per process, and verify then reports the events after the last line
        as not vouched for by the file.
        """
        if self.head_file is None:
            return
        try:
            fd = os.open(self.head_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                # One write() of one short line: with O_APPEND, lines of many processes never mix.
                os.write(fd, f"{seq} {digest}\n".encode("ascii"))
            finally:
                os.close(fd)
        except OSError as exc:
            if not self._warned:
                self._warned = True
                _log.warning(
                    "audit head file %s: cannot append (%s); verify will not vouch for events "
                    "from %d on until it can",
                    self.head_file,
                    exc.strerror or exc,
                    seq,
                )

    def read_head_file(self) -> HeadFile | None:
        """The head file's entries, or None when there is no head file (configured or on disk)."""
        if self.head_file is None or not self.head_file.exists():
            return None
        found = HeadFile(self.head_file)
        for number, text in enumerate(_lines(self.head_file), start=1):
            entry = _parse(number, text)
            if entry is None:
                found.malformed.append(number)
            else:
                found.entries.append(entry)
        return found


def _lines(path: Path) -> Iterator[str]:
    with path.open("rb") as handle:
        for raw in handle:
            yield raw.decode("ascii", "replace").rstrip("\n")


def _parse(number: int, text: str) -> HeadFileEntry | None:
    seq_text, _, digest = text.partition(" ")
    if not seq_text.isdigit() or len(digest) != 64 or not _is_hex(digest):
        return None
    return HeadFileEntry(number, int(seq_text), digest)


def _is_hex(text: str) -> bool:
    return all(ch in "0123456789abcdef" for ch in text)


def key_problem(key: str) -> str | None:
    """Why ``key`` cannot serve as the audit key, or None when it can."""
    if len(key) < MIN_KEY_CHARS:
        return (
            f"SUPPORTAGENT_AUDIT_KEY is {len(key)} characters; it must be at least "
            f"{MIN_KEY_CHARS}: {KEY_HINT}"
        )
    return None
