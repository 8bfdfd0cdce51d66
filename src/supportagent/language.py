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

import hashlib
import lzma
import re
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from supportagent.regexcache import ProgramCache
from supportagent.usercache import cache_folder, publish_folder, remove_stale

_PATTERNS = ProgramCache.for_module(__name__, __file__)  # see regexcache

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
_NOT_PROSE = _PATTERNS.compile(
    r"```.*?```|`[^`]*`|https?://\S+|www\.\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|(?:/[\w{}.:-]+)+"
    r"|\b[\w]*\d[\w-]*\b|\b\w+(?:[-_.]\w+)+\b",
    re.DOTALL,
)
_WORD = _PATTERNS.compile(r"[^\W\d_]{2,}")
_LETTER = _PATTERNS.compile(r"[^\W\d_]")
_CJK = _PATTERNS.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


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
                _IDENTIFIER = _load_identifier()
    return _IDENTIFIER


#: Bump when the cached form of the identifier's tables changes.
_CACHE_FORMAT = "v2"
_TABLES = ("ptc", "pc", "classes", "nextmove", "nextmove_row", "out_feat")


def _load_identifier() -> Any:
    """The identifier, from memory-mapped tables in the user's cache folder when it can.

    The wheel ships the model as an LZMA-compressed npz: decompressing it took most of a
    one-shot ``triage``'s language check, and reading even an uncompressed copy copied 68 MB
    each run. So the tables are kept once as ``.npy`` files, already limited to CANDIDATES,
    mapped rather than read (a text touches a few pages of them) and loaded with
    ``allow_pickle=False``. The folder is named after the source file's size and mtime and the
    candidates; an unreadable or truncated one is rebuilt, and without a writable cache the
    compressed file is read as before. Either way the identifier gets the same numbers.
    """
    import numpy as np
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    source = Path(MODEL_FILE) if Path(MODEL_FILE).is_absolute() else Path(MODEL_DIR) / MODEL_FILE
    try:
        tables = _cached_tables(source)
    except (OSError, ValueError):
        identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        identifier.set_languages(CANDIDATES)
        return identifier
    return LanguageIdentifier(
        np.asarray(tables["ptc"]),
        np.asarray(tables["pc"]),
        tables["classes"].tolist(),
        _as_ints(tables["nextmove"]),
        _as_ints(tables["out_feat"]),
        norm_probs=True,
        tk_row=_as_ints(tables["nextmove_row"]),
    )


def _cached_tables(source: Path) -> dict[str, Any]:
    """The mapped tables of ``source`` in the cache folder, written first when they are not
    there or cannot be read; OSError or ValueError when the cache cannot be used at all."""
    stat = source.stat()
    candidates = hashlib.sha256(",".join(CANDIDATES).encode()).hexdigest()[:12]
    name = f"langid-{_CACHE_FORMAT}-{stat.st_size}-{stat.st_mtime_ns}-{candidates}"
    folder = cache_folder() / name
    try:
        return _map_tables(folder)
    except (OSError, ValueError):
        shutil.rmtree(folder, ignore_errors=True)  # truncated or half-deleted: made anew
    publish_folder(folder, lambda work: _write_tables(source, work))
    remove_stale(folder.parent, "langid-", keep=name)
    return _map_tables(folder)


def _write_tables(source: Path, folder: Path) -> None:
    """The wheel's model, decompressed and limited to CANDIDATES, one ``.npy`` per table.

    The columns kept are the ones py3langid's ``set_languages(CANDIDATES)`` keeps, in the same
    order, so the identifier built on them scores exactly as the restricted full model does.
    """
    import numpy as np

    # Unpacked to a plain file first: a zip is read by seeking, which an LZMA stream can
    # only do by decompressing again from the start.
    unpacked = folder / "model.npz"
    with lzma.open(source) as packed, unpacked.open("wb") as out:
        shutil.copyfileobj(packed, out, length=1 << 20)
    with np.load(unpacked, allow_pickle=False) as data:
        model = {key: data[key] for key in _TABLES}
    unpacked.unlink()
    wanted = set(CANDIDATES)
    keep = [i for i, code in enumerate(model["classes"].tolist()) if code in wanted]
    model["ptc"] = np.ascontiguousarray(model["ptc"][:, keep])
    model["pc"] = model["pc"][keep]
    model["classes"] = model["classes"][keep]
    for key, values in model.items():
        np.save(folder / f"{key}.npy", values, allow_pickle=False)


def _map_tables(folder: Path) -> dict[str, Any]:
    """The cached tables, mapped read-only; ValueError when one is truncated or inconsistent."""
    import numpy as np

    tables = {
        key: np.load(folder / f"{key}.npy", mmap_mode="r", allow_pickle=False) for key in _TABLES
    }
    classes = len(tables["classes"])
    if (
        tables["ptc"].ndim != 2
        or tables["ptc"].shape[1] != classes
        or tables["pc"].shape != (classes,)
        or tables["out_feat"].shape != tables["nextmove_row"].shape
    ):
        raise ValueError(f"{folder}: the language tables do not fit together")
    return tables


def _as_ints(values: Any) -> memoryview:
    """A mapped 1-D table as a memoryview, which py3langid indexes one entry at a time as fast
    as the stdlib array it builds itself, without copying the table into memory."""
    return memoryview(values)


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


_PATTERNS.save()
