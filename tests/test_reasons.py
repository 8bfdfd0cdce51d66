"""The reason-code table: every code the source can stage has a sentence and a next step."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import get_args

import pytest

from supportagent import reasons
from supportagent.domain import Status
from supportagent.engines.classifier import RULE_BUCKETS
from supportagent.engines.llm import REASON_CODES, ProblemOut
from supportagent.errors import UserError

SRC = Path(reasons.__file__).parent
#: Where reason codes come from (the brief's list): the agent, engines, model layer, review.
SOURCE_DIRS = ("agent", "engines", "llm")
SOURCE_FILES = ("review.py", "scheduler.py", "errors.py", "escalation.py")
#: Ways a code is written in Python: a Problem, a Classification, a staged outcome, a
#: ModelError (or subclass) keyword, a class attribute.
PATTERNS = (
    re.compile(r"Problem\(\s*\"([a-z_]+)\""),
    re.compile(r"Classification\(\s*Bucket\.\w+,\s*\"([a-z_]+)\""),
    re.compile(r"stage\(\s*Status\.\w+,\s*\"([a-z_]+)\""),
    re.compile(r"reason_code\s*(?::\s*\w+\s*)?=\s*\"([a-z_]+)\""),
)


def python_sources() -> list[Path]:
    files = [p for d in SOURCE_DIRS for p in (SRC / d).rglob("*.py")]
    return files + [SRC / f for f in SOURCE_FILES if (SRC / f).exists()]


def codes_in_source() -> dict[str, str]:
    """Every reason code written in the source, with where it was found."""
    found: dict[str, str] = {}
    for path in python_sources():
        text = path.read_text(encoding="utf-8")
        for pattern in PATTERNS:
            for match in pattern.finditer(text):
                found.setdefault(match.group(1), str(path.relative_to(SRC)))
    for path in (p for d in SOURCE_DIRS for p in (SRC / d).rglob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        for entries in data.values():
            for entry in entries if isinstance(entries, list) else []:
                if isinstance(entry, dict) and "reason_code" in entry:
                    found.setdefault(entry["reason_code"], str(path.relative_to(SRC)))
    for code in (
        *RULE_BUCKETS,
        *REASON_CODES,
        *get_args(ProblemOut.model_fields["code"].annotation),
    ):
        found.setdefault(code, "engines")
    return found


def test_the_scan_finds_codes_of_every_kind() -> None:
    found = codes_in_source()
    # one of each way of writing a code, so that a broken pattern cannot pass silently
    for code in (
        "safety_self_harm",  # safety_rules.toml
        "money_specific",  # classifier rules
        "empty_ticket",  # Classification(...)
        "weak_evidence",  # stage(Status..., "...")
        "uncited_sentence",  # Problem("...")
        "budget_exhausted",  # reason_code="..."
        "incomplete_answer",  # the model checker's Literal
    ):
        assert code in found, code


def test_every_reason_code_in_the_source_has_a_row() -> None:
    missing = {
        code: where
        for code, where in codes_in_source().items()
        if code not in reasons.known_codes()
    }
    assert not missing, f"add rows to reasons.toml for: {missing}"


def test_codes_other_helpers_are_adding_have_rows_already() -> None:
    for code in ("uncertain", "language_unsupported", "conflicting_evidence", "model_timeout"):
        assert reasons.explain(code).known, code


def test_every_status_has_words() -> None:
    for status in Status:
        assert reasons.describe_status(status.value).sentence, status


def test_explain_gives_a_sentence_a_next_step_and_where_a_routed_ticket_goes() -> None:
    bug = reasons.explain("bug_report")
    assert bug.sentence.endswith(".") and bug.next_step and bug.destination == "engineering"
    assert reasons.explain("weak_evidence").destination is None
    assert reasons.pinned_codes() >= {"safety_self_harm", "safety_security_incident"}
    assert "Routed to engineering." in reasons.one_line("bug_report")
    unknown = reasons.explain("brand_new_code")
    assert not unknown.known and unknown.label == "brand new code"


def test_a_team_overrides_the_routing_table_from_the_data_home(tmp_path: Path) -> None:
    (tmp_path / "routing.toml").write_text('[routing]\nbug_report = "platform team"\n')
    routing = reasons.load_routing(tmp_path)
    assert routing["bug_report"] == "platform team"
    assert routing["feature_request"] == "product"  # the rest stays
    assert reasons.explain("bug_report", routing).destination == "platform team"
    (tmp_path / "routing.toml").write_text("[routing]\nbug_report = 3\n")
    with pytest.raises(UserError, match="team names"):
        reasons.load_routing(tmp_path)
    (tmp_path / "routing.toml").write_text("[routing\n")
    with pytest.raises(UserError, match="not valid TOML"):
        reasons.load_routing(tmp_path)
