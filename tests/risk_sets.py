"""The row contract our risk sets share (eval/risk_fresh, risk_blind2, risk_blind3, risk_tune3):
their fields, and the reasons a risk category may be given with."""

FIELDS = frozenset(
    {
        "id",
        "subject",
        "body",
        "expected_bucket",
        "expected_safety",
        "expected_reason",
        "language",
        "shape",
        "split",
        "notes",
    }
)
RISK_REASON = {
    "self_harm_risk": {"self_harm"},
    "security_incident": {"security_incident"},
    "payment_fraud": {"payment_fraud"},
    "legal_threat": {"legal_threat"},
    "money_or_account": {"money_specific", "account_specific"},
}
