"""The one tokenizer behind every BM25 index and every query: words, compounds, stems.

Support text is full of identifiers (``429``, ``KS-4001``, ``x-ratelimit-remaining``,
``starting_after``). A token is a run of letters and digits; runs joined by ``-``, ``_`` or
``.`` also yield the whole compound, so a query for the exact identifier matches it strongly
while its parts still match prose that spells them out.
"""

from __future__ import annotations

from supportagent.regexcache import ProgramCache

_PATTERNS = ProgramCache.for_module(__name__, __file__)  # see regexcache

#: Common English function words plus the greetings and thanks that open and close tickets.
#: Kept short on purpose: BM25's idf already discounts frequent words; this list only removes
#: words that never tell two support articles apart.
_STOPWORD_TEXT = """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can cannot could did do does doing down during each few
    for from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your yours
    yourself yourselves also may might must shall us let get got im ive youre dont doesnt
    didnt cant wont isnt arent wasnt hi hello hey thanks thank please regards dear cheers
"""
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())

# Letters and digits (any script), optionally joined into a compound by - _ or .
# A joiner only counts between two alphanumerics, so "limits." ends at the "s".
_COMPOUND = _PATTERNS.compile(r"[^\W_]+(?:[-_.][^\W_]+)*")
_PART = _PATTERNS.compile(r"[^\W_]+")
_JOINERS = _PATTERNS.compile(r"[-_.]")
# Possessive "'s" goes; other apostrophes inside a word are dropped ("don't" -> "dont").
_POSSESSIVE = _PATTERNS.compile(r"['\u2019]s\b")
_APOSTROPHE = _PATTERNS.compile(r"(?<=[^\W_])['\u2019](?=[^\W_])")

_VOWELS = frozenset("aeiouy")
# After "ing"/"ed" comes off, a doubled final consonant is undoubled: running -> run.
_UNDOUBLE = frozenset("bdgmnprt")
_MIN_STEM = 3


def _has_vowel(text: str) -> bool:
    return any(ch in _VOWELS for ch in text)


def stem(word: str) -> str:
    """A light, conservative suffix stemmer for one lowercase word.

    Strips plural ``s``/``es``/``ies``, ``ing`` and ``ed``, then a final silent ``e``, so that
    ``update``, ``updates``, ``updated`` and ``updating`` all meet at ``updat``. Words of three
    letters or fewer, and words that do not end in a letter, are returned unchanged. The output
    is a matching key, not necessarily an English word.
    """
    if len(word) <= _MIN_STEM or not word[-1].isalpha():
        return word
    if word.endswith(("ies", "ied")) and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s"):
        if word.endswith(("ss", "us", "is")):
            return word
        word = word[:-1]
    elif word.endswith("ing") or (word.endswith("ed") and not word.endswith("eed")):
        base = word[:-3] if word.endswith("ing") else word[:-2]
        if len(base) < _MIN_STEM or not _has_vowel(base):
            return word
        if base[-1] == base[-2] and base[-1] in _UNDOUBLE:
            base = base[:-1]
        word = base
    if len(word) > _MIN_STEM and word.endswith("e") and not word.endswith("ee"):
        word = word[:-1]
    return word


def _stem_compound(compound: str) -> str:
    """Stem only the last segment of a compound: ``api-keys`` -> ``api-key``."""
    parts = _JOINERS.split(compound)
    last = parts[-1]
    stemmed = stem(last)
    if stemmed == last:
        return compound
    return compound[: len(compound) - len(last)] + stemmed


def normalize(text: str) -> str:
    """Lowercase and fold apostrophes so ``Customer's`` and ``don't`` tokenize cleanly."""
    text = text.lower()
    text = _POSSESSIVE.sub("", text)
    return _APOSTROPHE.sub("", text)


def tokenize(text: str) -> list[str]:
    """Turn text into BM25 tokens, in reading order.

    Each word is lowercased, dropped if it is a stopword or a single character, and stemmed.
    A compound such as ``x-ratelimit-remaining`` yields its parts first and then the whole
    compound (never dropped as a stopword; only its last segment is stemmed).
    """
    tokens: list[str] = []
    for match in _COMPOUND.finditer(normalize(text)):
        compound = match.group()
        for part in _PART.findall(compound):
            if len(part) < 2 or part in STOPWORDS:
                continue
            stemmed = stem(part)
            # "getting" stems to "get": a stopword in disguise is still a stopword.
            if stemmed not in STOPWORDS:
                tokens.append(stemmed)
        if _JOINERS.search(compound):
            tokens.append(_stem_compound(compound))
    return tokens


_PATTERNS.save()
