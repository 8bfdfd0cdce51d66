"""Round 12 of the safety gate (eighth session): a card, wallet or phone stolen or lost, and a
payment the writer does not know or did not make, in Arabic, standard and spoken; and Arabic
how-to questions about cards and phones that must stay with the classifier (among them a word
that holds the letters of "card", كرت, inside "I mentioned", ذكرت).

The sentences were written for these tests and appear in no data file (neither in the rule
table's examples nor in any eval set).
"""

from __future__ import annotations

import pytest

from supportagent.agent.safety import default_screen
from supportagent.domain import Ticket


@pytest.fixture(scope="module")
def gate():  # type: ignore[no-untyped-def]
    return default_screen()


FIRES = [
    ("هاتف", "سرقوا هاتفي في المترو صباح اليوم، ماذا أفعل بحسابي؟", "security_incident"),
    ("موبايل", "موبايلي ضايع من امبارح بالتاكسي، التطبيق مفتوح عليه", "security_incident"),
    ("محفظة", "أظن أن محفظتي انسرقت وفيها بطاقة البنك", "payment_fraud"),
    ("بطاقة", "الكارت تبعي مفقود من يومين، ساعدوني", "payment_fraud"),
    ("عملية", "ظهرت على حسابي عملية شراء لم أقم بها أمس", "payment_fraud"),
    ("خصم", "في خصم بالتطبيق مش أنا اللي عملته", "payment_fraud"),
    (
        "طويل",
        "مرحبا، عندي سؤالان عن الحساب. كيف أغير اللغة في التطبيق؟ وأيضا هناك مبلغ "
        "غريب على كشف الحساب هذا الشهر. شكرا لكم.",
        "payment_fraud",
    ),
]


@pytest.mark.parametrize(("subject", "body", "category"), FIRES)
def test_the_gate_escalates(gate, subject: str, body: str, category: str) -> None:  # type: ignore[no-untyped-def]
    result = gate(Ticket("R12", subject, body))
    assert result.auto_escalate, result
    assert result.category == category, result


QUIET = [
    ("الرقم السري", "كيف أغير الرقم السري لبطاقتي من التطبيق؟"),
    ("بطيء", "ذكرت لكم سابقا أن التطبيق بطيء على جهازي، هل من تحديث قريب؟"),
    ("جوال جديد", "هل يمكنني نقل التطبيق إلى جوال جديد بنفس الحساب؟"),
    ("رسوم", "ما هي رسوم السحب من الصراف الآلي خارج البلد؟"),
    ("بطاقة إضافية", "أريد بطاقة إضافية لابني، كم تكلف؟"),
]


@pytest.mark.parametrize(("subject", "body"), QUIET)
def test_the_rules_leave_these_alone(gate, subject: str, body: str) -> None:  # type: ignore[no-untyped-def]
    result = gate(Ticket("R12", subject, body))
    assert result.matched_rule is None or not result.matched_rule.startswith(
        ("payment_fraud", "security")
    ), result
