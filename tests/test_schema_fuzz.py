"""Fuzz the HTTP API from its own OpenAPI schema (schemathesis): no request gets a 5xx.

Every operation gets valid and invalid requests. Bounded on purpose: a few examples per
operation and mode keep the suite fast, and the derandomized seed keeps a failure reproducible.
"""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, given
from hypothesis import settings as budget
from hypothesis import strategies as st

from supportagent.config import Settings
from supportagent.store.store import Store
from supportagent.web.app import create_app

EXAMPLES_PER_OPERATION = 10


def fuzz(operation: schemathesis.APIOperation, statuses: set[int], failures: list[str]) -> None:
    """Send ``operation`` valid and invalid requests; note each status and every 5xx."""
    cases = st.one_of(
        operation.as_strategy(schemathesis.GenerationMode.POSITIVE),
        operation.as_strategy(schemathesis.GenerationMode.NEGATIVE),
    )

    @given(case=cases)
    @budget(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def probe(case: schemathesis.Case) -> None:
        response = case.call()
        statuses.add(response.status_code)
        if response.status_code >= 500:
            failures.append(
                f"{case.method} {case.formatted_path} -> {response.status_code}: "
                f"{response.text[:300]}"
            )

    probe()


def test_no_request_gets_a_server_error(settings: Settings, demo_store: Store) -> None:
    # schemathesis calls the app as host "testserver"; allow that name next to loopback
    app = create_app(settings, demo_store, work=False, allowed_hosts=["testserver", "127.0.0.1"])
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    operations = [result.ok() for result in schema.get_all_operations()]
    labels = {op.label for op in operations}
    assert {"POST /triage", "POST /api/tickets", "GET /api/tickets/{ticket_id}/trace"} <= labels
    failures: list[str] = []
    statuses: dict[str, set[int]] = {}
    for operation in operations:
        fuzz(operation, statuses.setdefault(operation.label, set()), failures)
    assert not failures, "\n".join(failures)
    # every operation was reached, and valid requests got past validation somewhere
    assert all(statuses[label] for label in labels)
    assert any(code < 300 for codes in statuses.values() for code in codes)
