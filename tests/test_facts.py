"""Facts and conflicts: one subject, two values, however the two sources word it."""

from __future__ import annotations

from decimal import Decimal

import pytest

from drafting import resolved
from supportagent.agent.facts import extract_facts, find_conflicts, quantities, role_of
from supportagent.agent.grounding import check_grounding, exception_flags
from supportagent.domain import DocKind, Draft, DraftSentence, Passage

RULE = Passage(
    "kb-idem#keys",
    "kb-idem",
    DocKind.KB,
    "Idempotency keys",
    ("How long keys are kept",),
    "You send the key in the Idempotency-Key header. Acme remembers an idempotency key for "
    "24 hours. A request with an older key is treated as new.",
)


LINKS = {"RT-1": ("kb-idem",), "RT-2": ("kb-idem",), "RT-3": ("kb-idem",), "RT-4": ("kb-idem",)}


def links(doc_id: str) -> tuple[str, ...]:
    return LINKS.get(doc_id, ())


@pytest.mark.parametrize(
    "other",
    [
        # Three wordings of "keys are kept for longer", none sharing the rule's phrasing.
        resolved(
            "RT-1",
            "How long is an idempotency key valid?",
            "An idempotency key stays valid for 48 hours, after which a retry is a new message.",
        ),
        resolved(
            "RT-2",
            "Retrying a send the next day: will the key still work?",
            "Keys sent in that header are kept for two days, so a retry tomorrow is still safe.",
        ),
        resolved(
            "RT-3",
            "Do keys last longer than a day?",
            "Yes: the header's value is honoured for 72 hours on every plan.",
        ),
    ],
    ids=["48-hours", "two-days", "72-hours-every-plan"],
)
def test_conflicts_worded_differently_are_found_and_escalate(other: Passage) -> None:
    conflicts = find_conflicts(extract_facts([RULE, other]), links=links)
    assert [c.kind for c in conflicts] == ["contradiction"]
    assert {c.general.doc_id for c in conflicts} | {c.specific.doc_id for c in conflicts} == {
        "kb-idem",
        other.doc_id,
    }
    # A draft stating either side alone escalates, quoting both passages.
    for side in conflicts[0].sides:
        draft = Draft((DraftSentence(side.sentence, (side.passage_id,)),), 0.9)
        verdict = check_grounding(draft, [RULE, other], conflicts=conflicts)
        assert [p.code for p in verdict.problems] == ["conflicting_evidence"]
        message = verdict.problems[0].message
        assert RULE.id in message or other.id in message
        assert conflicts[0].general.quantity.raw in message
        assert conflicts[0].specific.quantity.raw in message


def test_a_scoped_exception_is_drafted_citing_both_and_flagged() -> None:
    batch = resolved(
        "RT-4",
        "Longer idempotency window for batch sends?",
        "For POST /v2/batch, the idempotency key is remembered for 72 hours.",
    )
    conflicts = find_conflicts(extract_facts([RULE, batch]), links=links)
    assert [(c.kind, c.general.doc_id, c.specific.doc_id) for c in conflicts] == [
        ("exception", "kb-idem", "RT-4")
    ]
    assert conflicts[0].specific.scope == ("endpoint:/v2/batch",)
    one_sided = Draft((DraftSentence(conflicts[0].specific.sentence, (batch.id,)),), 0.9)
    verdict = check_grounding(one_sided, [RULE, batch], conflicts=conflicts)
    assert [p.code for p in verdict.problems] == ["one_sided_exception"]
    both = Draft(
        (
            DraftSentence(conflicts[0].specific.sentence, (batch.id,)),
            DraftSentence(conflicts[0].general.sentence, (RULE.id,)),
        ),
        0.9,
    )
    assert check_grounding(both, [RULE, batch], conflicts=conflicts).passed
    assert exception_flags(both, conflicts) == ("scoped_exception",)


@pytest.mark.parametrize(
    "text",
    [
        "Message logs are kept for 30 days.",  # another subject
        "Your endpoint must answer within 10 seconds.",  # a deadline, not a span
        "Acme remembers an idempotency key for 1 day.",  # the same value in other units
        "Keys are kept for 24 hours on Free and 72 hours on Pro.",  # the rule is stated too
    ],
)
def test_no_conflict_without_one_subject_and_two_values(text: str) -> None:
    other = resolved("RT-1", "A question about keys and logs", text)
    assert find_conflicts(extract_facts([RULE, other]), links=links) == []


def test_a_knowledge_base_agrees_with_itself_across_sections() -> None:
    a = Passage(
        "kb-a#x",
        "kb-a",
        DocKind.KB,
        "Webhook retries",
        ("Schedule",),
        "A failed event is retried up to 8 times.",
    )
    b = Passage(
        "kb-b#y",
        "kb-b",
        DocKind.KB,
        "SDK retries",
        ("Defaults",),
        "Every SDK retries a failed request up to 2 times.",
    )
    assert find_conflicts(extract_facts([a, b])) == []


def test_quantities_and_roles() -> None:
    [q] = quantities("Keys are kept for two days.")
    assert (q.value, q.unit, q.base_value) == (Decimal(2), "day", Decimal(172800))
    assert [x.raw for x in quantities("It is sent again three more times, once a month.")] == [
        "three more times"
    ]
    assert quantities("a second key") == []
    [gap] = quantities("sent again, an hour apart")
    assert role_of("sent again, an hour apart", gap) == "interval"
