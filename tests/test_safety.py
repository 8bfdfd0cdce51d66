"""The safety gate: rule table, priority, word boundaries and the false positives it must avoid."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from supportagent.agent.safety import (
    GENERAL_INQUIRY,
    MAX_MATCHED_TEXT,
    SEVERITIES,
    SafetyRule,
    load_rules,
    screen,
)

CATEGORY_ORDER = [
    "self_harm_risk",
    "security_incident",
    "legal_threat",
    "payment_fraud",
    "service_outage",
    "billing_question",
    "account_access",
]

POSITIVES = {
    "self_harm_risk": [
        "Honestly I just want to die, nothing works",
        "I'm going to kill myself if this keeps happening",
        "I feel like ending my life",
        "I keep thinking about suicide",
        "there's no reason to live anymore",
        "I want to hurt myself",
        "I don't want to be alive",
    ],
    "security_incident": [
        "I think my API key was leaked",
        "Our secret token may have been exposed in a log file",
        "We accidentally committed our secret key to a public GitHub repo",
        "We leaked our API key in a screenshot",
        "I lost my phone with the 2FA codes",
        "My account was hacked last night",
        "I believe we got hacked",
        "The workspace has been compromised",
        "There was unauthorized access to our dashboard",
        "Someone logged into my account from an unknown location",
        "Is this a data breach? Customer numbers showed up online",
        "We received a phishing email pretending to be your support team",
        "Someone is impersonating your company in emails to our staff",
    ],
    "legal_threat": [
        "I'm going to sue you",
        "My lawyer will be in touch",
        "We are preparing a lawsuit",
        "We will take legal action if this is not fixed",
        "See you in court",
        "I will file a complaint with the data protection authority about this",
        "This is a cease and desist notice",
        "Our attorneys have been informed",
    ],
    "payment_fraud": [
        "Someone used a stolen card to pay for an account",
        "There are fraudulent charges on my card from you",
        "I see unauthorized charges on our company card",
        "I never authorized these payments",
        "We're seeing card testing on our checkout",
        "This looks like chargeback fraud",
    ],
    "service_outage": [
        "The API is down",
        "Is the dashboard down?",
        "We're getting 503s for everyone",
        "All requests are failing since 09:00",
        "Is there an outage?",
        "Your status page says all green but nothing is working",
        "No webhooks since 10:40 UTC. Are you having an incident?",
        "The dashboard just spins forever when we open Logs",
    ],
    "billing_question": [
        "Where can I download my invoice?",
        "Why was I charged this month?",
        "Can I get a refund?",
        "Do you add VAT for EU customers?",
        "How do I change my payment method?",
        "What are your prices?",
    ],
    "account_access": [
        "I can't log in",
        "I'm locked out of the dashboard",
        "My phone with the authenticator app on it is gone, how do I sign in?",
        "The password reset email never arrives",
        "How do I set up SSO with Okta?",
        "unable to sign in with my work email",
    ],
}

NEGATIVES = [
    # "kill" and "die" about processes, not people
    "How do I kill the process that hangs?",
    "The worker was killed by the OOM killer",
    "We killed the worker and restarted it",
    "The connection dies after 30 seconds",
    # security words used about features and precautions
    "Do you support security headers like HSTS?",
    "How do I rotate keys as a precaution?",
    "What is the best way to store an API key securely?",
    "Our team won the hackathon using your API",
    "I hacked together a quick script to test the endpoint",
    "There was no data breach, I am just asking about encryption at rest",
    "Our account was not hacked, we only want to review who has access",
    # word boundaries around short legal words
    "I have an issue with the search endpoint",
    "We want to pursue the integration further",
    # fraud-prevention questions are not fraud
    "fraud detection API question: which score should we use?",
    # plain questions
    "How do I paginate results?",
]


@pytest.mark.parametrize(
    ("category", "text"),
    [(category, text) for category, texts in POSITIVES.items() for text in texts],
)
def test_each_category_matches_its_phrasings(category: str, text: str) -> None:
    result = screen(text)
    assert result.category == category, result
    assert result.matched_rule is not None
    assert result.matched_text
    assert result.matched_text.lower() in " ".join(text.split()).lower().replace("\u2019", "'")


@pytest.mark.parametrize("text", NEGATIVES)
def test_false_positives_do_not_escalate(text: str) -> None:
    result = screen(text)
    assert not result.auto_escalate, result
    assert result.category not in {"self_harm_risk", "security_incident", "legal_threat"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My API key was leaked and I will sue you", "security_incident"),
        ("I will sue you over these fraudulent charges", "legal_threat"),
        ("The API is down and I want a refund", "service_outage"),
        ("I can't log in to download my invoice", "billing_question"),
        ("My account was hacked and I want to end my life", "self_harm_risk"),
        ("Stolen card used and the API is down", "payment_fraud"),
    ],
)
def test_first_rule_in_table_order_wins(text: str, expected: str) -> None:
    assert screen(text).category == expected


def test_rule_table_is_in_the_documented_priority_order() -> None:
    # A category may have several rules; they sit together, in the documented order.
    categories = [rule.category for rule in load_rules()]
    assert list(dict.fromkeys(categories)) == CATEGORY_ORDER
    assert categories == sorted(categories, key=CATEGORY_ORDER.index)


@pytest.mark.parametrize(
    ("category", "severity", "escalates", "reason_code"),
    [
        ("self_harm_risk", "critical", True, "safety_self_harm"),
        ("security_incident", "critical", True, "safety_security_incident"),
        ("legal_threat", "high", True, "safety_legal_threat"),
        ("payment_fraud", "high", True, "safety_payment_fraud"),
        ("service_outage", "high", False, "service_outage"),
        ("billing_question", "low", False, "billing_question"),
        ("account_access", "medium", False, "account_access"),
    ],
)
def test_each_rule_carries_severity_escalation_and_reason(
    category: str, severity: str, escalates: bool, reason_code: str
) -> None:
    result = screen(POSITIVES[category][0])
    assert (result.category, result.severity) == (category, severity)
    assert result.auto_escalate is escalates
    assert result.reason_code == reason_code


def test_default_is_general_inquiry() -> None:
    result = screen("How do I paginate through the messages list?")
    assert result == GENERAL_INQUIRY
    assert (result.category, result.severity, result.auto_escalate) == (
        "general_inquiry",
        "low",
        False,
    )
    assert result.reason_code == "general_inquiry"
    assert result.matched_rule is None and result.matched_text is None
    assert screen("") == GENERAL_INQUIRY


@pytest.mark.parametrize("text", ["I'M GOING TO SUE YOU", "my api KEY was LEAKED", "Suicide"])
def test_matching_ignores_case(text: str) -> None:
    assert screen(text).auto_escalate


@pytest.mark.parametrize(
    ("text", "escalates"),
    [
        ("we will sue", True),
        ("an issue with webhooks", False),
        ("we pursue growth", False),
        ("Sue from accounting asked about invoices", True),  # a name: caught, on purpose
        ("hackers got into our account", True),
        ("the hackathon starts today", False),
        ("our fraudulent-looking test data", False),
    ],
)
def test_word_boundaries(text: str, escalates: bool) -> None:
    assert screen(text).auto_escalate is escalates


def test_curly_apostrophes_are_understood() -> None:
    assert screen("I can\u2019t log in").category == "account_access"
    assert screen("I don\u2019t want to live").category == "self_harm_risk"


def test_self_harm_is_never_skipped_as_negated() -> None:
    assert screen("I'm not ok, I want to die").category == "self_harm_risk"


def test_negation_is_scoped_to_its_clause() -> None:
    assert screen("No idea how, but our account was hacked").category == "security_incident"
    assert screen("We have no data breach to report").category != "security_incident"


def test_matched_text_is_clipped() -> None:
    text = "we leaked " + "very " * 40 + "secret tokens"
    rules = (
        SafetyRule(
            name="long",
            category="security_incident",
            severity="critical",
            auto_escalate=True,
            reason_code="safety_security_incident",
            patterns=(re.compile(r"leaked.*tokens", re.IGNORECASE),),
        ),
    )
    result = screen(text, rules)
    assert result.matched_rule == "long"
    assert result.matched_text is not None
    assert len(result.matched_text) <= MAX_MATCHED_TEXT


def test_custom_rule_sequence_is_used() -> None:
    rules = load_rules()
    only_billing = [rule for rule in rules if rule.category == "billing_question"]
    assert screen("My API key was leaked, where is my invoice?", only_billing).category == (
        "billing_question"
    )
    assert screen("My API key was leaked", []) == GENERAL_INQUIRY


# --------------------------------------------------------------------------- the rule file


def test_packaged_rules_load_with_required_fields() -> None:
    rules = load_rules()
    assert {rule.category for rule in rules} == set(CATEGORY_ORDER)
    assert len({rule.name for rule in rules}) == len(rules)
    for rule in rules:
        assert rule.name and rule.category and rule.reason_code
        assert rule.severity in SEVERITIES
        assert isinstance(rule.auto_escalate, bool)
        facets = rule.together.facets if rule.together else ()
        assert rule.patterns or len(facets) >= 2
        every = [*rule.patterns, *(p for facet in facets for p in facet.patterns)]
        assert all(isinstance(p, re.Pattern) and p.flags & re.IGNORECASE for p in every)


def test_default_rules_are_cached() -> None:
    assert load_rules() is load_rules()


GOOD_RULE = """
[[rule]]
name = "{name}"
category = "legal_threat"
severity = "{severity}"
auto_escalate = true
reason_code = "safety_legal_threat"
patterns = ['{pattern}']
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rules.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_rule_file_from_a_path(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        GOOD_RULE.format(name="threat", severity="high", pattern=r"small\s+claims")
        + '\nphrases = ["see you in court"]\n',
    )
    rules = load_rules(path)
    assert [rule.name for rule in rules] == ["threat"]
    assert screen("Small   claims it is", rules).matched_rule == "threat"
    assert screen("fine, SEE YOU IN\nCOURT", rules).matched_text == "SEE YOU IN COURT"
    assert screen("no small claimsx here", rules) == GENERAL_INQUIRY


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (GOOD_RULE.format(name="bad_sev", severity="urgent", pattern="x"), "unknown severity"),
        (GOOD_RULE.format(name="bad_regex", severity="high", pattern="(unclosed"), "bad regex"),
        (
            GOOD_RULE.format(name="no_reason", severity="high", pattern="x").replace(
                'reason_code = "safety_legal_threat"\n', ""
            ),
            "missing field 'reason_code'",
        ),
        (
            GOOD_RULE.format(name="no_patterns", severity="high", pattern="x").replace(
                "patterns = ['x']\n", ""
            ),
            "missing field 'patterns'",
        ),
        (
            GOOD_RULE.format(name="bad_flag", severity="high", pattern="x").replace(
                "auto_escalate = true", 'auto_escalate = "yes"'
            ),
            "'auto_escalate' must be a bool",
        ),
    ],
)
def test_bad_rule_file_names_file_and_rule(tmp_path: Path, text: str, expected: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ValueError) as caught:
        load_rules(path)
    message = str(caught.value)
    assert str(path) in message
    assert expected in message
    name = re.search(r'name = "(\w+)"', text)
    assert name is not None and name.group(1) in message


def test_rule_without_name_is_reported_by_position(tmp_path: Path) -> None:
    text = GOOD_RULE.format(name="ok", severity="low", pattern="x") + '\n[[rule]]\ncategory = "x"\n'
    with pytest.raises(ValueError, match=r"rule #2: missing field 'name'"):
        load_rules(_write(tmp_path, text))


def test_duplicate_names_and_broken_toml_are_rejected(tmp_path: Path) -> None:
    rule = GOOD_RULE.format(name="twice", severity="low", pattern="x")
    with pytest.raises(ValueError, match="'twice' is defined twice"):
        load_rules(_write(tmp_path, rule + rule))
    with pytest.raises(ValueError, match="not valid TOML"):
        load_rules(_write(tmp_path, "[[rule]\nname = "))
    with pytest.raises(ValueError, match="cannot read"):
        load_rules(tmp_path / "missing.toml")
