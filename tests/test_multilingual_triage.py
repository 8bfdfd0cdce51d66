"""The classifier's route for tickets in another language: money and account requests only."""

from __future__ import annotations

import pytest

from embedding_fakes import HashingEmbedder
from supportagent.domain import Bucket, SafetyResult, Ticket
from supportagent.engines.classifier import EXEMPLAR_BUCKETS, Classifier
from supportagent.engines.multilingual_triage import (
    MONEY_MARGIN,
    MultilingualTriage,
    decide,
    default_multilingual_triage,
)
from supportagent.retrieval.exemplars import ExemplarIndex, ExemplarSet

EXEMPLARS = ExemplarSet(
    "triage",
    ("question", "question", "bug_report", "money_specific", "money_specific", "account_specific"),
    (
        "wie exportiere ich berichte als tabelle",
        "wie lade ich kollegen in den arbeitsbereich ein",
        "die app stürzt beim speichern ab",
        "bitte erstatten sie die doppelte abbuchung vom märz",
        "die rechnung vom märz zeigt eine doppelte abbuchung erstatten",
        "bitte löschen sie mein konto endgültig",
    ),
)
QUIET = SafetyResult("general_inquiry", "low", False, "general_inquiry")


def route() -> MultilingualTriage:
    return MultilingualTriage(ExemplarIndex(EXEMPLARS, HashingEmbedder()), EXEMPLAR_BUCKETS)


def test_a_refund_request_in_one_sentence_of_a_question_goes_to_a_person() -> None:
    ticket = Ticket(
        "T-1",
        "Berichte",
        "Wie exportiere ich Berichte als Tabelle? "
        "Bitte erstatten Sie die doppelte Abbuchung vom März.",
    )
    decided = route().classify(ticket, "German")
    assert decided is not None
    assert (decided.bucket, decided.reason_code) == (Bucket.NEEDS_HUMAN, "money_specific")
    assert "German" in decided.reason and "money_specific" in decided.reason


def test_a_plain_question_is_left_to_the_language_gate() -> None:
    ticket = Ticket("T-2", "", "Wie lade ich Kollegen in den Arbeitsbereich ein?")
    assert route().classify(ticket, "German") is None


def test_a_close_call_between_money_and_a_question_is_uncertain() -> None:
    scores = {"question": 0.80, "bug_report": 0.2, "money_specific": 0.80 + MONEY_MARGIN / 2}
    decided = decide(scores, EXEMPLAR_BUCKETS, "Spanish")
    assert decided is not None
    assert (decided.bucket, decided.reason_code) == (Bucket.NEEDS_HUMAN, "uncertain")
    clear = decide({**scores, "money_specific": 0.80 + 2 * MONEY_MARGIN}, EXEMPLAR_BUCKETS, "es")
    assert clear is not None and clear.reason_code == "money_specific"


def test_a_bug_report_is_not_routed_away_by_the_exemplars() -> None:
    # Nearest-exemplar routing away from a person fails open; only money and account decide.
    assert decide({"question": 0.1, "bug_report": 0.9}, EXEMPLAR_BUCKETS, "German") is None


def test_the_classifier_uses_the_route_for_a_ticket_in_another_language() -> None:
    classifier = Classifier(embedder=HashingEmbedder(), multilingual=route())
    ticket = Ticket(
        "T-3",
        "Doppelte Abbuchung",
        "Hallo, die Rechnung vom März zeigt eine doppelte Abbuchung. Bitte erstatten Sie "
        "den Betrag, wir haben nur einmal bestellt und warten seit zwei Wochen.",
    )
    decided = classifier.classify(ticket, QUIET)
    assert decided.bucket is Bucket.NEEDS_HUMAN


@pytest.mark.skipif(default_multilingual_triage() is None, reason="multilingual-e5 not installed")
def test_the_shipped_route_sends_a_spanish_refund_to_a_person() -> None:
    shipped = default_multilingual_triage()
    assert shipped is not None
    ticket = Ticket(
        "T-4",
        "Pedido incompleto",
        "Me llegó el pedido sin la funda que pagué. Quiero que me devuelvan los 19 euros de la "
        "funda, no quiero que me la envíen otra vez.",
    )
    decided = shipped.classify(ticket, "Spanish")
    assert decided is not None and decided.bucket is Bucket.NEEDS_HUMAN
