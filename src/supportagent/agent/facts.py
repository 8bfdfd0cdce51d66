"""Facts in passages (a subject, a value with its unit, a scope), and conflicts between them.

"Kestrel remembers an idempotency key for 24 hours" and "keys for batch sends stay valid for
three days" are two facts about one subject with two values. Two sources that give different
values for the same subject conflict, however they are worded, unless one of them is scoped
(a plan, an endpoint, a region) and the other is a general rule that does not claim to hold
everywhere: then the scoped one is an *exception*, which a draft may state when it also cites
the general rule, and a reviewer confirms.

Pure functions. Sameness of subject is judged from the words around each value (its sentence,
the passage's headings, a resolved ticket's question) and, when the caller passes an
``embed`` function, from the meaning of the two sentences with their values masked.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

import numpy as np
import numpy.typing as npt

from supportagent.domain import DocKind, Passage, resolved_answer
from supportagent.regexcache import ProgramCache
from supportagent.retrieval.text import tokenize

_PATTERNS = ProgramCache.for_module(__name__, __file__)  # see regexcache

Embed = Callable[[Sequence[str]], npt.NDArray[np.float32]]

# ---------------------------------------------------------------------------- quantities

_UNIT_ALIASES = {
    "millisecond": "ms millisecond milliseconds",
    "second": "s sec secs second seconds",
    "minute": "min mins minute minutes",
    "hour": "h hr hrs hour hours",
    "day": "day days",
    "week": "week weeks wk wks",
    "fortnight": "fortnight fortnights",
    "month": "month months",
    "year": "year years yr yrs",
    "byte": "byte bytes",
    "kb": "kb kib kilobyte kilobytes",
    "mb": "mb mib megabyte megabytes",
    "gb": "gb gib gigabyte gigabytes",
    "tb": "tb tib terabyte terabytes",
    "percent": "% percent",
    "usd": "$ usd dollar dollars",
    "eur": "€ eur euro euros",
    "gbp": "£ gbp pound pounds",
    "request": "request requests req reqs",
    "call": "call calls",
    "message": "message messages msg msgs",
    "email": "email emails e-mail e-mails",
    "sms": "sms",
    "character": "character characters char chars",
    "attempt": "attempt attempts",
    "retry": "retry retries",
    "time": "time times",
    "user": "user users",
    "seat": "seat seats",
    "member": "member members",
    "key": "key keys",
    "webhook": "webhook webhooks",
    "project": "project projects",
    "item": "item items",
    "record": "record records",
    "row": "row rows",
    "result": "result results",
    "page": "page pages",
    "file": "file files",
    "connection": "connection connections",
    "event": "event events",
    "credit": "credit credits",
    "token": "token tokens",
    "recipient": "recipient recipients",
    "contact": "contact contacts",
    "segment": "segment segments",
    "pixel": "px pixel pixels",
    # Measures: lengths, weights, volumes, temperatures, power, bandwidth ("6 mm" is "6
    # millimetres"). Single letters are read only in the case that writes them ("5 m", "2 L").
    "mm": "mm millimetre millimetres millimeter millimeters",
    "cm": "cm centimetre centimetres centimeter centimeters",
    "metre": "metre metres meter meters",
    "km": "km kilometre kilometres kilometer kilometers",
    "inch": "inch inches",
    "foot": "ft foot feet",
    "mile": "mile miles",
    # Round 21 of the drafter: "25 nautical miles" and "50 nm" (aviation and shipping write
    # "nm" for nautical miles; a support corpus that means nanometres is rarer).
    "nmi": "nm nmi",
    "gram": "gram grams gramme grammes",
    "kg": "kg kilo kilos kilogram kilograms kilogramme kilogrammes",
    "tonne": "tonne tonnes",
    "lb": "lb lbs",
    "ml": "ml millilitre millilitres milliliter milliliters",
    "litre": "litre litres liter liters",
    "celsius": "°c ºc celsius",
    "fahrenheit": "°f ºf fahrenheit",
    "watt": "w watt watts",
    "kw": "kw kilowatt kilowatts",
    "kwh": "kwh",
    "kbps": "kbps",
    "mbps": "mbps",
    "gbps": "gbps",
    "kbit": "kbit kbits kilobit kilobits",
    "mbit": "mbit mbits megabit megabits",
    "gbit": "gbit gbits gigabit gigabits",
}
#: Every spelling of a unit mapped to its canonical name ("mins" -> "minute").
UNITS = {alias: unit for unit, aliases in _UNIT_ALIASES.items() for alias in aliases.split()}
#: Units written as one letter, in the case that writes them: "5 m" is metres, "5M" is not.
_LETTER_UNITS = {"m": "metre", "g": "gram", "l": "litre", "L": "litre", "W": "watt"}
#: Units of one dimension, each with its size in that dimension's base unit.
_SCALES: dict[str, tuple[str, Decimal]] = {
    "millisecond": ("duration", Decimal("0.001")),
    "second": ("duration", Decimal(1)),
    "minute": ("duration", Decimal(60)),
    "hour": ("duration", Decimal(3600)),
    "day": ("duration", Decimal(86400)),
    "week": ("duration", Decimal(604800)),
    "fortnight": ("duration", Decimal(1209600)),
    "month": ("duration", Decimal(2592000)),
    "year": ("duration", Decimal(31536000)),
    "byte": ("size", Decimal(1)),
    "kb": ("size", Decimal(1024)),
    "mb": ("size", Decimal(1024**2)),
    "gb": ("size", Decimal(1024**3)),
    "tb": ("size", Decimal(1024**4)),
    "mm": ("length", Decimal("0.001")),
    "cm": ("length", Decimal("0.01")),
    "metre": ("length", Decimal(1)),
    "km": ("length", Decimal(1000)),
    "inch": ("length", Decimal("0.0254")),
    "foot": ("length", Decimal("0.3048")),
    "mile": ("length", Decimal("1609.344")),
    "nmi": ("length", Decimal(1852)),
    "gram": ("mass", Decimal("0.001")),
    "kg": ("mass", Decimal(1)),
    "tonne": ("mass", Decimal(1000)),
    "lb": ("mass", Decimal("0.45359237")),
    "ml": ("volume", Decimal("0.001")),
    "litre": ("volume", Decimal(1)),
    "celsius": ("temperature", Decimal(1)),
    "fahrenheit": ("temperature", Decimal(5) / Decimal(9)),
    "watt": ("power", Decimal(1)),
    "kw": ("power", Decimal(1000)),
    "kwh": ("energy", Decimal(1)),
    "kbps": ("bandwidth", Decimal(1000)),
    "mbps": ("bandwidth", Decimal(1000**2)),
    "gbps": ("bandwidth", Decimal(1000**3)),
    # Bits, as a size (eight to a byte); per second they are a bandwidth (_BITS_PER_SECOND).
    "kbit": ("size", Decimal(125)),
    "mbit": ("size", Decimal(125000)),
    "gbit": ("size", Decimal(125000000)),
}
#: "320 kilobits per second" is 320 kbps.
_BITS_PER_SECOND = {"kbit": "kbps", "mbit": "mbps", "gbit": "gbps"}
_PLACES = Decimal("1e-9")  # 50 °F is 10 °C, not 9.99...
#: The dimensions of a measured value (not a duration, a count or money): what "what time",
#: "how heavy", "at what temperature", "which day of the week" or "which version" ask for.
MEASURES = frozenset(
    {"clock", "window", "length", "mass", "volume", "temperature", "power", "energy"}
    | {"bandwidth", "size", "percent", "pixel", "weekday", "monthday", "yeardate", "version"}
    | {"age", "resolution"}
)
#: Scales that do not start at zero: a temperature in Fahrenheit less 32 is in Celsius units.
_OFFSETS = {"fahrenheit": Decimal(-32)}
#: Units of a measure, that number words count for too ("ten millimetres", "five percent").
_MEASURES = frozenset(u for u, (dim, _) in _SCALES.items() if dim not in ("duration", "size"))
_MEASURES |= {"percent", "pixel"}
#: Words between a number and its unit that say which ones count ("five opening days").
_QUALIFIERS = frozenset(
    {
        "business",
        "working",
        "calendar",
        "consecutive",
        "more",
        "additional",
        "opening",
        "open",
        "school",
        "full",
        "clear",
    }
)
_ONES = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9,
}  # fmt: skip
_TEENS = {
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}  # fmt: skip
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}  # fmt: skip
_MULTIPLIERS = {"hundred": 100, "thousand": 1000}
_WORD_NUMBERS = {**_ONES, **_TEENS, **_TENS, "a": 1, "an": 1}


def _alternatives(words: Iterable[str]) -> str:
    return "|".join(sorted(words, key=len, reverse=True))


#: A number in words: "three", "forty-eight", "twenty five", "two hundred", "a thousand".
_NUMBER_WORDS = (
    rf"(?:(?:{_alternatives(_TENS)})(?:[-\u2010 ](?:{_alternatives(_ONES)}))?"
    rf"|{_alternatives(_TEENS)}|{_alternatives(_ONES)}|an?)"
    rf"(?:\s+(?:{_alternatives(_MULTIPLIERS)}))?(?![\w])"
)
_QUANTITY = _PATTERNS.compile(
    r"(?:(?<![\w.\-\u2212])|(?<=[\s(][-\u2212])|(?<=^[-\u2212]))([$€£])?(\d+(?:,\d{3})*(?:\.\d+)?)(?![\d])"
    r"(?:([kK])(?=\s))?"
    rf"|(?<![\w-])({_NUMBER_WORDS})(?=[\s-])",
    re.IGNORECASE,
)
#: "two and a half hours", "an hour and a half".
_AND_HALF = _PATTERNS.compile(r"\s+and\s+a\s+half\b", re.IGNORECASE)


def word_value(words: str) -> Decimal:
    """The number that ``words`` (matched by ``_NUMBER_WORDS``) spell: "forty-eight" is 48."""
    value = 0
    for word in re.split(r"[-\u2010\s]+", words.lower()):
        if word in _MULTIPLIERS:
            value = max(value, 1) * _MULTIPLIERS[word]
        else:
            value += _WORD_NUMBERS[word]
    return Decimal(value)


#: Units counted in words often enough to read "three more times" as a value.
_COUNTED = frozenset({"time", "attempt", "retry"})
_FREQUENCY = _PATTERNS.compile(r"\b(?:once|twice|times|every|per)\s+$", re.IGNORECASE)
_TAIL = _PATTERNS.compile(
    r"(?:\s*|-)(%|[°º]\s?[CF]\b|°|º|[A-Za-z][A-Za-z-]*)(?:\s*([A-Za-z][A-Za-z-]*))?"
)
_PER = _PATTERNS.compile(
    r"\s*(?:/|\bper\b|\ba\b|\ban\b|\beach\b)\s*([A-Za-z][A-Za-z-]*)", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class Quantity:
    """A number with a recognised unit: ``30 days``, ``5 MB``, ``100 requests per second``."""

    value: Decimal
    unit: str
    raw: str
    start: int = 0
    end: int = 0

    @property
    def dimension(self) -> str:
        """What is measured: ``duration``, ``size``, or the unit itself (``request/second``)."""
        head, _, per = self.unit.partition("/")
        base = _SCALES.get(head, (head, Decimal(1)))[0]
        return f"{base}/{per}" if per else base

    @property
    def base_value(self) -> Decimal:
        """The value in its dimension's base unit (seconds, bytes), so 1 day equals 24 hours."""
        head = self.unit.partition("/")[0]
        value = self.value + _OFFSETS.get(head, Decimal(0))
        return (value * _SCALES.get(head, ("", Decimal(1)))[1]).quantize(_PLACES).normalize()


def quantities(text: str) -> list[Quantity]:
    """Numbers with a recognised unit, in order; number words count for durations only
    ("three days", "a day"), so that "a message" is never read as one message."""
    found = []
    for match in _QUANTITY.finditer(text):
        currency, digits, thousands = match.group(1), match.group(2), match.group(3)
        word = match.group(4)
        half = _AND_HALF.match(text, match.end())
        unit, end = _unit_after(text, half.end() if half else match.end())
        if unit is None and currency:
            unit, end = UNITS[currency], match.end()
        if unit is None:
            continue
        elif currency and unit in _SCALES:
            unit, end = UNITS[currency], match.end()  # "$5m" is money, not metres
        duration = unit in _SCALES and _SCALES[unit][0] == "duration"
        if word is not None:
            article = word.lower() in ("a", "an")
            sized = unit in MONEY or (unit in _SCALES and _SCALES[unit][0] == "size")
            counted = unit in _COUNTED or unit in _MEASURES or sized
            if not duration and (not counted or article):
                continue
            if _FREQUENCY.search(text, 0, match.start()) or (article and unit == "second"):
                continue  # "once a month" is how often; "a second key" is not a duration
            if unit == "time" and _AT_ONE_TIME.search(text, 0, match.start()):
                continue  # "at any one time" is a moment, not a count of times
            value = word_value(word)
            if article and _HALF.search(text, 0, match.start()):
                value = Decimal("0.5")  # "half an hour", "half a day"
        else:
            value = Decimal(digits.replace(",", ""))
            if thousands:  # "10k requests"
                value = (value * 1000).to_integral() if value * 1000 % 1 == 0 else value * 1000
        if unit == "pence":
            unit, value = "gbp", value / 100  # "60p" is £0.60 (round 26 of the drafter)
        elif unit == "year" and (old := _OLD.match(text, end)) is not None:
            unit, end, duration = "age", old.end(), False  # "under 12 years old"
        if half is None and duration and (half := _AND_HALF.match(text, end)) is not None:
            end = half.end()  # "an hour and a half"
        if half is not None:
            value += Decimal("0.5")
        per = _PER.match(text, end)
        if per is not None and per.group(1).lower() in UNITS:
            every = UNITS[per.group(1).lower()]
            bandwidth = every == "second" and unit in _BITS_PER_SECOND
            unit = _BITS_PER_SECOND[unit] if bandwidth else f"{unit}/{every}"
            end = per.end()
        elif unit in MONEY and (often := _PER_PERIOD.match(text, end)) is not None:
            unit = f"{unit}/{_PERIOD_OF[often.group(1).lower()][0]}"  # "$3.50 monthly"
            end = often.end()
        start = match.start()
        sign = _MINUS.search(text, 0, start)
        if sign is not None:
            if unit not in ("celsius", "fahrenheit"):
                continue  # "2-3 days", "-4 days": only a temperature is read below zero
            value, start = -value, sign.start()  # "-4 °C"
        found.append(Quantity(value, unit, text[start:end].strip(), start, end))
    clocks = clock_values(text)
    if clocks:
        # "the 01:00-04:00 window" is one value, not "00-04" and a stray number.
        found = [q for q in found if not any(c.start <= q.start < c.end for c in clocks)]
        found = sorted([*found, *clocks], key=lambda q: q.start)
    return found


#: The currency units a money quantity has (its dimension, before any "/month").
MONEY = frozenset({"usd", "eur", "gbp"})
_PER_PERIOD = _PATTERNS.compile(
    r"\s+(hourly|daily|weekly|monthly|yearly|annually)\b", re.IGNORECASE
)
_HALF = _PATTERNS.compile(r"\bhalf\s+$", re.IGNORECASE)
#: What stands just before "one time" when it is a moment ("at any one time", "at one
#: time"): read back from a number word, so that "one time" is then no count of times.
_AT_ONE_TIME = _PATTERNS.compile(r"\bat\s+(?:any\s+|the\s+)?$", re.IGNORECASE)
#: The same moment as a whole phrase, and "one at a time": taken out of a clause before its
#: numbers are read as the conditions a value holds under.
_ONE_TIME = _PATTERNS.compile(
    r"\bat\s+(?:any\s+)?one\s+time\b|\bone\s+at\s+a\s+time\b", re.IGNORECASE
)
#: "into one dye bath", "for a single class", "from one of our lockers": one thing of a kind,
#: which "a single dye-pot batch" says with no number; no condition the value depends on
#: (round 26 of the drafter).
_ONE_OF_A_KIND = _PATTERNS.compile(
    r"\b(?:into|in|per|for|on|to|from|with|within|across)\s+(?:one|a\s+single)\s+"
    r"(?!(?:of|or|and|to|at|more)\b)|\bone\s+of\s+(?=(?:our|the|your|their|its|these|those)\b)",
    re.IGNORECASE,
)
_POST_MERIDIEM = _PATTERNS.compile(r"\.\s?m\b", re.IGNORECASE)
_OLD = _PATTERNS.compile(r"\s+old\b", re.IGNORECASE)
_MINUS = _PATTERNS.compile(r"(?:^|(?<=\s)|(?<=\())[-\u2212]$")


def _unit_after(text: str, start: int) -> tuple[str | None, int]:
    tail = _TAIL.match(text, start)
    if tail is None:
        return None, start
    raw, second = tail.group(1), (tail.group(2) or "").lower()
    first = raw.lower()
    if first in _QUALIFIERS and second:
        return (UNITS[second], tail.end()) if second in UNITS else (None, start)
    if first in ("degree", "degrees", "°", "º", "deg"):
        # "4 degrees", "4 degrees Celsius", "40 °F": Celsius unless it says Fahrenheit.
        if second in ("f", "fahrenheit"):
            return "fahrenheit", tail.end()
        if second in ("c", "celsius", "centigrade"):
            return "celsius", tail.end()
        return "celsius", tail.end(1)
    if first == "per" and second == "cent":
        return "percent", tail.end()
    if first == "nautical" and second in ("mile", "miles"):
        return "nmi", tail.end()
    if first.replace(" ", "") in UNITS and raw[0] in "°º":
        return UNITS[first.replace(" ", "")], tail.end(1)
    if raw == "p" and tail.start(1) == start and _pence(text, start, tail.end(1)):
        return "pence", tail.end(1)  # "60p", not "5 p", "2p.m.", "1080p" nor "4K at 60p"
    if first == "pence":
        return "pence", tail.end(1)
    if first in ("year-old", "year-olds"):
        return "age", tail.end(1)  # "12-year-olds"
    if len(raw) == 1 and raw != "%":
        unit = _LETTER_UNITS.get(raw) or (UNITS.get(raw) if raw.islower() else None)
        return (unit, tail.end(1)) if unit else (None, start)
    if first in UNITS:
        return UNITS[first], tail.end(1)
    return None, start


#: Words of video, where "1080p" is a resolution and "60p" a frame rate, not a price.
_VIDEO = _PATTERNS.compile(
    r"\b(?:fps|frames?|video|videos|footage|resolution|4k|8k|hdr|\d{3,4}p)\b", re.IGNORECASE
)


_NUMBER_BEFORE = _PATTERNS.compile(r"(\d+(?:\.\d+)?)$")


def _pence(text: str, start: int, end: int) -> bool:
    """True when the digits before ``start`` and the "p" ending at ``end`` are a price in pence:
    a whole number under 100 ("60p"; a larger sum is written in pounds), not followed by "m"
    ("2p.m.") and in a sentence that says nothing of video ("1080p", "shoots 4K at 60p")."""
    digits = _NUMBER_BEFORE.search(text, 0, start)
    if digits is None or "." in digits.group(1) or int(digits.group(1)) >= 100:
        return False
    return not _POST_MERIDIEM.match(text, end) and not _VIDEO.search(text)


_MERIDIEM = r"(?:\s*([ap])(?:\.\s?m\.|\s?m\b))"
_CLOCK = (
    rf"(?:(?:([01]?\d|2[0-4]):([0-5]\d)(?![\d:]){_MERIDIEM}?)|(?:(1[0-2]|0?[1-9]){_MERIDIEM})"
    r"|(midnight|noon|midday))"
)
#: A time of day: "01:00", "9:30 pm", "2 a.m."; a window between two: "01:00-04:00",
#: "between 1 and 4 am", "from 22:00 to 06:00".
_CLOCK_TIME = _PATTERNS.compile(rf"(?<![\w:.]){_CLOCK}", re.IGNORECASE)
_WINDOW = _PATTERNS.compile(
    r"(?<![\w:.])(?:(?:between|from)\s+)?"
    rf"(?:{_CLOCK}|(1[0-2]|0?[1-9])(?=\s*(?:-|\u2013|\u2014|to|and|until|till)\s*(?:1[0-2]|0?[1-9])"
    r"\s*[ap]\.?\s?m\b))"
    r"\s*(?:-|\u2013|\u2014|to|and|until|till)\s*"
    rf"{_CLOCK}",
    re.IGNORECASE,
)
_NAMED_TIMES = {"midnight": 0, "noon": 720, "midday": 720}
#: Minutes in a day, which a window's start is counted in so that one number holds both ends.
_DAY_MINUTES = 24 * 60 + 1


def _minutes(groups: Sequence[str | None], meridiem: str | None = None) -> int | None:
    """Minutes after midnight of one matched time (hour, minute, meridiem, hour, meridiem,
    name), or None when it is no time ("25:00")."""
    hour24, minute, mer1, hour12, mer2, name = groups
    if name:
        return _NAMED_TIMES[name.lower()]
    if hour24 is not None:
        hour, mer = int(hour24), mer1
    elif hour12 is not None:
        hour, mer = int(hour12), mer2
    else:
        return None
    mer = (mer or meridiem or "").lower()
    if mer and not 1 <= hour <= 12:
        return None
    if mer == "p" and hour != 12:
        hour += 12
    elif mer == "a" and hour == 12:
        hour = 0
    total = hour * 60 + int(minute or 0)
    return total if total <= 24 * 60 else None


def clock_values(text: str) -> list[Quantity]:
    """Times of day (unit ``clock``, minutes after midnight) and windows between two (unit
    ``window``; :func:`window_bounds` reads both ends back), in order. "12:00-14:00" and
    "between noon and 2 pm" are one window; a bare "14" is no time. A window and a time are
    values of different kinds and are never compared."""
    found: list[Quantity] = []
    taken: list[tuple[int, int]] = []
    for match in _WINDOW.finditer(text):
        g = match.groups()
        end = _minutes(g[7:13])
        end_mer = g[9] or g[11]
        bare = g[6]
        if bare is None:
            start = _minutes(g[0:6], end_mer if not (g[2] or g[4]) and g[0] is None else None)
        else:
            # "between 1 and 4 am" shares the end's meridiem; "10 to 2 pm" starts before noon.
            start = _minutes((None, None, None, bare, end_mer, None))
            if start is not None and end is not None and start > end and end_mer:
                start = _minutes((None, None, None, bare, "ap"[end_mer.lower() == "a"], None))
        if start is None or end is None or start == end:
            continue
        value = Decimal(start * _DAY_MINUTES + end)
        found.append(Quantity(value, "window", match.group(0).strip(), match.start(), match.end()))
        taken.append((match.start(), match.end()))
    for match in _CLOCK_TIME.finditer(text):
        if any(a <= match.start() < b for a, b in taken):
            continue
        g = match.groups()
        if g[5] is not None:
            continue  # "at midday" alone is too loose a time to compare
        minutes = _minutes(g)
        if minutes is None:
            continue
        found.append(
            Quantity(Decimal(minutes), "clock", match.group(0).strip(), match.start(), match.end())
        )
    return sorted(found, key=lambda q: q.start)


#: Words that set an upper limit on a count ("up to 12 hives", "no more than three").
_LIMIT_WORDS = r"up to|as many as|at most|no more than|a maximum of|maximum of"
#: "up to 12 hives", "as many as 30 hive stands", "no more than three reminders": a limit on a
#: count of things, in digits or in words.
_LIMIT_COUNT = _PATTERNS.compile(
    rf"\b(?:{_LIMIT_WORDS})\s+"
    rf"(\d+(?:,\d{{3}})*|{_NUMBER_WORDS})\s+([a-z][a-z-]+)\b",
    re.IGNORECASE,
)
_NOT_COUNTED = frozenset({"of", "more", "per", "a", "an", "the", "in", "on", "at", "for", "to"})


def limit_counts(text: str) -> list[Quantity]:
    """Limits on a count of things that :func:`quantities` has no unit for: "up to 12 hives"
    and "as many as 30 hive stands" are counts of hives (unit ``count:hive``)."""
    found = []
    for match in _LIMIT_COUNT.finditer(text):
        noun = match.group(2).lower()
        if noun in UNITS or noun in _QUALIFIERS or noun in _NOT_COUNTED:
            continue
        stem = noun[:-1] if noun.endswith("s") and not noun.endswith("ss") else noun
        number = match.group(1)
        if number.lower() in ("a", "an"):
            continue  # "up to a dozen", "at most an hour": no count given
        value = Decimal(number.replace(",", "")) if number[0].isdigit() else word_value(number)
        raw_start = match.start(1)
        found.append(
            Quantity(value, f"count:{stem}", text[raw_start : match.end()], raw_start, match.end())
        )
    return found


def window_bounds(quantity: Quantity) -> tuple[int, int] | None:
    """A window's start and end, in minutes after midnight; None for any other value."""
    if quantity.unit != "window":
        return None
    start, end = divmod(int(quantity.value), _DAY_MINUTES)
    return start, end


_DAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "weekday"]
_PERIOD_OF = {
    "hour": ("hour", 1), "day": ("day", 1), "night": ("day", 1), "morning": ("day", 1),
    "evening": ("day", 1), "week": ("week", 1), "fortnight": ("week", 2), "month": ("month", 1),
    "quarter": ("month", 3), "year": ("year", 1), **{d: ("week", 1) for d in _DAYS},
    "hourly": ("hour", 1), "daily": ("day", 1), "nightly": ("day", 1), "weekly": ("week", 1),
    "fortnightly": ("week", 2), "monthly": ("month", 1), "quarterly": ("month", 3),
    "yearly": ("year", 1), "annually": ("year", 1),
}  # fmt: skip
_TIMES = {"once": 1, "twice": 2, "three times": 3, "four times": 4}
_PERIOD_WORDS = "|".join(w for w in _PERIOD_OF if not w.endswith("ly"))
_ADVERBS = "|".join(w for w in _PERIOD_OF if w.endswith("ly"))
_FREQUENCY_PHRASE = _PATTERNS.compile(
    rf"\b(?:(once|twice|three times|four times)\s+(?:a|an|per|each|every)\s+({_PERIOD_WORDS})"
    rf"|(?:every|each)\s+({_PERIOD_WORDS})s?"
    # "billed monthly", "runs nightly": a schedule. Before a noun the word names a thing
    # ("Monthly plans", "the weekly report is a PDF"), and says nothing about when.
    rf"|({_ADVERBS})(?!\s+(?:plans?|subscriptions?|billing|prices?|pricing|fees?|rates?|costs?"
    rf"|charges?|totals?|limits?|quotas?|allowances?|caps?|tiers?|reports?|summary|summaries"
    rf"|digests?|newsletters?|customers?|users?|members?|accounts?)\b))\b",
    re.IGNORECASE,
)


def frequencies(text: str) -> list[Quantity]:
    """How often something happens, as the period between two times: "once a week" and "every
    Monday" are a week, "twice a month" half a month, "daily" a day. Kept apart from
    :func:`quantities`, because "billed monthly" does not say how long anything takes."""
    found = []
    for match in _FREQUENCY_PHRASE.finditer(text):
        times, word = match.group(1), match.group(2) or match.group(3) or match.group(4)
        unit, count = _PERIOD_OF[word.lower()]
        value = Decimal(count) / Decimal(_TIMES[times.lower()] if times else 1)
        found.append(Quantity(value, unit, match.group(0), match.start(), match.end()))
    return found


#: The day a weekly event falls on, said as a habit: "every Thursday", "each Monday", "on
#: Mondays". A single day ("on Monday", "until Friday") is a date, not a schedule, and is not
#: taken; nor is "every weekday".
_WEEKDAY_NAMES = _DAYS[:7]
_WEEKDAY = "|".join(_WEEKDAY_NAMES)
_RECURRING_DAY = _PATTERNS.compile(
    rf"\b(?:(?:every|each)\s+({_WEEKDAY})\b|on\s+({_WEEKDAY})s\b)", re.IGNORECASE
)


def weekdays(text: str) -> list[Quantity]:
    """The weekday of a weekly event (``_RECURRING_DAY``), as a value of the dimension
    ``weekday`` (Monday 0 to Sunday 6): "paid out every Thursday" and "goes out on Mondays"
    give two values of one thing, where both are "weekly" as schedules."""
    found = []
    for match in _RECURRING_DAY.finditer(text):
        day = (match.group(1) or match.group(2)).lower()
        value = Decimal(_WEEKDAY_NAMES.index(day))
        found.append(Quantity(value, "weekday", match.group(0), match.start(), match.end()))
    return found


_MONTHDAY = _PATTERNS.compile(
    r"\b(?:(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)(?:\s+day)?|(?:the\s+)?(last)\s+day)"
    r"\s+of\s+(?:each|every|the)\s+(?:calendar\s+)?month\b",
    re.IGNORECASE,
)
#: The last day of a month, as a value of its own (no month has a 32nd).
LAST_DAY = Decimal(32)


def monthdays(text: str) -> list[Quantity]:
    """The day of a monthly event, as a value of the dimension ``monthday`` (1 to 31, and
    ``LAST_DAY``): "collected on the 1st of each month" and "charged on the 28th of each
    month" give two values of one thing, as "the last day of each month" and "the 15th of each
    month" do. A date of one case ("since the 3rd") says no "of each month" and is not one."""
    found = []
    for match in _MONTHDAY.finditer(text):
        digits = match.group(1)
        if digits is not None and not 1 <= int(digits) <= 31:
            continue  # "the 32nd of each month" is no day
        value = LAST_DAY if digits is None else Decimal(digits)
        found.append(Quantity(value, "monthday", match.group(0), match.start(), match.end()))
    return found


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
#: A month's name, whole or shortened (one group), which ``questions`` reads dates with too.
MONTH = (
    r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t|tember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_YEARDATE = _PATTERNS.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTH}\b(?!\s+\d{{4}})"
    rf"|\b{MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?![,\s]+\d{{4}})(?!\s*(?:[:.]\d|%))",
    re.IGNORECASE,
)


def yeardates(text: str) -> list[Quantity]:
    """The day of a yearly event, as a value of the dimension ``yeardate`` (month times 100
    plus day): "invoices fall due on 1 October" and "the annual fee falls due on 28 May" give two
    values of one thing (round 24 of the drafter). A date with its year ("3 March 2026") is
    one case's, not a rule's, and is not one."""
    found = []
    for match in _YEARDATE.finditer(text):
        day, month = (
            (match.group(1), match.group(2)) if match.group(1) else (match.group(4), match.group(3))
        )
        if not 1 <= int(day) <= 31:
            continue
        value = Decimal((_MONTHS.index(month[:3].lower()) + 1) * 100 + int(day))
        found.append(Quantity(value, "yeardate", match.group(0), match.start(), match.end()))
    return found


#: Systems whose releases are counted in whole numbers (``_VERSION_VALUE``'s last form):
#: "Android 13 or newer", "iOS 16 or later".
_SYSTEMS = frozenset(
    {"android", "ios", "ipados", "macos", "watchos", "windows", "chrome", "chromeos"}
    | {"firefox", "safari", "edge"}
)


#: A version said as the least that something needs: before "or later" and its like ("3.8 or
#: newer", "2.1+"), or after "at least" or "minimum" ("at least version 5.2"). A version
#: that something merely runs ("still on version 1.9", "version 4.2.0 reads the proxy") is
#: a state, not a requirement, and a bare decimal ("3.5 kg", "£3.40") is not one at all.
_VERSION_VALUE = _PATTERNS.compile(
    r"(?<![$€£\d.,])\b(\d+(?:\.\d+){1,2})(?=\s*(?:or|and)\s+(?:later|newer|above|higher|up)\b"
    r"|\+(?!\d)|\s+(?:onwards|onward)\b)"
    r"|\b(?:at\s+least|minimum(?:\s+of)?)\s+(?:(?:version|firmware|release)\s+)?v?"
    r"(\d+(?:\.\d+){1,2})\b(?![.,]\d)"
    # An operating system or a browser counts its releases in whole numbers: "Android 13 or
    # newer", "iOS 16 or later", "Windows 10 and up" (round 24).
    rf"|\b(?:{'|'.join(sorted(_SYSTEMS, key=lambda w: (-len(w), w)))})\s+"
    r"(\d{1,3})(?=\s*(?:or|and)\s+(?:later|newer|above|higher|up)\b|\+(?!\d))",
    re.IGNORECASE,
)
#: Words before a version that say it is one, or that it is the least, not what it is a
#: version of.
_VERSION_WORDS = frozenset(
    {"version", "v", "release", "build", "to", "on", "of", "is", "be", "at", "least", "minimum"}
)
_WORD_BEFORE = _PATTERNS.compile(r"([A-Za-z][\w-]*)\W*$")


def versions(text: str) -> list[Quantity]:
    """Least versions (``_VERSION_VALUE``), as values of the dimension ``version`` ("3.8" is
    3 008 000, so "3.10" and "3.9" stay two): "Auto-lock needs firmware 3.4 or later" and
    "a cargo bike needs firmware 3.8 or newer" give two minimum versions of one thing."""
    found = []
    for match in _VERSION_VALUE.finditer(text):
        group = next(g for g in (1, 2, 3) if match.group(g))
        number = match.group(group)
        parts = [int(x) for x in number.split(".")] + [0, 0]
        value = Decimal(parts[0] * 1_000_000 + parts[1] * 1_000 + parts[2])
        start, end = match.start(group), match.end(group)
        found.append(Quantity(value, "version", text[start:end], start, end))
    return found


def versioned_thing(fact: Fact) -> str | None:
    """What a version fact is a version of: the word before the number, passing over words
    that only say it is a version ("Python" in "Python 3.9 or newer", "firmware" in "needs
    firmware 3.8 or newer"); None when the sentence names nothing there."""
    before = fact.sentence[: fact.quantity.start]
    for _ in range(3):
        match = _WORD_BEFORE.search(before)
        if match is None:
            return None
        word = match.group(1).lower()
        if word not in _VERSION_WORDS:
            return word
        before = before[: match.start()]
    return None


# ---------------------------------------------------------------------------- facts

_PLAN = _PATTERNS.compile(
    r"\b(?:on|for|with|in)\s+(?:the\s+|your\s+|an?\s+)?([A-Z][\w-]*(?:\s+[A-Z][\w-]*)?)\s+"
    r"(?:plans?|tiers?|accounts?|customers?|subscriptions?|editions?)\b"
    r"|\b([A-Z][\w-]*)\s+(?:plans?|tiers?)\b"
)
_ENDPOINT = _PATTERNS.compile(r"\b(?:(GET|POST|PUT|PATCH|DELETE)\s+)?(/[\w{}.:-]+(?:/[\w{}.:-]+)+)")
_REGION = _PATTERNS.compile(
    r"\b(?:in|for)\s+(?:the|our)\s+([A-Z]{2,}|[A-Z][a-z]+)\s+(?:region|data region|data centre|"
    r"data center)\b|\b([A-Z]{2,}|[A-Z][a-z]+)\s+(?:region|data centre|data center)\b"
)
#: Nouns that limit a value to some of the things a product serves, by the kind of scope:
#: "the Aero 3 model", "the Northfield region", "the Harbour Street branch".
_SCOPE_NOUNS = {
    "model": r"models?|handsets?|printers?|scanners?|terminals?|vehicles?|sensors?",
    "region": r"regions?|zones?|districts?|counties|county|countries|country|provinces?",
    "site": r"sites?|branch(?:es)?|stores?|venues?|farms?|warehouses?|depots?|offices?"
    r"|locations?|campus(?:es)?",
}
_SCOPE_NOUN = "|".join(_SCOPE_NOUNS.values())
_NAMED_SCOPE = _PATTERNS.compile(rf"\b([A-Z][\w-]*(?:\s+[A-Z0-9][\w-]*)?)\s+({_SCOPE_NOUN})\b")
#: "that model", "your region": a resolved ticket's answer about the one its question names.
_DEICTIC_SCOPE = _PATTERNS.compile(
    rf"\b(?:this|that|these|those|your|their|its|the same)\s+({_SCOPE_NOUN})\b", re.I
)
#: "The same however the member tells us": a rule claimed for every way a customer reaches us
#: (round 20 of the drafter), which both :data:`_UNIVERSAL` and :data:`_EVERY_CHANNEL` read.
_SAME_HOWEVER = r"\bthe same (?:however|whichever way|whatever way|wherever)\b"
_UNIVERSAL = _PATTERNS.compile(
    r"\b(?:on|for|in|at|across)\s+(?:every|all|each|any)\s+(?:of\s+(?:our|the|your)\s+|our\s+"
    r"|the\s+)?(?:[a-z][\w-]*\s+)?(?:plans?|tiers?|accounts?|endpoints?|"
    rf"regions?|customers?|devices?|{_SCOPE_NOUN})\b|\bregardless of\b|\bno matter\b"
    r"|\bwithout exception\b|\bwhatever the\b|\bwhichever\b"
    r"|\b(?:the )?same (?:for|on|in|at|across) (?:every|all|each|any)\b"
    # "Every feature of the app, probe pairing included, works on those versions" (round 24).
    r"|\b(?:every|each|all(?: the)?)\s+(?:feature|function)s?\b"
    rf"|{_SAME_HOWEVER}"
    # "the same minimum on phones and tablets alike" (round 26).
    r"|\bthe same\b[^.;]{0,40}\balike\b",
    re.IGNORECASE,
)
#: A rule said to hold however the customer reaches us, which a value for one channel can
#: contradict (round 20 of the drafter); "the same on every plan" claims plans, not channels.
_EVERY_CHANNEL = _PATTERNS.compile(
    rf"{_SAME_HOWEVER}"
    r"|\b(?:on|in|through|across|for)\s+(?:every|all|each|any)\s+(?:of\s+(?:our|the)\s+)?channels?\b",
    re.IGNORECASE,
)
#: A sentence that opens by naming the way a customer reaches us ("In the app, the Away
#: button closes 24 hours before"): its value holds for that channel (round 20 of the drafter).
_CHANNEL = _PATTERNS.compile(
    r"^\W*(?:in|on|through|via|from|with)\s+(?:the|our)\s+(?:[\w-]+\s+)?(app|website|web\s*site"
    r"|portal|phone\s+line|kiosk)\s*,|^\W*(?:by|over\s+the)\s+(phone|e-?mail|text|post|chat)\s*,",
    re.IGNORECASE,
)
#: Words that say how a value is held, or that every sentence about limits uses: they do not
#: tell one subject from another ("costs", "kept", "up to", "after").
_GENERIC = frozenset(
    tokenize(
        "can will up after within about least most only each every all any default defaults "
        "new old first last next long longer short shorter maximum minimum max min total "
        "value set number amount period time wait stay stays valid apply applies "
        "plan plans tier account accounts customer customers region endpoint request "
        "note yes see also usually always never still already once twice "
        "cost costs costing charge charged take takes taken last lasts keep keeps kept "
        "retain retained store stored remember remembers hold holds allow allows allowed "
        "get gets give gives start starts begin end ends expire expires expired run runs "
        "make makes need needs require requires must may should use used reach reaches "
        "become becomes remain remains kestrel"
    )
)
#: Units of time and size never say what is measured; a counted unit ("keys") may.
_TIME_WORDS = frozenset(
    tokenize(" ".join(_UNIT_ALIASES[u] for u in _SCALES)) + tokenize("percent %")
)
_CLAUSE = _PATTERNS.compile(
    r"(?<!\d),|,(?!\d)|(?<!\d):|:(?!\d)|[;()]|\s(?:and|but|while|whereas|so|because|which|then)\s"
)


_ROLE_BEFORE = (
    (
        _PATTERNS.compile(
            r"\b(?:within|in under|no later than|in)\s+(?:about\s+|roughly\s+)?$", re.I
        ),
        "deadline",
    ),
    (_PATTERNS.compile(r"\b(?:every|each)\s+$", re.I), "interval"),
    (_PATTERNS.compile(r"\b(?:after|later than)\s+(?:about\s+)?$", re.I), "delay"),
    (
        _PATTERNS.compile(
            r"\b(?:for|over|up to|during|lasting|keeps?|kept|holds?)\s+(?:about\s+|up to\s+)?$",
            re.I,
        ),
        "span",
    ),
)
_ROLE_AFTER = (
    (_PATTERNS.compile(r"^\s*(?:apart|between)\b", re.I), "interval"),
    # "24 hours or more before the appointment" is as much a lead as "24 hours before".
    (
        _PATTERNS.compile(
            r"^\s*(?:or\s+(?:more|longer|earlier)\s+)?(?:ahead|in advance|before)\b", re.I
        ),
        "lead",
    ),
    (_PATTERNS.compile(r"^\s*(?:after|later|from)\b", re.I), "delay"),
    # "penalised once 10 days have gone by": a delay, said after the value.
    (_PATTERNS.compile(r"^\s*(?:have|has)\s+(?:gone by|passed|elapsed)\b", re.I), "delay"),
    (_PATTERNS.compile(r"^\s*(?:ago)\b", re.I), "past"),
)


def role_of(sentence: str, quantity: Quantity) -> str:
    """What a duration does in its sentence: ``span`` ("kept for 30 days"), ``deadline``
    ("within 10 seconds"), ``interval`` ("an hour apart"), ``delay`` ("after 1 minute"),
    ``lead`` ("7 days ahead"); empty when the wording does not say."""
    before = sentence[max(0, quantity.start - 40) : quantity.start]
    after = sentence[quantity.end : quantity.end + 20]
    for pattern, role in _ROLE_AFTER[:1]:  # "an hour apart" whatever comes before it
        if pattern.search(after):
            return role
    for pattern, role in _ROLE_BEFORE:
        if pattern.search(before):
            return role
    for pattern, role in _ROLE_AFTER[1:]:
        if pattern.search(after):
            return role
    return ""


#: What a schedule ("once a week, every Monday") can disagree with: when the same event
#: happens, said as how often or as how long after something else ("2 days after").
_WHEN = frozenset({"frequency", "delay", "deadline"})


def compatible_roles(a: str, b: str) -> bool:
    """Two values can disagree only about the same thing: a span and a bare value may, and so
    may a schedule and a delay or deadline (two answers to "when does it happen?")."""
    return a == b or {a, b} <= {"", "span"} or ("frequency" in (a, b) and {a, b} <= _WHEN)


def by_kind(a: Fact, b: Fact) -> bool:
    """True when the two values are of different kinds that never agree: a schedule against
    a delay ("every Monday" against "2 business days after"), whatever the numbers."""
    return (a.role == "frequency") != (b.role == "frequency")


@dataclass(frozen=True, slots=True)
class Fact:
    """A value a passage states about a subject, in a scope (empty: a general statement)."""

    subject: frozenset[str]  # the content words around the value
    context: frozenset[str]  # headings, title, a resolved ticket's question
    quantity: Quantity
    scope: tuple[str, ...]
    universal: bool  # "on every plan": a general rule that claims to hold everywhere
    #: Other numbers in the value's clause ("four" segments): the condition it holds under.
    conditions: frozenset[str]
    #: One of three or more values of one dimension in its sentence (a schedule, a table).
    listed: bool
    role: str
    heading: frozenset[str]  # an article section's own heading words ("trash", "retry")
    title: frozenset[str]  # an article's title words
    words: frozenset[str]  # every word of the passage (a resolved ticket's question and answer)
    passage_id: str
    doc_id: str
    kind: DocKind
    sentence: str
    #: The value's own clause ("Ticket money is paid out 2 business days after the departure
    #: has sailed"): the phrase that says what the value is about, with less else around it.
    clause: str = ""
    #: The rule says it holds however the customer reaches us (``_EVERY_CHANNEL``), in its
    #: sentence or in the next one when that gives no value of its own.
    every_channel: bool = False

    @property
    def dimension(self) -> str:
        return self.quantity.dimension

    @property
    def value(self) -> Decimal:
        return self.quantity.base_value

    def masked(self) -> str:
        """The sentence with its value replaced, which is what "the same subject" compares."""
        return _masked(self.sentence, self.quantity)

    def masked_clause(self) -> str:
        """The value's clause with the value replaced: the subject phrase, compared by meaning."""
        return _masked(self.clause or self.sentence, self.quantity)

    def describe(self) -> str:
        where = f" ({', '.join(self.scope)})" if self.scope else ""
        return f"{self.quantity.raw}{where} in {self.passage_id}"


#: What a masked value reads as to the embedder, by its dimension: "a tank of some litres" is
#: still a volume ("a tank of some time" was not, and two sentences about one tank met at 0.48
#: instead of 0.60). Physical measures only: a file size read as "some megabytes" brought a
#: newsletter's attachment limit and a music upload limit together (a control of
#: eval/conflicts), as many things in one product have a size. Durations, sizes, counts, money
#: and the rest keep "some time" (drafter round 25).
_STAND_INS = {
    "volume": "some litres",
    "mass": "some kilograms",
    "length": "some metres",
    "temperature": "some degrees",
    "power": "some watts",
    "energy": "some kilowatt hours",
}


def _masked(text: str, quantity: Quantity) -> str:
    offset = text.find(quantity.raw)
    if offset < 0:
        return text
    stand_in = _STAND_INS.get(quantity.dimension, "some time")
    return text[:offset] + stand_in + text[offset + len(quantity.raw) :]


_PLAN_NAME = _PATTERNS.compile(r"\b([A-Z][\w-]+)\s+(?:plans?|tiers?)\b")
_NOT_PLANS = frozenset({"the", "a", "an", "your", "every", "all", "each", "this", "that", "any"})
#: Words before a scope noun that do not name one ("Older models", "Our farms", "Which region").
_NOT_NAMES = _NOT_PLANS | frozenset(
    re.findall(
        r"\w+",
        "our their my its one some other same most many few both these those which what no "
        "older newer new old earlier later larger smaller outdoor indoor different several "
        "multiple single each every for in on at with from to by of when if as and or but so "
        "only then there here per",
    )
)


def _scope_kind(noun: str) -> str:
    return next(k for k, words in _SCOPE_NOUNS.items() if re.fullmatch(words, noun, re.I))


def scope_names(texts: Iterable[str]) -> dict[str, str]:
    """Names the texts give a model, region or site ("the Aero 3 model": "Aero 3" -> "model"),
    as written, so that the name alone ("The Aero 3 takes ...") scopes a sentence too."""
    names: dict[str, str] = {}
    for text in texts:
        for match in _NAMED_SCOPE.finditer(text):
            name = _scope_name(match.group(1))
            if name:
                names.setdefault(name, _scope_kind(match.group(2)))
    return names


def _scope_name(name: str) -> str:
    """``name`` without a leading word that names nothing ("Our North" -> "North")."""
    words = name.split()
    while words and words[0].lower() in _NOT_NAMES:
        words = words[1:]
    if not words or words[0].lower() in _NOT_NAMES or not words[0][0].isupper():
        return ""
    return " ".join(words)


def plan_names(texts: Iterable[str]) -> frozenset[str]:
    """Names the texts use as plans ("the Team plan"), lowercased."""
    names: set[str] = set()
    for text in texts:
        names.update(m.group(1).lower() for m in _PLAN_NAME.finditer(text))
    return frozenset(names - _NOT_PLANS)


def scope_of(
    sentence: str, plans: Collection[str] = (), names: Mapping[str, str] | None = None
) -> tuple[tuple[str, ...], bool]:
    """The plans, endpoints, regions, models and sites ``sentence`` limits itself to, and
    whether it says it holds for all of them. ``plans``: names known to be plans, found
    without the word "plan" too ("On Team, ..."); ``names``: names of models, regions and
    sites (:func:`scope_names`), found as written ("The Aero 3 takes ...")."""
    scopes: list[str] = []
    for match in _PLAN.finditer(sentence):
        name = (match.group(1) or match.group(2) or "").strip()
        if name and name.lower() not in _NOT_PLANS:
            scopes.append(f"plan:{name.lower()}")
    for name in plans:
        if re.search(rf"\b(?:on|for|with|in)\s+(?:the\s+)?{re.escape(name)}\b", sentence, re.I):
            scopes.append(f"plan:{name}")
    for match in _ENDPOINT.finditer(sentence):
        scopes.append(f"endpoint:{match.group(2).lower()}")
    for match in _REGION.finditer(sentence):
        name = match.group(1) or match.group(2)
        if name.lower() not in _NOT_NAMES:  # "Every region" names none
            scopes.append(f"region:{name.lower()}")
    for match in _NAMED_SCOPE.finditer(sentence):
        name = _scope_name(match.group(1))
        if name:
            scopes.append(f"{_scope_kind(match.group(2))}:{name.lower()}")
    for name, kind in (names or {}).items():
        if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", sentence):
            scopes.append(f"{kind}:{name.lower()}")
    channel = _CHANNEL.search(sentence)
    if channel is not None:
        scopes.append("channel:" + " ".join((channel.group(1) or channel.group(2)).lower().split()))
    return tuple(dict.fromkeys(scopes)), _UNIVERSAL.search(sentence) is not None


_SPLIT = _PATTERNS.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(\[])|\n+")


def passage_sentences(passage: Passage) -> list[str]:
    """The sentences of a passage a fact can come from (a resolved ticket's answer only)."""
    text = resolved_answer(passage.text) if passage.kind is DocKind.RESOLVED else passage.text
    return [s.strip(" -*") for s in _SPLIT.split(text) if s.strip(" -*")]


def extract_facts(passages: Iterable[Passage]) -> list[Fact]:
    """Every value with a unit in ``passages``, as a fact with its subject and scope."""
    passages = list(passages)
    plans = plan_names(p.text for p in passages)
    names = scope_names(p.text for p in passages)
    # A name most passages use is the product's or the company's ("every Hivecast device"),
    # not one model among others.
    names = {
        name: kind
        for name, kind in names.items()
        if sum(1 for p in passages if name in p.text) <= max(2, len(passages) // 3)
    }
    facts: list[Fact] = []
    for passage in passages:
        asked: tuple[str, ...] = ()
        if passage.kind is DocKind.RESOLVED:
            context_text = passage.text.partition("\n\n")[0]
            asked = scope_of(context_text, plans, names)[0]
        else:
            context_text = " ".join((passage.title, *passage.heading_path))
        context = frozenset(tokenize(context_text)) - _GENERIC - _TIME_WORDS
        own_heading = passage.heading_path[-1] if passage.heading_path else passage.title
        heading = (
            frozenset(tokenize(own_heading)) - _GENERIC - _TIME_WORDS
            if passage.kind is DocKind.KB
            else frozenset()
        )
        words = frozenset(tokenize(passage.text)) - _GENERIC
        title = (
            frozenset(tokenize(passage.title)) - _GENERIC
            if passage.kind is DocKind.KB
            else frozenset()
        )
        sentences = passage_sentences(passage)
        for index, sentence in enumerate(sentences):
            found = values_in(sentence)
            # "once a week, every Monday": one schedule, said twice.
            schedule = list({q.base_value: q for q in reversed(frequencies(sentence))}.values())
            # "$3.50 monthly" is a price per month, not a schedule.
            schedule = [q for q in schedule if not any(f.start <= q.start < f.end for f in found)]
            if not found and not schedule:
                continue
            scope, universal = scope_of(sentence, plans, names)
            if not scope and asked and _DEICTIC_SCOPE.search(sentence):
                scope = asked  # "that model takes updates at noon": the one the question names
            # "... over about 24 hours. This schedule is the same on every plan."
            following = sentences[index + 1] if index + 1 < len(sentences) else ""
            universal = universal or _claimed_by_next(_UNIVERSAL, following)
            every_channel = _EVERY_CHANNEL.search(sentence) is not None or _claimed_by_next(
                _EVERY_CHANNEL, following
            )
            scope_words = frozenset(tokenize(" ".join(x.split(":", 1)[1] for x in scope)))
            whole = subject_terms(sentence) - scope_words
            for position, quantity in enumerate([*found, *schedule]):
                often = position >= len(found)
                # The value's own unit says what is counted, not what about ("24 hours").
                own = scope_words | frozenset(tokenize(quantity.raw))
                clause_text = _clause_at(sentence, quantity.start, quantity.end)
                clause = subject_terms(clause_text) - own
                whole = whole - own
                # Without words of its own ("The Growth plan allows 50 requests per second"),
                # a value is about its scope and what it counts.
                subject = (
                    clause
                    or whole
                    or (own - frozenset(tokenize(quantity.raw)))
                    | (frozenset(tokenize(quantity.unit.split("/")[0])) - _TIME_WORDS)
                )
                conditions = _conditions(sentence, clause_text, quantity, found)
                listed = not often and (
                    sum(1 for q in found if q.dimension == quantity.dimension) >= 3
                )
                if often:
                    role = "frequency"
                elif quantity.dimension == "duration":
                    role = role_of(sentence, quantity)
                else:
                    role = ""
                facts.append(
                    Fact(
                        subject,
                        context,
                        quantity,
                        scope,
                        universal,
                        conditions,
                        listed,
                        role,
                        heading,
                        title,
                        words,
                        passage.id,
                        passage.doc_id,
                        passage.kind,
                        sentence,
                        _subject_clause(sentence, clause_text, quantity),
                        every_channel,
                    )
                )
    return facts


_COUNT = _PATTERNS.compile(
    r"(?<![\w.-])(\d+(?:\.\d+)?)(?![\w.-])|\b(one|two|three|four|five|six|seven|eight|nine|ten)\b",
    re.IGNORECASE,
)
_DIGIT_OF = {w: str(n) for w, n in _WORD_NUMBERS.items() if len(w) > 2}
_ALLOWANCE = _PATTERNS.compile(
    r"\b(?:the|your|its|their)\s+(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten)"
    r"\s+(?:[a-z-]+\s+)?included\b",
    re.IGNORECASE,
)


def _claimed_by_next(claim: re.Pattern[str], following: str) -> bool:
    """True when the sentence after a value's makes ``claim`` about it ("... over about 24
    hours. This schedule is the same on every plan."): it says ``claim`` and gives no value of
    its own."""
    return claim.search(following) is not None and not quantities(following)


def _conditions(
    sentence: str, clause: str, quantity: Quantity, found: Sequence[Quantity]
) -> frozenset[str]:
    """The other numbers of the value's clause: a measure or time of day as its value ("in 30
    minutes" and "within half an hour" are one condition), a bare number as it is written."""
    start = sentence.find(clause)
    inside = [
        q
        for q in found
        if q is not quantity
        and start >= 0
        and start <= q.start < start + len(clause)
        and not quantity.start <= q.start < quantity.end  # "a month" of "$2 a month"
    ]
    measured = {f"{q.dimension}={q.base_value}" for q in inside if q.unit in _SCALES}
    rest = clause.replace(quantity.raw, " ")
    for q in inside:
        if q.unit in _SCALES:
            rest = rest.replace(q.raw, " ")
    # "beyond the five included" restates the plan's allowance ("above your plan's limit"),
    # which is no condition of its own.
    rest = _ALLOWANCE.sub(" ", rest)
    # "at any one time" says when the limit holds, not a number it depends on (round 24).
    rest = _ONE_TIME.sub(" ", rest)
    rest = _ONE_OF_A_KIND.sub(" ", rest)
    return frozenset(measured) | _numbers(_CLOCK_TIME.sub(" ", rest))


def _numbers(text: str) -> frozenset[str]:
    """The bare numbers in ``text``, number words as digits."""
    out = set()
    for match in _COUNT.finditer(text):
        out.add(match.group(1) or _DIGIT_OF[match.group(2).lower()])
    return frozenset(out)


def _subject_clause(sentence: str, clause: str, quantity: Quantity) -> str:
    """The clause that holds the value, widened to the sentence's start when the clause is
    little more than the value ("..., once a week, every Monday, ...")."""
    if len(subject_terms(clause)) >= 2:
        return clause.strip()
    end = sentence.find(quantity.raw)
    return sentence[: end + len(quantity.raw)].strip() if end >= 0 else sentence


def _clause_at(sentence: str, offset: int, end: int = 0) -> str:
    """The clause of ``sentence`` around characters ``offset`` to ``end`` (a value: "between
    23:00 and 05:00" is not cut at its "and")."""
    start = 0
    for match in _CLAUSE.finditer(sentence):
        if offset <= match.start() < end:
            continue
        if match.start() >= offset:
            return sentence[start : match.start()]
        start = match.end()
    return sentence[start:]


def subject_terms(sentence: str) -> frozenset[str]:
    """Content words of ``sentence`` that can say what a value measures."""
    text = _ENDPOINT.sub(" ", sentence)
    words = set(tokenize(text))
    return frozenset(w for w in words if not w[0].isdigit() and "/" not in w) - (
        _GENERIC | _TIME_WORDS | set(_WORD_NUMBERS)
    )


# ---------------------------------------------------------------------------- conflicts

#: Two facts are about the same subject when their subjects overlap this much (weighted
#: Jaccard, rare words weighing more) ...
SUBJECT_OVERLAP = 0.35
#: ... or their sentences, values masked, are this close in meaning and overlap at least
#: SUBJECT_OVERLAP_WITH_MEANING.
SUBJECT_SIMILARITY = 0.45
SUBJECT_OVERLAP_WITH_MEANING = 0.2
#: Between two articles of one knowledge base the words must overlap this much.
SUBJECT_OVERLAP_ARTICLES = 0.5
#: A resolved ticket and the article it links to: two values of one kind whose sentences,
#: values masked, mean this much alike are about one thing even when they share no words
#: ("a reserved book is kept aside for five opening days", "a hold ... stays on the hold
#: shelf for 7 days").
LINKED_SIMILARITY = 0.55
#: Two articles of one knowledge base whose headings share a word stem ("Renewals", "Renewing
#: online") are about one subject when the values' clauses, masked, are this close in meaning
#: ("Each loan can be renewed up to 3 times", "Readers can extend each loan two times at
#: most"), however few words they share.
ARTICLE_PHRASE_SIMILARITY = 0.6


@dataclass(frozen=True, slots=True)
class Conflict:
    """Two sources that give different values for one subject.

    ``kind`` is ``contradiction`` (a reviewer must decide) or ``exception`` (``specific``
    is scoped, ``general`` is the rule it departs from; a draft may state the exception when
    it also cites the rule).
    """

    kind: Literal["contradiction", "exception"]
    general: Fact
    specific: Fact

    @property
    def sides(self) -> tuple[Fact, Fact]:
        return self.general, self.specific

    def describe(self) -> str:
        a, b = self.general, self.specific
        return (
            f'{a.passage_id} states "{a.quantity.raw}" ("{a.sentence}") but {b.passage_id} '
            f'states "{b.quantity.raw}" ("{b.sentence}")'
        )


Idf = Callable[[str], float]


def _jaccard(a: frozenset[str], b: frozenset[str], idf: Idf | None) -> float:
    """Weighted Jaccard overlap of two term sets (rare words weigh more with ``idf``)."""
    if not a or not b:
        return 0.0

    def weight(term: str) -> float:
        return max(idf(term), 0.1) if idf is not None else 1.0

    union = sum(weight(t) for t in a | b)
    return sum(weight(t) for t in a & b) / union if union > 0 else 0.0


def subject_score(a: Fact, b: Fact, idf: Idf | None = None) -> float:
    """How much two facts' subjects overlap, their sentences' words and their headings' (or a
    resolved ticket's question) counted half and half."""
    direct = _jaccard(a.subject, b.subject, idf)
    wider = _jaccard(a.subject | a.context, b.subject | b.context, idf)
    return 0.5 * direct + 0.5 * wider


Links = Callable[[str], Collection[str]]


def find_conflicts(
    facts: Sequence[Fact],
    *,
    embed: Embed | None = None,
    idf: Idf | None = None,
    links: Links | None = None,
) -> list[Conflict]:
    """Pairs of facts from different documents with one subject and two values.

    A document is taken to agree with itself (an article giving "50 on Growth, 500 on
    Enterprise" states cases), and so does a value both documents state somewhere. ``links``
    (a document id to the documents it links to) marks a resolved ticket and the article it
    was answered from as one topic, where a looser match of subjects is enough.
    """
    pairs = [
        (i, j)
        for i in range(len(facts))
        for j in range(i + 1, len(facts))
        if _candidates(facts[i], facts[j], facts)
        or _linked_counts(facts[i], facts[j], facts, links)
    ]
    if not pairs:
        return []
    similarity = _similarities(facts, pairs, embed, Fact.masked)
    # The subject phrase (the value's clause) by meaning, as well as the whole sentence.
    phrases = _similarities(facts, pairs, embed, Fact.masked_clause)
    conflicts: list[Conflict] = []
    seen: set[tuple[str, str, str, str]] = set()
    closest = _closest_linked(facts, pairs, similarity, phrases, links)
    for (i, j), dense, phrase in zip(pairs, similarity, phrases, strict=True):
        a, b = facts[i], facts[j]
        if not compatible_roles(a.role, b.role):
            continue
        lexical = subject_score(a, b, idf)
        linked = links is not None and (a.doc_id in links(b.doc_id) or b.doc_id in links(a.doc_id))
        if linked and (
            _same_topic(a, b) or max(dense, phrase) >= LINKED_SIMILARITY or _one_each(a, b, facts)
        ):
            # A resolved ticket answered from this very section, with another value of the
            # same kind: the planted case, worded as differently as you like.
            if (i, j) not in closest:
                continue  # the ticket's value disagrees with a closer one of the article
            conflict = _judge(a, b)
            if conflict is not None:
                key = (a.passage_id, a.quantity.raw, b.passage_id, b.quantity.raw)
                if key not in seen:
                    seen.add(key)
                    conflicts.append(conflict)
            continue
        if _os_release(a) and _os_release(b) and not _version_against_rule(a, b):
            # "iOS 16 or later" for the scanner app and "Safari on iOS 15 or later" for the
            # booking widget: two things that run on one system, each with its own least
            # release (round 24).
            continue
        if a.kind is DocKind.KB and b.kind is DocKind.KB:
            # One knowledge base is written to agree with itself; two of its articles that
            # share a verb ("retries a failed payment", "retries a failed event") are mostly
            # about different things, so only a close match of subjects counts there.
            by_meaning = phrase >= ARTICLE_PHRASE_SIMILARITY and _headings_meet(a, b)
            # Two articles that each give the evidence one value of a measure (one distance,
            # one day of the month), in sentences as alike in meaning as a linked pair's:
            # one subject, written twice, however the headings read (round 21).
            by_meaning = by_meaning or (
                max(dense, phrase) >= LINKED_SIMILARITY and _one_each(a, b, facts, articles=True)
            )
            if (
                lexical < SUBJECT_OVERLAP_ARTICLES
                and not by_meaning
                and not _channel_against_rule(a, b)
                and not _version_against_rule(a, b)
            ):
                continue
        else:
            floor = SUBJECT_OVERLAP_WITH_MEANING if linked else SUBJECT_OVERLAP
            by_meaning = dense >= SUBJECT_SIMILARITY and lexical >= SUBJECT_OVERLAP_WITH_MEANING
            # An article and a resolved ticket that each give one value of a measure (one
            # window, one temperature) are about one thing when their sentences mean alike as
            # much as a linked pair's must, even with no link and few shared words.
            by_meaning = by_meaning or (
                max(dense, phrase) >= LINKED_SIMILARITY and _one_each(a, b, facts)
            )
            if lexical < floor and not by_meaning:
                continue
        conflict = _judge(a, b)
        if conflict is None:
            continue
        key = (a.passage_id, a.quantity.raw, b.passage_id, b.quantity.raw)
        if key not in seen:
            seen.add(key)
            conflicts.append(conflict)
    return conflicts


def _closest_linked(
    facts: Sequence[Fact],
    pairs: Sequence[tuple[int, int]],
    similarity: Sequence[float],
    phrases: Sequence[float],
    links: Links | None,
) -> set[tuple[int, int]]:
    """Of the pairs of a resolved ticket's fact and a fact of an article it links to that
    are about one topic (below), the one per ticket fact whose sentence or clause is most
    alike. A ticket's value answers one thing, so it can disagree with one of the article's
    values, not with every duration the article lists ("kept for 24 months" is about the
    movement history, not "the link works for 7 days" nor "label jobs: 90 days")."""
    if links is None:
        return set()
    best: dict[int, tuple[float, tuple[int, int]]] = {}
    for (i, j), dense, phrase in zip(pairs, similarity, phrases, strict=True):
        a, b = facts[i], facts[j]
        if not (a.doc_id in links(b.doc_id) or b.doc_id in links(a.doc_id)):
            continue
        alike = max(dense, phrase)
        if not compatible_roles(a.role, b.role) or not (
            _same_topic(a, b) or alike >= LINKED_SIMILARITY or _one_each(a, b, facts)
        ):
            continue
        ticket = i if a.kind is DocKind.RESOLVED else j if b.kind is DocKind.RESOLVED else -1
        key = ticket if ticket >= 0 else -1 - len(best)  # two articles: each pair stands
        if key not in best or alike > best[key][0]:
            best[key] = (alike, (i, j))
    return {pair for _, pair in best.values()}


def _linked_counts(a: Fact, b: Fact, facts: Sequence[Fact], links: Links | None) -> bool:
    """True when a resolved ticket and the article it links to each limit one count of
    things and name the things differently: "no more than three reminders per vaccine" and
    "up to five notices go out" count one thing (round 12 of the drafter; a count's unit is
    its noun, so they are not of one dimension). Each document must give no other count, so
    that "up to 12 hives" and "up to 30 hive stands" of one article stay two things, and the
    article must say its count holds everywhere ("the same for every vaccine"): a count that
    claims no such reach ("at most 30 jobs per technician") is of its own thing ("up to 4
    technicians per job")."""
    if links is None or {a.kind, b.kind} != {DocKind.KB, DocKind.RESOLVED}:
        return False
    article = a if a.kind is DocKind.KB else b
    if not article.universal:
        return False
    if a.dimension == b.dimension or not all(_limited_count(x) for x in (a, b)):
        return False
    if not (a.doc_id in links(b.doc_id) or b.doc_id in links(a.doc_id)):
        return False
    if a.value == b.value or a.conditions != b.conditions or a.listed or b.listed:
        return False
    return all(_alone_in_document(x, facts, _limited_count) for x in (a, b))


#: Units of :func:`quantities` that count things, as a noun of :func:`limit_counts` does:
#: "up to 20 seats" and "up to 10 tickets" are two limits on one count (round 17 of the
#: drafter), where "seat" has a unit of its own and "ticket" does not.
_COUNT_UNITS = frozenset(
    {"user", "seat", "member", "key", "webhook", "project", "item", "record", "row", "result"}
    | {"page", "file", "connection", "event", "recipient", "contact", "segment", "message"}
    | {"email", "call", "request"}
)
_LIMIT_BEFORE = _PATTERNS.compile(rf"\b(?:{_LIMIT_WORDS})\s+$", re.IGNORECASE)


def _limited_count(fact: Fact) -> bool:
    """True when ``fact`` limits a count of things: a :func:`limit_counts` value, or a
    number of a counting unit said as a limit ("up to 20 seats"), not a number of them in
    passing ("the 6 seats they had bought")."""
    if fact.dimension.startswith("count:"):
        return True
    if fact.dimension not in _COUNT_UNITS:
        return False
    return _LIMIT_BEFORE.search(fact.sentence[: fact.quantity.start]) is not None


def _alone_in_document(fact: Fact, facts: Sequence[Fact], alike: Callable[[Fact], bool]) -> bool:
    """True when ``fact``'s document gives no other fact that is ``alike`` (``fact`` being
    one)."""
    return sum(1 for f in facts if f.doc_id == fact.doc_id and alike(f)) == 1


def _one_each(a: Fact, b: Fact, facts: Sequence[Fact], *, articles: bool = False) -> bool:
    """True when a resolved ticket and the article it links to (``articles``: two articles)
    each give one value of a measure, and of the same one (a window, a temperature, a weight;
    not a duration or a count, of which an article gives many): "updates install between
    01:00 and 04:00" and "new software is pushed from 22:00 to 23:30" answer one question
    however they are worded.
    """
    kinds = {DocKind.KB} if articles else {DocKind.KB, DocKind.RESOLVED}
    if {a.kind, b.kind} != kinds or a.dimension != b.dimension:
        return False
    if a.dimension.split("/")[0] not in MEASURES or a.role == "frequency":
        return False
    family = _family(a.dimension)
    return all(
        _alone_in_document(x, facts, lambda f: _family(f.dimension) == family) for x in (a, b)
    )


def _family(dimension: str) -> str:
    """Times of day and windows are one family: a ticket that gives a window and the time it
    ends ("from 21:00 to 06:30", "arrives at 06:30") gives two."""
    return "clock" if dimension in ("clock", "window") else dimension


def _same_topic(a: Fact, b: Fact) -> bool:
    """True when the resolved ticket's text names the article section's subject (its
    heading, say "Trash") and, for a duration, its sentence shares a word with the section.
    For a count ("8 times", "three more times"), of which a section has few, the article's
    title will do ("Webhook delivery and retries")."""
    article, ticket = (a, b) if a.kind is DocKind.KB else (b, a)
    if article.kind is not DocKind.KB or ticket.kind is not DocKind.RESOLVED:
        return False
    # A measure or a time of day is held to what a duration is: a section may give several.
    strict = article.dimension == "duration" or article.dimension.split("/")[0] in MEASURES
    topic = article.heading if strict else article.heading | article.title
    if not topic & ticket.words:
        return False
    if not strict:
        return True
    # A section holds many durations: the ticket's sentence must speak of what this one does.
    return bool(article.words & (frozenset(tokenize(ticket.sentence)) - _GENERIC))


def _candidates(a: Fact, b: Fact, facts: Sequence[Fact]) -> bool:
    if a.doc_id == b.doc_id or a.dimension != b.dimension:
        return False
    if a.value == b.value and not by_kind(a, b):
        return False
    if a.conditions != b.conditions:
        return False  # "one segment holds 160", "four segments hold 612": two conditions
    if a.listed or b.listed:
        return False  # "after 1 day, 3 days and 7 days": a schedule, not one value
    if a.dimension == "version":
        mine_thing, their_thing = versioned_thing(a), versioned_thing(b)
        if mine_thing and their_thing and mine_thing != their_thing:
            return False  # "Python 3.9 or newer", "Go 1.21 or newer": two things
    if a.dimension.split("/")[0] in MEASURES:
        mine, theirs = aspects(a), aspects(b)
        if mine and theirs and not mine & theirs:
            return False  # "stands 180 cm tall", "60 cm deep": two lengths of two things
    if by_kind(a, b):
        # A schedule and a delay: no number of the one is a case of the other. Not a schedule
        # that keeps a span its sentence gives ("reaches back 24 months; older entries are
        # erased at the start of each month"): that sentence is about the span.
        schedule = a if a.role == "frequency" else b
        return not any(
            f.passage_id == schedule.passage_id
            and f.sentence == schedule.sentence
            and f.role != "frequency"
            and f.dimension == schedule.dimension
            for f in facts
        )
    # Both documents state both values somewhere: cases, not a disagreement.
    values_a = {f.value for f in facts if f.doc_id == a.doc_id and f.dimension == a.dimension}
    values_b = {f.value for f in facts if f.doc_id == b.doc_id and f.dimension == b.dimension}
    return not ({a.value, b.value} <= values_a or {a.value, b.value} <= values_b)


def values_differ(a: Fact, b: Fact) -> bool:
    """True when ``a`` and ``b`` give two values of one kind that can be about one thing: one
    dimension, another value (or a schedule against a delay), compatible roles, the same
    conditions and aspects, neither one of a list. For a duration both roles must be said
    ("for up to 72 hours", "within 2 days"): a bare one ("so an hour of downtime is covered")
    is often what the value is about, not the value given. The subject is not judged here."""
    if a.dimension != b.dimension or a.listed or b.listed or a.conditions != b.conditions:
        return False
    if a.value == b.value and not by_kind(a, b):
        return False
    if not compatible_roles(a.role, b.role):
        return False
    if a.dimension == "duration" and not (a.role and b.role):
        return False
    mine, theirs = aspects(a), aspects(b)
    return not (mine and theirs and not mine & theirs)


#: What a measure measures, when its clause says: "180 cm tall" and "60 cm deep" are two
#: lengths of two things, whatever else their sentences share.
_ASPECTS = (
    ("height", re.compile(r"\b(?:tall|high|height|heights)\b", re.I)),
    ("depth", re.compile(r"\b(?:deep|depth)\b", re.I)),
    ("width", re.compile(r"\b(?:wide|width|across)\b", re.I)),
    ("length", re.compile(r"\b(?:long|length)\b", re.I)),
    ("thickness", re.compile(r"\b(?:thick|thickness)\b", re.I)),
    ("diameter", re.compile(r"\b(?:diameter|radius)\b", re.I)),
    ("distance", re.compile(r"\b(?:away|distance|range|apart)\b", re.I)),
)


def aspects(fact: Fact) -> frozenset[str]:
    """The aspects (height, depth, width, ...) a measure's clause names; empty when none."""
    text = fact.clause or fact.sentence
    return frozenset(name for name, pattern in _ASPECTS if pattern.search(text))


def _headings_meet(a: Fact, b: Fact) -> bool:
    """True when the two sections' headings share a word stem ("renewal", "renewing")."""
    return any(x[:5] == y[:5] for x in a.heading for y in b.heading if min(len(x), len(y)) >= 4)


def _similarities(
    facts: Sequence[Fact],
    pairs: Sequence[tuple[int, int]],
    embed: Embed | None,
    text: Callable[[Fact], str],
) -> list[float]:
    if embed is None:
        return [0.0] * len(pairs)
    used = sorted({k for pair in pairs for k in pair})
    vectors = embed([text(facts[k]) for k in used])
    row = {k: n for n, k in enumerate(used)}
    out = []
    for i, j in pairs:
        u, v = vectors[row[i]], vectors[row[j]]
        norm = float(np.linalg.norm(u) * np.linalg.norm(v))
        out.append(float(u @ v) / norm if norm > 0 and math.isfinite(norm) else 0.0)
    return out


def _channel_against_rule(a: Fact, b: Fact) -> bool:
    """True when one article's value claims to hold however the customer reaches us ("the
    same however the member tells us") and another article gives a value of the same role for
    one channel ("In the app, ... 24 hours before"): the second contradicts the first's claim,
    however differently the two subjects are worded (round 20 of the drafter)."""
    general, channel = (a, b) if not a.scope else (b, a)
    return (
        not general.scope
        and general.every_channel
        and bool(channel.scope)
        and all(s.startswith("channel:") for s in channel.scope)
        and general.role == channel.role
    )


def _os_release(fact: Fact) -> bool:
    """True when ``fact`` is the least release of an operating system or a browser, which
    many parts of a product each name for themselves."""
    return fact.dimension == "version" and versioned_thing(fact) in _SYSTEMS


def _version_against_rule(a: Fact, b: Fact) -> bool:
    """True when two least versions of one named thing ("Android 11 or later", "needs Android
    13 or newer") differ and one of them claims to hold for everything ("every feature of the
    app ... works on those versions"): the other contradicts that claim, however differently
    the two sentences are worded (round 24 of the drafter). Without the claim, a feature that
    needs a newer release than the app is no contradiction."""
    if a.dimension != "version" or b.dimension != "version" or a.value == b.value:
        return False
    thing = versioned_thing(a)
    return thing is not None and thing == versioned_thing(b) and (a.universal or b.universal)


def _judge(a: Fact, b: Fact) -> Conflict | None:
    """Contradiction, exception, or two cases (different scopes: no conflict)."""
    if set(a.scope) == set(b.scope):
        return Conflict("contradiction", *_order(a, b))
    if a.scope and b.scope:
        return None  # two plans, two endpoints: two cases
    general, specific = (a, b) if not a.scope else (b, a)
    if general.universal:
        return Conflict("contradiction", general, specific)
    return Conflict("exception", general, specific)


def _order(a: Fact, b: Fact) -> tuple[Fact, Fact]:
    """An article before a resolved ticket, then by passage id: a stable reading order."""
    return (
        (a, b)
        if (a.kind is not DocKind.KB, a.passage_id)
        <= (
            b.kind is not DocKind.KB,
            b.passage_id,
        )
        else (b, a)
    )


_AGED = _PATTERNS.compile(
    r"\b(?:aged|ages|age|the age of)\s+(\d{1,3})(?![\d.,:]|\s*(?:%|percent|per cent))",
    re.IGNORECASE,
)


def ages(text: str) -> list[Quantity]:
    """A person's age given as such: "pupils aged 9 and over", "from the age of 16"
    (:func:`quantities` reads "12 years old" and "12-year-olds"), of the dimension ``age``
    (round 26 of the drafter)."""
    return [
        Quantity(Decimal(m.group(1)), "age", m.group(0), m.start(), m.end())
        for m in _AGED.finditer(text)
    ]


#: A picture's resolution (round 27 of the drafter): "4K", "1080p", "Full HD". Lines of
#: height from a list, so that "100p" (pence) and "4k users" are not read as one; a lower-case
#: "4k" only before a word of pictures.
_RESOLUTION = _PATTERNS.compile(
    r"(?<![\w.])(?:(240|360|480|540|576|720|1080|1440|2160|4320)p"
    r"|([248])K|([248])k(?=\s+(?:video|videos|film|films|footage|resolution|camera|display|"
    r"screen|monitor|tv|hdr|uhd)\b)|((?i:full|ultra)\s+HD|FHD|UHD|QHD))(?![\w])"
)
#: The lines of a picture "2K", "4K" or "8K" across, and of the named resolutions.
_RESOLUTION_LINES = {"2": 1440, "4": 2160, "8": 4320, "full hd": 1080, "fhd": 1080}
_RESOLUTION_LINES |= {"ultra hd": 2160, "uhd": 2160, "qhd": 1440}


def resolutions(text: str) -> list[Quantity]:
    """The resolutions ``text`` gives (``_RESOLUTION``) as lines of height, of the dimension
    ``resolution``: "delivered in 4K" and "exported at 1080p" are two values of one."""
    found = []
    for match in _RESOLUTION.finditer(text):
        lines, across, named = match.group(1), match.group(2) or match.group(3), match.group(4)
        key = across or " ".join((named or "").lower().split())
        value = Decimal(lines) if lines else Decimal(_RESOLUTION_LINES[key])
        found.append(Quantity(value, "resolution", match.group(0), match.start(), match.end()))
    return found


def _ages_everywhere(text: str) -> list[Quantity]:
    return [q for q in quantities(text) if q.unit == "age"] + ages(text)


def values_in(text: str) -> list[Quantity]:
    """The values a fact can carry in ``text``: quantities, limited counts, the days of weekly
    and monthly events, and least versions not inside another value."""
    found = quantities(text)
    found += limit_counts(text)
    found += weekdays(text)
    found += monthdays(text)
    for later in (ages(text), versions(text), yeardates(text), resolutions(text)):
        found += [v for v in later if not any(f.start <= v.start < f.end for f in found)]
    return found


def states_value(text: str) -> bool:
    """True when ``text`` gives a value a fact can carry (``values_in``)."""
    return bool(values_in(text))


#: The reader of each dimension whose values ``quantities`` does not give.
_READERS: dict[str, Callable[[str], list[Quantity]]] = {
    "weekday": weekdays,
    "monthday": monthdays,
    "version": versions,
    "yeardate": yeardates,
    "age": _ages_everywhere,
    "resolution": resolutions,
}


def stated_by(text: str, fact: Fact) -> bool:
    """True when ``text`` gives the value of ``fact`` (in any unit of its dimension; a
    schedule as a schedule)."""
    if fact.dimension.startswith("count:"):
        found = limit_counts(text)
    elif fact.dimension in _READERS:
        found = _READERS[fact.dimension](text)
    else:
        found = frequencies(text) if fact.role == "frequency" else quantities(text)
    return any(q.dimension == fact.dimension and q.base_value == fact.value for q in found)


_PATTERNS.save()
