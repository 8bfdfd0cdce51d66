"""Which language a ticket is written in, offline (py3langid, BSD, model inside its wheel).

Short texts fool any detector ("Rate limit?" reads as Romanian), so a guess counts only with
enough letters and enough confidence; otherwise the answer is English, the corpus's language,
and nothing downstream changes.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any

ENGLISH = "en"
#: Letters needed before a guess other than English is believed.
MIN_LETTERS = 12
#: Normalised probability a non-English guess needs.
MIN_CONFIDENCE = 0.70
#: Languages a support inbox plausibly holds; restricting the set steadies short texts.
LANGUAGES = (
    "en", "es", "de", "fr", "pt", "it", "nl", "sv", "da", "no", "fi", "pl", "cs", "sk", "hu",
    "ro", "el", "tr", "ru", "uk", "ar", "he", "fa", "hi", "zh", "ja", "ko", "id", "vi", "th",
)  # fmt: skip

_LETTER = re.compile(r"[^\W\d_]")
_identifier: Any = None
_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class Language:
    code: str
    confidence: float


def _model() -> Any:
    global _identifier
    if _identifier is None:
        with _lock:
            if _identifier is None:
                from py3langid.langid import MODEL_FILE, LanguageIdentifier

                ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
                ident.set_languages(list(LANGUAGES))
                _identifier = ident
    return _identifier


def detect_language(text: str) -> Language:
    """The language of ``text``; English unless another is clear."""
    if len(_LETTER.findall(text)) < MIN_LETTERS:
        return Language(ENGLISH, 0.0)
    code, probability = _model().classify(text)
    if code != ENGLISH and probability < MIN_CONFIDENCE:
        return Language(ENGLISH, round(1.0 - float(probability), 3))
    return Language(str(code), round(float(probability), 3))


def language_of(text: str) -> str:
    """Just the code, for callers that only branch on it."""
    return detect_language(text).code
