"""Language detection: reliable on real sentences, never flipping a short or mixed English text."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from supportagent import language
from supportagent.language import detect_language, language_of

SAMPLE = "Wie lange werden die Ereignisse wiederholt, wenn unser Server nicht antwortet?"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (
            "Wie lange werden die Ereignisse wiederholt, wenn unser Server nicht antwortet?",
            "de",
        ),
        ("Hola, ¿cómo verifico la firma de los webhooks que recibimos en nuestro servidor?", "es"),
        ("Bonjour, comment puis-je changer la clé API de notre compte sans interruption ?", "fr"),
    ],
)
def test_other_languages_are_detected_reliably(text: str, code: str) -> None:
    guess = detect_language(text)
    assert (guess.code, guess.reliable) == (code, True)
    assert language_of(text) == code


@pytest.mark.parametrize(
    "text",
    [
        "Rate limit?",  # too short to tell
        "Webhook retries",
        "KS-4001 on POST /v2/messages with x-api-key",  # identifiers only
        "How do I rotate my API key without downtime? Merci",  # one foreign word
        "Hi, how long are idempotency keys stored for POST /v2/messages? Danke, Jan",
        "Is the API available in Québec? Gracias amigo",
    ],
)
def test_short_or_mixed_english_stays_english(text: str) -> None:
    guess = detect_language(text)
    assert guess.code == "en" or not guess.reliable, guess
    assert language_of(text) == "en"


def _fresh_identifier(monkeypatch: pytest.MonkeyPatch) -> object:
    monkeypatch.setattr(language, "_IDENTIFIER", None)
    return language._identifier()


def test_the_cached_tables_score_as_the_wheels_model(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The mapped copy in the cache gives the very probabilities of py3langid's own loading."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    reference = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    reference.set_languages(language.CANDIDATES)
    built, mapped = _fresh_identifier(monkeypatch), _fresh_identifier(monkeypatch)
    texts = [SAMPLE, "Bonjour, comment puis-je changer la clé API de notre compte ?", "ok"]
    for text in texts:
        assert built.classify(text) == mapped.classify(text) == reference.classify(text)  # type: ignore[attr-defined]


def test_a_truncated_or_foreign_cache_entry_is_rebuilt(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    expected = _fresh_identifier(monkeypatch).classify(SAMPLE)  # type: ignore[attr-defined]
    (folder,) = (tmp_path / "supportagent").glob("langid-*")
    table = folder / "ptc.npy"
    size = table.stat().st_size
    table.write_bytes(table.read_bytes()[: size // 2])
    assert _fresh_identifier(monkeypatch).classify(SAMPLE) == expected  # type: ignore[attr-defined]
    assert table.stat().st_size == size  # rebuilt, not merely worked around
    # An older copy under another name is cleaned away when a new one is written.
    stale = folder.parent / "langid-4586720-1.npz"
    stale.write_bytes(b"old")
    shutil.rmtree(folder)
    assert _fresh_identifier(monkeypatch).classify(SAMPLE) == expected  # type: ignore[attr-defined]
    assert not stale.exists()


@pytest.mark.usefixtures("unwritable_cache")
def test_an_unwritable_cache_falls_back_to_the_wheels_file(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _fresh_identifier(monkeypatch).classify(SAMPLE)[0] == "de"  # type: ignore[attr-defined]
