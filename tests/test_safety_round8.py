"""Round 8 of the safety gate: the kinds of sentence the fifth blind set (tune data from this
round) showed the gate misreading, each fixed by context rather than by words.

- not being around from a named point on, with no return named, is a self-harm warning;
- a scam message passed on that nobody acted on, the subject left out ("... and haven't
  clicked it"), is no incident, for the rules and for the semantic detector alike;
- credentials handed to someone who only claimed to be us, something private found open to
  anyone, an outsider who knew what only we had, money paid to someone who is not ours;
- whether a signature holds up in court, and how fraud is caught, are questions;
- "... and then shut the old one down" asks us to act on an account.

The sentences were written for these tests and appear in no data file.
"""

from __future__ import annotations

import pytest

from supportagent.agent.safety import SafetyScreen, default_screen, screen
from supportagent.agent.safety_semantic import Finding
from supportagent.domain import Bucket, Ticket
from supportagent.engines.classifier import Classifier

# --------------------------------------------------------------------------- self-harm


@pytest.mark.parametrize(
    "text",
    [
        "Could the framed print be ready by the 9th? After that I won't be around to fetch it, "
        "my sister can.",
        "From next month on I won't be here, so please let the membership lapse quietly.",
    ],
)
def test_not_being_around_from_a_point_on_is_self_harm(text: str) -> None:
    result = screen(text)
    assert result.auto_escalate and result.category == "self_harm_risk", result


@pytest.mark.parametrize(
    "text",
    [
        "Term ends on the 2nd and after that I won't be around until March.",
        "After the 5th I won't be here for three weeks, so hold my deliveries.",
        "I won't be around on Monday, can my deputy sign the order?",
    ],
)
def test_an_absence_with_a_return_is_not(text: str) -> None:
    assert screen(text).category != "self_harm_risk"


# --------------------------------------------------------------------------- passed on


_PASSED_ON = (
    "A neighbour warned me about a fake text pretending to be you that asks people to confirm "
    "their card for a discount. One reached me at lunch and haven't clicked it. Where should I "
    "send it?"
)


def test_a_scam_passed_on_without_a_subject_is_not_a_rule_incident() -> None:
    assert screen(_PASSED_ON).matched_rule != "phishing_in_our_name"
    # with someone who acted on it, the rule still escalates
    acted = _PASSED_ON.replace("and haven't clicked it", "and my son has clicked it")
    assert screen(acted).auto_escalate


class _Semantic:
    """A detector that fires fraud on any sentence that mentions a fee or a text pretending to
    be us, else nothing."""

    def __init__(self) -> None:
        self.seen: list[list[str]] = []

    def _finding(self, sentence: str) -> Finding:
        return Finding("payment_fraud", 0.7, 0.1, sentence, "an exemplar", "stub", True)

    def findings(self, ticket: Ticket, sentences: list[str] | None = None) -> list[Finding]:
        units = list(sentences or [])
        self.seen.append(units)
        hits = [u for u in units if "pretending" in u or "fee" in u]
        return [self._finding(hits[0])] if hits else []

    def detect_or_near(self, ticket: Ticket) -> Finding | None:
        return self._finding("A neighbour warned me about a fake text pretending to be you")


def test_the_detector_does_not_fire_on_the_sentence_that_passes_a_scam_on() -> None:
    semantic = _Semantic()
    gate = SafetyScreen(semantic=semantic)  # type: ignore[arg-type]
    result = gate(Ticket("R8-1", "Fake text", _PASSED_ON))
    assert not result.auto_escalate, result
    # the detector read the ticket again without the passing-on sentence
    assert semantic.seen and not any("pretending to be you" in u for u in semantic.seen[-1])


def test_the_detector_still_fires_when_the_scam_was_acted_on() -> None:
    acted = _PASSED_ON.replace("and haven't clicked it", "and I paid the fee it asked for")
    result = SafetyScreen(semantic=_Semantic())(Ticket("R8-2", "Fake text", acted))  # type: ignore[arg-type]
    assert result.auto_escalate


# --------------------------------------------------------------------------- incidents


@pytest.mark.parametrize(
    ("text", "category"),
    [
        (
            "Quick one about exports. Also I told my admin code to a man who phoned posing as "
            "your support desk, which I regret.",
            "security_incident",
        ),
        (
            "Unrelated: the album of our event photos appears to be visible to anybody on the "
            "web, not only our guests.",
            "security_incident",
        ),
        (
            "A stranger at the market described our unpublished menu to me in detail yesterday.",
            "security_incident",
        ),
        (
            "I transferred the booking fee to the guide who contacted me, and now your desk tells "
            "me she never worked for you.",
            "payment_fraud",
        ),
    ],
)
def test_an_incident_told_in_passing_escalates(text: str, category: str) -> None:
    result = screen(text)
    assert result.auto_escalate and result.category == category, result


@pytest.mark.parametrize(
    "text",
    [
        "Roughly speaking, would a form signed through your app stand up in court in Ireland?",
        "Is a delivery photo from your app admissible in court if a buyer says it never came?",
        "What do you do to catch fraud by new sellers before their first payout?",
        "Do you vet tutors for fraud before they can take bookings?",
        "Can anyone with the link open the shared album, or only invited guests?",
    ],
)
def test_a_general_question_is_not_a_risk(text: str) -> None:
    assert not screen(text).auto_escalate, screen(text)


def test_a_court_threat_still_escalates() -> None:
    result = screen("Pay the refund this week or I'll see you in court, whatever your terms say.")
    assert result.auto_escalate and result.category == "legal_threat"


# --------------------------------------------------------------------------- an account ask


def test_shut_the_old_one_down_asks_for_an_account_action() -> None:
    ticket = Ticket(
        "R8-3",
        "Two teams",
        "We have an old team and a new team by accident. Please copy the contacts into the new "
        "team and then close the old one down so nobody uses it.",
    )
    decided = Classifier().classify(ticket, default_screen()(ticket))
    assert decided.bucket is Bucket.NEEDS_HUMAN and decided.reason_code == "account_specific"


def test_asking_the_steps_before_deciding_is_a_how_to() -> None:
    """The account rule leaves a how-to to the request model; the how-to is not a request."""
    ticket = Ticket(
        "R8-4",
        "Closing my shop account",
        "How would I close my shop account for good? I'd like to know what happens to my "
        "listings and ratings before we make up our minds.",
    )
    decided = Classifier().classify(ticket, default_screen()(ticket))
    assert decided.reason_code != "account_specific" or decided.decided_by != "rules", decided
