"""Every rule of the packaged rule tables carries examples, and its examples hold.

Each row of `safety_rules.toml`, `classifier_rules.toml` and `planted_rules.toml` lists texts it
must match (`examples`) and texts it must not (`not_examples`), read as the gate, the classifier
and the document screen read text (canonical form; code blanked, except for the injection rules,
which read code too). A rule change that breaks one fails here.
"""

from __future__ import annotations

import pytest

from supportagent.agent.safety import SafetyRule, load_rules, rule_view
from supportagent.engines.classifier import ClassifierRule, load_classifier_rules
from supportagent.planted import PlantedRule
from supportagent.planted import load_rules as load_planted_rules
from supportagent.textnorm import canonical, prose

SAFETY = load_rules()
CLASSIFIER = load_classifier_rules()
PLANTED = load_planted_rules()


@pytest.mark.parametrize("rule", [*SAFETY, *CLASSIFIER, *PLANTED], ids=lambda r: r.name)
def test_every_rule_has_examples_both_ways(rule: SafetyRule | ClassifierRule | PlantedRule) -> None:
    assert rule.examples, f"rule {rule.name!r} has no examples"
    assert rule.not_examples, f"rule {rule.name!r} has no not_examples"


@pytest.mark.parametrize("rule", SAFETY, ids=lambda r: r.name)
def test_safety_rule_examples(rule: SafetyRule) -> None:
    for text in rule.examples:
        assert rule.find(rule_view(text)) is not None, f"{rule.name} misses {text!r}"
    for text in rule.not_examples:
        assert rule.find(rule_view(text)) is None, f"{rule.name} fires on {text!r}"


@pytest.mark.parametrize("rule", CLASSIFIER, ids=lambda r: r.name)
def test_classifier_rule_examples(rule: ClassifierRule) -> None:
    # As classify_by_rules reads them: injections in full (code too), the rest as prose.
    view = canonical if rule.reason_code == "prompt_injection" else prose
    for text in rule.examples:
        assert rule.find(view(text)) is not None, f"{rule.name} misses {text!r}"
    for text in rule.not_examples:
        assert rule.find(view(text)) is None, f"{rule.name} fires on {text!r}"


@pytest.mark.parametrize("rule", PLANTED, ids=lambda r: r.name)
def test_planted_rule_examples(rule: PlantedRule) -> None:
    for text in rule.examples:
        assert rule.find(canonical(text)) is not None, f"{rule.name} misses {text!r}"
    for text in rule.not_examples:
        assert rule.find(canonical(text)) is None, f"{rule.name} fires on {text!r}"


@pytest.mark.parametrize(
    "text",
    [
        "How do I call `py_function(in_tensor)` from the SDK?",
        "Running the script:\n\n```\nsub_payload = build(ch_hello_world)\n```\nwhat is wrong?",
        "The value of in_tensor and re_fetch_interval are both documented?",
    ],
)
def test_identifiers_inside_code_fire_no_classifier_rule(text: str) -> None:
    for rule in CLASSIFIER:
        if rule.reason_code in {"money_specific", "account_specific"}:
            assert rule.find(prose(text)) is None, f"{rule.name} fires on code in {text!r}"
