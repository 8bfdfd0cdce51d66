"""Which language a ticket is written in, offline (py3langid, whose model ships in its wheel).

One function, :func:`detect_language`, for the pipeline's language gate and for anyone else
who needs it (the safety rules, say). It is deliberately conservative: support tickets are
full of identifiers, code and English product words, and a short or mixed text must never flip
an English ticket to another language. So the guess is made on the ticket's prose only
(greetings, sign-offs, code, URLs and identifiers removed), and a text with too few words or a
guess below :data:`MIN_CONFIDENCE` is reported as not reliable; callers act on reliable guesses
only.
"""

from __future__ import annotations

import lzma
import os
import re
import shutil
import tempfile
import threading
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ENGLISH = "en"
#: Below this many words of prose a guess is never reliable.
MIN_WORDS = 5
#: A reliable guess needs at least this (normalised) probability.
MIN_CONFIDENCE = 0.9
#: Languages the detector may answer with. Fewer candidates make short texts far more accurate
#: (langid.py's 97 languages include many that look alike on a few words); these are the
#: languages a support inbox usually sees.
CANDIDATES = (
    "en", "de", "fr", "es", "it", "pt", "nl", "sv", "da", "no", "fi", "pl", "cs", "sk", "hu",
    "ro", "tr", "el", "ru", "uk", "bg", "hr", "sl", "et", "lv", "lt", "ja", "zh", "ko", "ar",
    "he", "hi", "th", "vi", "id", "ms",
)  # fmt: skip

_NAMES = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian",
    "pt": "Portuguese", "nl": "Dutch", "sv": "Swedish", "da": "Danish", "no": "Norwegian",
    "fi": "Finnish", "pl": "Polish", "cs": "Czech", "sk": "Slovak", "hu": "Hungarian",
    "ro": "Romanian", "tr": "Turkish", "el": "Greek", "ru": "Russian", "uk": "Ukrainian",
    "bg": "Bulgarian", "hr": "Croatian", "sl": "Slovenian", "et": "Estonian", "lv": "Latvian",
    "lt": "Lithuanian", "ja": "Japanese", "zh": "Chinese", "ko": "Korean", "ar": "Arabic",
    "he": "Hebrew", "hi": "Hindi", "th": "Thai", "vi": "Vietnamese", "id": "Indonesian",
    "ms": "Malay",
}  # fmt: skip

# What is not prose: code spans and blocks, URLs, e-mail addresses, paths, identifiers with
# digits or joiners (KS-4001, x-api-key, starting_after), and greeting or sign-off lines.
_NOT_PROSE = re.compile(
    r"```.*?```|`[^`]*`|https?://\S+|www\.\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|(?:/[\w{}.:-]+)+"
    r"|\b[\w]*\d[\w-]*\b|\b\w+(?:[-_.]\w+)+\b",
    re.DOTALL,
)
_WORD = re.compile(r"[^\W\d_]{2,}")
_LETTER = re.compile(r"[^\W\d_]")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


@dataclass(frozen=True, slots=True)
class Language:
    """A guess: ISO 639-1 ``code``, the detector's ``confidence``, and whether to act on it."""

    code: str
    confidence: float
    reliable: bool

    @property
    def name(self) -> str:
        return language_name(self.code)


def language_name(code: str) -> str:
    """``"de"`` -> ``"German"``; an unknown code is returned as it is."""
    return _NAMES.get(code, code)


def prose(text: str) -> str:
    """``text`` without code, URLs, addresses and identifiers: what a language is judged on."""
    return " ".join(_NOT_PROSE.sub(" ", text).split())


_IDENTIFIER: Any = None
_LOCK = threading.Lock()


def _identifier() -> Any:
    """py3langid's identifier, loaded once per process and limited to CANDIDATES."""
    global _IDENTIFIER
    if _IDENTIFIER is None:
        with _LOCK:
            if _IDENTIFIER is None:
                identifier = _load_identifier()
                identifier.set_languages(CANDIDATES)
                _IDENTIFIER = identifier
    return _IDENTIFIER


def _cache_folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "supportagent"


def _load_identifier() -> Any:
    """The identifier, from an uncompressed copy of the wheel's model when there is one.

    The wheel ships the model as an LZMA-compressed npz; decompressing it was most of a
    one-shot ``triage``'s language check (about 0.3 s of 0.4). The plain npz is kept in the
    user's cache folder, named after the source file's size and mtime, and read with
    ``allow_pickle=False``; if the folder cannot be written, the compressed file is read as
    before. Either way the identifier gets the very same arrays.
    """
    import numpy as np
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    source = Path(MODEL_FILE) if Path(MODEL_FILE).is_absolute() else Path(MODEL_DIR) / MODEL_FILE
    stat = source.stat()
    cached = _cache_folder() / f"langid-{stat.st_size}-{stat.st_mtime_ns}.npz"
    try:
        data = np.load(cached, allow_pickle=False)
    except (OSError, ValueError):
        data = None
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            with (
                tempfile.NamedTemporaryFile(dir=cached.parent, delete=False) as tmp,
                lzma.open(source) as packed,
            ):
                shutil.copyfileobj(packed, tmp, length=1 << 20)
            os.replace(tmp.name, cached)
            data = np.load(cached, allow_pickle=False)
        except (OSError, ValueError):
            return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    with data:
        return LanguageIdentifier(
            np.asarray(data["ptc"]),
            np.asarray(data["pc"]),
            data["classes"].tolist(),
            _as_array(data["nextmove"]),
            data["out_feat"].tolist(),
            norm_probs=True,
            tk_row=_as_array(data["nextmove_row"]),
        )


def _as_array(values: Any) -> array[int]:
    """A numpy unsigned array as the stdlib array py3langid's tables expect."""
    out: array[int] = array({2: "H", 4: "I", 8: "L"}[values.dtype.itemsize])
    out.frombytes(values.tobytes())
    return out


def detect_language(text: str, default: str = "en") -> Language:
    """The language of ``text``; ``default`` (not reliable) when the text is too short to tell."""
    words = prose(text)
    # Scripts without spaces between words count by character.
    count = len(_WORD.findall(words)) + len(_CJK.findall(words)) // 2
    if count < MIN_WORDS:
        return Language(default, 0.0, False)
    code, probability = _identifier().classify(words)
    confidence = round(float(probability), 4)
    return Language(str(code), confidence, confidence >= MIN_CONFIDENCE)


def language_of(text: str) -> str:
    """Just the code, for callers that only branch on it (the multilingual safety detectors):
    English unless the text has 12 letters or more and another language reaches 0.70.

    These are looser than :func:`detect_language`'s thresholds on purpose: a safety detector
    that picks the multilingual model for a borderline text loses nothing, while the drafter's
    language gate must never turn an English ticket away.
    """
    if len(_LETTER.findall(text)) < 12:
        return ENGLISH
    code, probability = _identifier().classify(text)
    return str(code) if code == ENGLISH or float(probability) >= 0.7 else ENGLISH
