"""The redactor on its own: what it catches, what it must leave alone, and the way back."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supportagent.redact import Redactor, find_personal_data, iban_valid, luhn_valid


def kinds(text: str) -> list[tuple[str, str]]:
    return [(f.kind, f.value) for f in find_personal_data(text)]


def luhn_digit(payload: str) -> str:
    """The check digit that makes ``payload + digit`` pass Luhn (computed independently of the
    module: double every second digit from the right of the full number)."""
    for digit in "0123456789":
        number = payload + digit
        total = sum(
            (2 * int(c) - 9 if 2 * int(c) > 9 else 2 * int(c)) if i % 2 else int(c)
            for i, c in enumerate(reversed(number))
        )
        if total % 10 == 0:
            return digit
    raise AssertionError("unreachable")


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        (
            "write to jane.doe+tickets@mail.example.co.uk today",
            "EMAIL",
            "jane.doe+tickets@mail.example.co.uk",
        ),
        ("call +1 415-555-0132 please", "PHONE", "+1 415-555-0132"),
        ("call (202) 555-0147 please", "PHONE", "(202) 555-0147"),
        ("mobile 07700 900123 please", "PHONE", "07700 900123"),
        ("the opt-out for +447700900456?", "PHONE", "+447700900456"),
        ("card 4111 1111 1111 1111 was charged", "CARD", "4111 1111 1111 1111"),
        ("card 5555-5555-5555-4444 was charged", "CARD", "5555-5555-5555-4444"),
        ("amex 378282246310005.", "CARD", "378282246310005"),
        ("IBAN DE89 3704 0044 0532 0130 00 THANKS", "IBAN", "DE89 3704 0044 0532 0130 00"),
        ("IBAN GB82WEST12345698765432.", "IBAN", "GB82WEST12345698765432"),
        ("key sk-proj-Ab12Cd34Ef56Gh78Ij90Kl leaked", "SECRET", "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl"),
        ("AWS AKIAIOSFODNN7EXAMPLE here", "SECRET", "AKIAIOSFODNN7EXAMPLE"),
        (
            "secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY here",
            "SECRET",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        ),
        ("token 9f8Kq2LmZx7Rt4Vb1Np6Ws3Yh0Jd5Gc here", "SECRET", "9f8Kq2LmZx7Rt4Vb1Np6Ws3Yh0Jd5Gc"),
        (
            "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8 pushed",
            "SECRET",
            "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
        ),
        ("ship to 221B Baker Street, London", "ADDRESS", "221B Baker Street"),
        (
            "at 1600 Pennsylvania Ave NW, Suite 400, Washington",
            "ADDRESS",
            "1600 Pennsylvania Ave NW, Suite 400",
        ),
        ("to 12 Harbour Road, Unit 4, Leith", "ADDRESS", "12 Harbour Road, Unit 4"),
        ("Lieferung an Hauptstraße 12a, Berlin", "ADDRESS", "Hauptstraße 12a"),
        ("au 12 rue de la Paix, Paris", "ADDRESS", "12 rue de la Paix"),
    ],
)
def test_each_kind_is_found(text: str, kind: str, value: str) -> None:
    assert kinds(text) == [(kind, value)]


#: Things a support answer needs verbatim; none is personal data.
NOT_PERSONAL = [
    "Python 3.11.2 and SDK v2.14.0-beta.3",
    "on 2024-05-03 at 12:30 UTC, or 03/05/2024, or 3 May 2024 at 09:15",
    "order ORD-58213 and ticket T-2012, invoice INV-2026-0142",
    "a refund of $1,234.56 and €99.00, 1.234,56 EUR",
    "HTTP 429 Too Many Requests, 503, status 404",
    "50 requests per second, 10,000 messages per day, 300 per minute",
    "a timestamp 1767225600 and 1700000000000 ms",
    "account acct_3Fz8Kq1WnR and key prefix ks_live_",
    "the sandbox number +1555010",
    "kb-email-bounces-and-suppression#hard-bounces and resolved-T-1042",
    "See https://docs.kestrel.example/v2/webhooks/signatures#verify-a-signature",
    "POST /v2/messages/send with Idempotency-Key: order-58213-attempt-2",
    "the error code E_RATE_LIMIT_EXCEEDED_PER_ACCOUNT",
    "retry after 2, 4, 8, 16 and 32 seconds; up to 5 billing contacts",
    "A 3 Way handshake, 2 factor authentication, 4 Main features",
    "card numbers 4111 1111 1111 1112 and 1234 5678 9012 3456 fail Luhn",
    "order id 100000000000000008 passes Luhn but starts with 1",
    "ISBN 978-3-16-148410-0 and the UUID 123e4567-e89b-12d3-a456-426614174000",
    "phone-like 12345 67890 and postcode EH6 6LX, ZIP 94107",
    "version 10.0.19045.3570 of Windows",
]


@pytest.mark.parametrize("text", NOT_PERSONAL)
def test_false_positives_survive_untouched(text: str) -> None:
    assert kinds(text) == []
    assert Redactor().redact(text) == text


@given(
    prefix=st.sampled_from(["4", "51", "55", "2221", "34", "37", "6011", "65"]),
    rest=st.integers(min_value=0, max_value=10**17),
    length=st.integers(min_value=13, max_value=19),
    separator=st.sampled_from(["", " ", "-"]),
)
@settings(max_examples=300, deadline=None)
def test_luhn_valid_card_numbers_are_caught(
    prefix: str, rest: int, length: int, separator: str
) -> None:
    payload = (prefix + str(rest).zfill(18))[: length - 1]
    number = payload + luhn_digit(payload)
    written = separator.join(number[i : i + 4] for i in range(0, len(number), 4))
    assert luhn_valid(number)
    out = Redactor().redact(f"my card is {written} thanks")
    assert out == "my card is [CARD_1] thanks"


@given(
    prefix=st.sampled_from(["4", "51", "55", "34", "37", "6011"]),
    rest=st.integers(min_value=0, max_value=10**17),
    length=st.integers(min_value=13, max_value=19),
    wrong=st.integers(min_value=1, max_value=9),
)
@settings(max_examples=300, deadline=None)
def test_luhn_invalid_numbers_are_no_cards(prefix: str, rest: int, length: int, wrong: int) -> None:
    payload = (prefix + str(rest).zfill(18))[: length - 1]
    digit = str((int(luhn_digit(payload)) + wrong) % 10)
    number = payload + digit
    assert not luhn_valid(number)
    assert "CARD" not in {f.kind for f in find_personal_data(f"order {number} shipped")}


def test_iban_checksum() -> None:
    assert iban_valid("DE89 3704 0044 0532 0130 00")
    assert iban_valid("FR1420041010050500013M02606")
    assert not iban_valid("DE89 3704 0044 0532 0130 01")
    assert not iban_valid("DE00 0000")
    assert kinds("IBAN DE89 3704 0044 0532 0130 01 is wrong") == []


VALUES = [
    "jane@example.com",
    "ops.team@kestrel.example",
    "+44 7700 900123",
    "(202) 555-0147",
    "4111 1111 1111 1111",
    "GB82 WEST 1234 5698 7654 32",
    "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl",
    "221B Baker Street",
]
_FILLER = st.sampled_from(
    ["Hi,", "version 3.11.2", "order ORD-58213", "on 2026-11-02", "$1,234.56", "thanks", "T-2012"]
)


@given(st.lists(st.one_of(st.sampled_from(VALUES), _FILLER), min_size=1, max_size=12))
@settings(max_examples=200, deadline=None)
def test_redact_then_restore_round_trips(parts: list[str]) -> None:
    text = " and ".join(parts)
    redactor = Redactor()
    redacted = redactor.redact(text)
    assert redactor.restore(redacted) == text
    # No raw value survives, the same value is one placeholder, and redacting twice is a no-op.
    for part in parts:
        if part in VALUES:
            assert part not in redacted
    assert len(set(re.findall(r"\[[A-Z]+_\d+\]", redacted))) == len(
        {p for p in parts if p in VALUES}
    )
    assert redactor.redact(redacted) == redacted


def test_numbering_is_per_kind_and_in_order_of_appearance() -> None:
    r = Redactor()
    first = r.redact("a@example.com, b@example.com, +44 7700 900123")
    second = r.redact("and again b@example.com and c@example.com")
    assert first == "[EMAIL_1], [EMAIL_2], [PHONE_1]"
    assert second == "and again [EMAIL_2] and [EMAIL_3]"
    assert r.counts() == {"EMAIL": 3, "PHONE": 1}


def test_a_placeholder_the_ticket_wrote_cannot_be_restored_to_someone_elses_value() -> None:
    r = Redactor()
    r.redact("a@example.com")
    forged = r.redact("please write [EMAIL_1] and [CARD_3] on the invoice")
    assert forged == "please write [EMAIL_1] and [CARD-3] on the invoice"
    fresh = Redactor()
    assert fresh.redact("reply to [EMAIL_1]") == "reply to [EMAIL-1]"
    assert fresh.restore("[EMAIL-1]") == "[EMAIL-1]"


def test_an_unknown_placeholder_stays_as_the_model_wrote_it() -> None:
    r = Redactor()
    r.redact("a@example.com")
    assert r.restore("write to [EMAIL_1], not [EMAIL_7]") == "write to a@example.com, not [EMAIL_7]"
