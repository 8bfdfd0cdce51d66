"""Language detection: reliable on real sentences, never flipping a short or mixed English text."""

from __future__ import annotations

import pytest

from supportagent.language import detect_language, language_of


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
