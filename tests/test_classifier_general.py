"""Round 6: a model's money or account decision on a ticket that says it asks in general.

A ticket that asks "in general" (or "en general", "im Allgemeinen", "for our handbook") and in
which no sentence reaches the request model's threshold is no request about the writer's own
money or account: a money or account decision of the triage model or of the multilingual
route becomes ``uncertain`` (still a person, no longer a money alarm). A real ask in the same
ticket is still found by the request model first. Sentences written for this test.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import pytest

from supportagent.agent.safety import GENERAL_INQUIRY
from supportagent.domain import Bucket, Classification, Ticket
from supportagent.engines.classifier import Classifier
from supportagent.engines.multilingual_triage import MultilingualTriage
from supportagent.engines.triage_model import TriageModel


class _Fixed(TriageModel):
    """A triage model that always gives the same bucket probabilities."""

    def __init__(self, answerable: float, not_a_question: float, needs_human: float) -> None:
        logits = np.log(np.asarray([answerable, not_a_question, needs_human], np.float32))
        real = TriageModel.load()
        super().__init__(np.zeros_like(real.weights), logits, {"answerable_min": 0.5})


class _MoneyRoute:
    """A multilingual route that calls every ticket a money request."""

    def classify(self, ticket: Ticket, language: str) -> Classification | None:
        return Classification(Bucket.NEEDS_HUMAN, "money_specific", "stub route", 0.9, "model")


def _needs_human_model() -> Classifier:
    return Classifier(model=_Fixed(0.1, 0.05, 0.85))


def _money_route() -> Classifier:
    return Classifier(multilingual=cast(MultilingualTriage, _MoneyRoute()))


@pytest.mark.parametrize(
    "body",
    [
        # request model 0.43 and 0.30: some ask, below GENERAL_FLOOR
        "In general, does a cancelled group booking keep its deposit as credit?",
        "For our office handbook: when someone leaves, is their seat on the plan credited back?",
        # The request model reads this one at 0.81 as an ask of the writer's own: the
        # general words do not outweigh it (a gap of the request model, recorded here).
        pytest.param(
            "In general, when a course is cancelled two weeks ahead, is the fee returned?",
            marks=pytest.mark.xfail(strict=True, reason="request model 0.81, above the floor"),
        ),
    ],
)
def test_an_english_question_in_general_is_no_money_alarm(body: str) -> None:
    got = _needs_human_model().classify(Ticket("T-G1", "Question", body), GENERAL_INQUIRY)
    assert got.bucket is Bucket.NEEDS_HUMAN
    assert got.decided_by == "model"
    assert got.reason_code == "uncertain", got
    assert "in general" in got.reason


def test_a_handbook_question_is_no_account_alarm() -> None:
    ticket = Ticket(
        "T-G2",
        "Owners",
        "For our volunteer handbook: who can hand a club account over to a new treasurer?",
    )
    got = _needs_human_model().classify(ticket, GENERAL_INQUIRY)
    assert (
        got.reason_code not in ("money_specific", "account_specific") or got.decided_by != "model"
    )


def test_a_spanish_question_in_general_is_no_money_alarm() -> None:
    ticket = Ticket(
        "T-G3",
        "Fianza",
        "En general, si anulo una reserva con dos días de antelación, ¿recupero la fianza?",
    )
    got = _money_route().classify(ticket, GENERAL_INQUIRY)
    assert got.bucket is Bucket.NEEDS_HUMAN
    assert got.reason_code == "uncertain", got


def test_a_german_question_in_general_is_no_money_alarm() -> None:
    ticket = Ticket(
        "T-G4",
        "Kaution",
        "Bekommt man die Kaution im Allgemeinen zurück, wenn man zwei Tage vorher absagt?",
    )
    got = _money_route().classify(ticket, GENERAL_INQUIRY)
    assert got.reason_code == "uncertain", got


def test_without_the_general_words_the_route_decides() -> None:
    ticket = Ticket(
        "T-G5", "Kaution", "Bekommt man die Kaution zurück, wenn man zwei Tage vorher absagt?"
    )
    got = _money_route().classify(ticket, GENERAL_INQUIRY)
    assert got.reason_code in ("money_specific", "uncertain"), got


def test_a_real_ask_beside_the_general_words_still_reaches_a_person_as_money() -> None:
    for subject, body in (
        (
            "Doble cobro",
            "En general la app va bien. Por favor, devolvedme los 40 euros que me cobrasteis "
            "dos veces el 3 de mayo.",
        ),
        (
            "Double charge",
            "In general I'm happy with the app, but you took the 40 euros twice on 3 May; "
            "please put one back on my card.",
        ),
    ):
        got = _money_route().classify(Ticket("T-G6", subject, body), GENERAL_INQUIRY)
        assert got.bucket is Bucket.NEEDS_HUMAN
        assert got.reason_code == "money_specific", got


# Round 19 (fifteenth session): asking before buying at all, or saying nothing has happened, is
# asking in general too, in the languages the route reads. Sentences written for this test.
@pytest.mark.parametrize(
    ("subject", "body"),
    [
        ("Refunds", "What happens to the fee if a class is called off? Asking before we sign up."),
        ("Invoices", "Can an invoice carry our charity number? Nothing is wrong right now."),
        ("Annulation", "Un stage annulé est-il remboursé ? Je n'ai encore rien acheté."),
        # The request model reads these two questions as asks of the writer's own (0.61,
        # 0.63, above its 0.55): it decides before the general words are read (a gap, recorded).
        pytest.param(
            "Terugbetaling",
            "Krijg ik geld terug als de les vervalt? Ik wil het gewoon weten.",
            marks=pytest.mark.xfail(strict=True, reason="request model 0.61, above its threshold"),
        ),
        (
            "Reembolso",
            "¿Se devuelve la matrícula si cancelan el curso? Pregunto antes de reservar.",
        ),
        pytest.param(
            "Erstattung",
            "Wird die Gebühr erstattet, wenn der Kurs ausfällt? Ich habe noch nichts gekauft.",
            marks=pytest.mark.xfail(strict=True, reason="request model 0.63, above its threshold"),
        ),
    ],
)
def test_asking_before_buying_is_no_money_alarm(subject: str, body: str) -> None:
    got = _money_route().classify(Ticket("T-G7", subject, body), GENERAL_INQUIRY)
    assert got.bucket is Bucket.NEEDS_HUMAN
    assert got.reason_code == "uncertain", got


def test_a_charge_with_nothing_wrong_in_the_app_is_still_money() -> None:
    body = (
        "Nothing is wrong with the app, but you took the 40 euros twice on 3 May; please put "
        "one back on my card."
    )
    got = _money_route().classify(Ticket("T-G8", "Double charge", body), GENERAL_INQUIRY)
    assert got.reason_code == "money_specific", got
