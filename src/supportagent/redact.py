"""Personal data out of what a model is sent: typed placeholders, and back for the reviewer.

A ticket (and the resolved tickets quoted as evidence) may carry e-mail addresses, phone
numbers, card numbers, IBANs, keys and street addresses. Before text leaves the machine for a
model, :class:`Redactor` replaces each with a typed placeholder (``[EMAIL_1]``, ``[CARD_1]``):
the same value always gets the same placeholder within one redactor (one ticket), so a model
can still tell two addresses apart and echo the one it means. :meth:`Redactor.restore` puts
the real values back where the model echoed a placeholder; only the draft staged for the
reviewer is restored, never a trace or a call record.

Detection is deliberately conservative, because a false positive costs the model a fact it
needs (a version, a date, an order id, a limit): card numbers must pass the Luhn check and
start like a card, IBANs the ISO 13616 mod-97 check, phone numbers must be valid numbers
by libphonenumber's metadata, and a token counts as a secret only by a known key prefix or by
length, mixed characters and high entropy.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import phonenumbers

__all__ = [
    "KINDS",
    "Finding",
    "Redactor",
    "find_personal_data",
    "iban_valid",
    "luhn_valid",
]

#: The kinds of placeholder, in the order a tie between overlapping findings is decided.
KINDS = ("SECRET", "EMAIL", "IBAN", "CARD", "PHONE", "ADDRESS")

#: National numbers are read as numbers of these regions (an international number, written
#: with ``+``, is recognised whatever the region).
PHONE_REGIONS = ("US", "GB", "DE", "FR")


@dataclass(frozen=True, slots=True)
class Finding:
    """One piece of personal data: its kind and where it is in the text."""

    kind: str
    start: int
    end: int
    value: str


# --- checksums -----------------------------------------------------------------------------


def luhn_valid(digits: str) -> bool:
    """Whether the digit string passes the Luhn (mod 10) check that card numbers carry."""
    if not digits.isdigit():
        return False
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def iban_valid(iban: str) -> bool:
    """Whether ``iban`` (spaces allowed) has an IBAN's shape and passes the mod-97 check."""
    compact = iban.replace(" ", "").upper()
    if not re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}", compact):
        return False
    moved = compact[4:] + compact[:4]
    number = "".join(str(int(c, 36)) for c in moved)
    return int(number) % 97 == 1


# --- detectors -----------------------------------------------------------------------------

_EMAIL = re.compile(
    r"(?<![\w.%+-])[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}\b"
)
#: 13 to 19 digits, in groups split by single spaces or hyphens (not the tail of an IBAN
#: whose checksum failed: ``DE89 3704 ...``).
_CARD = re.compile(r"(?<![\w-])(?<![A-Z]{2}\d{2} )\d(?:[ -]?\d){12,18}(?![\w-])")
#: Card numbers start with 2 (Mastercard's new range), 3 (Amex, Diners, JCB), 4 (Visa),
#: 5 (Mastercard) or 6 (Discover, UnionPay, Maestro): an id or a timestamp starting with
#: 1, 7, 8, 9 or 0 that happens to pass Luhn is no card.
_CARD_FIRST = frozenset("23456")
_IBAN_COMPACT = re.compile(r"\b[A-Z]{2}\d{2}[A-Z0-9]{11,30}\b")
_IBAN_SPACED = re.compile(r"\b[A-Z]{2}\d{2}(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,4})?\b")
#: Keys by their issuer's prefix: OpenAI / DeepSeek style ``sk-``, AWS access key ids,
#: GitHub, Slack, Google, Stripe, GitLab.
_KEY_PREFIXED = re.compile(
    r"(?<![\w-])(?:"
    r"sk-[A-Za-z0-9_-]{16,}"
    r"|(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}"
    r"|AIza[A-Za-z0-9_-]{35}"
    r"|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|glpat-[A-Za-z0-9_-]{20,}"
    r")"
)
#: A candidate for a high-entropy token: one run of key characters.
_TOKEN = re.compile(r"(?<![\w+/=.-])[A-Za-z0-9+/=_-]{24,}(?![\w+/=.-])")
#: Bits per character above which a long mixed token reads as random (a key, a password),
#: not as words or an id: English text is ~2.5-3.5, a random base64 string of 24+ chars ~4.3.
_ENTROPY = 3.8
_SUFFIXES = (
    r"Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl"
    r"|Terrace|Square|Sq|Parkway|Pkwy|Highway|Hwy|Close|Crescent|Row|Mews"
)
_UNIT = r"(?:,?\s+(?:Suite|Ste|Apt|Apartment|Unit|Floor|Fl|Flat)\.?\s*#?[A-Za-z0-9-]{1,6})?"
#: ``221B Baker Street``, ``1600 Pennsylvania Ave NW, Suite 400``.
_ADDRESS_EN = re.compile(
    rf"\b\d{{1,5}}[A-Za-z]?\s+(?:[A-Z][A-Za-z'-]+\.?\s+){{1,4}}(?:{_SUFFIXES})\b\.?"
    rf"(?:\s+(?:N|S|E|W|NE|NW|SE|SW)\b)?{_UNIT}"
)
#: ``Hauptstraße 12a``, ``Rue de la Paix 5`` is rarer than ``12 rue de la Paix``.
_ADDRESS_DE = re.compile(
    r"\b[A-ZÄÖÜ][a-zäöüß]+(?:straße|strasse|str\.|weg|gasse|platz|allee|ring|damm)"
    r"\s+\d{1,4}[a-z]?\b"
)
_ADDRESS_FR = re.compile(
    r"\b\d{1,4}(?:\s?(?:bis|ter))?,?\s+(?:rue|avenue|boulevard|bd|place|allée|chemin|quai)"
    r"\s+(?:(?:de|du|des|la|le|l'|d')\s*)*[A-ZÉ][\w'-]+(?:\s+[A-ZÉ][\w'-]+){0,3}"
)


def _entropy(token: str) -> float:
    counts = Counter(token)
    n = len(token)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _looks_random(token: str) -> bool:
    """A long token of mixed letters and digits whose characters are spread like a key's."""
    letters = sum(c.isalpha() for c in token)
    digits = sum(c.isdigit() for c in token)
    if letters < 4 or (digits < 2 and not any(c in "+/" for c in token)):
        return False  # words joined by hyphens or underscores, or a long number
    parts = [p for p in re.split(r"[-_]", token) if p]
    if len(parts) > 3 and all(len(p) < 10 for p in parts):
        return False  # an id built of short segments (ids, slugs, dates)
    return _entropy(token) >= _ENTROPY


def _secrets(text: str) -> Iterator[Finding]:
    for match in _KEY_PREFIXED.finditer(text):
        yield Finding("SECRET", match.start(), match.end(), match.group())
    for match in _TOKEN.finditer(text):
        if _looks_random(match.group()):
            yield Finding("SECRET", match.start(), match.end(), match.group())


def _emails(text: str) -> Iterator[Finding]:
    for match in _EMAIL.finditer(text):
        yield Finding("EMAIL", match.start(), match.end(), match.group())


def _ibans(text: str) -> Iterator[Finding]:
    for pattern in (_IBAN_COMPACT, _IBAN_SPACED):
        for match in pattern.finditer(text):
            value = match.group()
            # A spaced IBAN's last group may have run into the next word: drop groups
            # from the end until the checksum holds.
            while value.count(" ") >= 3 and not iban_valid(value):
                value = value.rsplit(" ", 1)[0]
            if iban_valid(value):
                yield Finding("IBAN", match.start(), match.start() + len(value), value)


def _cards(text: str) -> Iterator[Finding]:
    for match in _CARD.finditer(text):
        value = match.group()
        digits = re.sub(r"[ -]", "", value)
        if digits[0] in _CARD_FIRST and luhn_valid(digits) and _even_groups(value):
            yield Finding("CARD", match.start(), match.end(), value)


def _even_groups(value: str) -> bool:
    """Separators, if any, are all one kind: ``4111-1111 1111-1111`` is no way to write a card."""
    return not ("-" in value and " " in value)


#: A number written in international format: ``+`` and 8 to 15 digits, maybe grouped.
_INTERNATIONAL = re.compile(r"(?<![\w+])\+\d(?:[ ().-]{0,2}\d){7,14}(?![\w-])")


def _phones(text: str) -> Iterator[Finding]:
    # Written with "+", a number of a possible length for its country is a phone number even
    # where libphonenumber knows its range as unassigned (the fictional +44 7700 900xxx).
    for match in _INTERNATIONAL.finditer(text):
        try:
            number = phonenumbers.parse(match.group(), None)
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_possible_number(number):
            yield Finding("PHONE", match.start(), match.end(), match.group())
    for region in PHONE_REGIONS:
        for found in phonenumbers.PhoneNumberMatcher(
            text, region, leniency=phonenumbers.Leniency.VALID
        ):
            yield Finding("PHONE", found.start, found.end, found.raw_string)


def _addresses(text: str) -> Iterator[Finding]:
    for pattern in (_ADDRESS_EN, _ADDRESS_DE, _ADDRESS_FR):
        for match in pattern.finditer(text):
            yield Finding("ADDRESS", match.start(), match.end(), match.group().rstrip(" ,"))


_DETECTORS = (_secrets, _emails, _ibans, _cards, _phones, _addresses)


def find_personal_data(text: str) -> list[Finding]:
    """The personal data in ``text``, in order, without overlaps.

    Where findings overlap, the one that starts first wins, then the longer one, then the kind
    earlier in :data:`KINDS` (an e-mail address inside a key is part of the key).
    """
    found = [f for detect in _DETECTORS for f in detect(text)]
    found.sort(key=lambda f: (f.start, -(f.end - f.start), KINDS.index(f.kind)))
    kept: list[Finding] = []
    for finding in found:
        if kept and finding.start < kept[-1].end:
            continue
        kept.append(finding)
    return kept


# --- placeholders --------------------------------------------------------------------------

#: Redacted texts a redactor remembers (one ticket's prompts and trace need a few dozen).
MEMO_TEXTS = 1024
_PLACEHOLDER = re.compile(rf"\[({'|'.join(KINDS)})_(\d+)\]")


class Redactor:
    """Placeholders for the personal data of one ticket, and the way back.

    Thread-safe: a ticket's calls may come from the worker threads of one engine.
    """

    def __init__(self) -> None:
        self._placeholder: dict[tuple[str, str], str] = {}
        self._value: dict[str, str] = {}
        self._counts: Counter[str] = Counter()
        #: Texts already redacted: a ticket's text and passages are rendered into several
        #: prompts and trace events, and the answer for a text never changes once given.
        self._done: dict[str, str] = {}
        self._lock = threading.Lock()

    def redact(self, text: str) -> str:
        """``text`` with each piece of personal data replaced by its placeholder.

        Placeholders this redactor issued stay as they are (redacting twice changes
        nothing); text that only looks like one (a ticket that writes ``[EMAIL_2]``) is
        altered so that :meth:`restore` can never turn it into someone's address.
        """
        if not text:
            return text
        with self._lock:
            done = self._done.get(text)
        if done is not None:
            return done
        original = text
        text = _PLACEHOLDER.sub(self._keep_own, text)
        out: list[str] = []
        at = 0
        for finding in find_personal_data(text):
            out.append(text[at : finding.start])
            out.append(self._issue(finding.kind, finding.value))
            out.append(text[finding.start + len(finding.value) : finding.end])
            at = finding.end
        out.append(text[at:])
        redacted = "".join(out)
        with self._lock:
            if len(self._done) < MEMO_TEXTS:
                self._done[original] = redacted
        return redacted

    def restore(self, text: str) -> str:
        """``text`` with every placeholder this redactor issued replaced by its real value;
        a placeholder it never issued (one a model made up) stays as it is."""
        with self._lock:
            return _PLACEHOLDER.sub(lambda m: self._value.get(m.group(), m.group()), text)

    def counts(self) -> dict[str, int]:
        """How many distinct values of each kind were replaced."""
        with self._lock:
            return {kind: self._counts[kind] for kind in KINDS if self._counts[kind]}

    def placeholders(self) -> list[str]:
        with self._lock:
            return list(self._value)

    def _issue(self, kind: str, value: str) -> str:
        key = (kind, " ".join(value.split()))
        with self._lock:
            placeholder = self._placeholder.get(key)
            if placeholder is None:
                self._counts[kind] += 1
                placeholder = f"[{kind}_{self._counts[kind]}]"
                self._placeholder[key] = placeholder
                self._value[placeholder] = value
            return placeholder

    def _keep_own(self, match: re.Match[str]) -> str:
        with self._lock:
            if match.group() in self._value:
                return match.group()
        return f"[{match.group(1)}-{match.group(2)}]"
