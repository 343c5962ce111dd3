"""A bounded schemathesis run against the served OpenAPI schema: whatever fits the schema, the service answers
without a 5xx, and a refusal says why. The fuzz token's agent (dave) is one no other test reads: it may forget it
all. (Driven through schemathesis' strategies in one test: its lazy pytest fixture loader fails on pytest 9.)"""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from schemathesis.core.result import Ok

from tests.service.conftest import Served

EXAMPLES = 12  # per operation: 23 operations, about 275 requests


def test_no_request_gets_a_5xx(served: Served) -> None:
    schema = schemathesis.openapi.from_url(f"{served.url}/openapi.json")
    auth = {"Authorization": f"Bearer {served.tokens['fuzz']}"}
    failures: list[str] = []
    loaded = list(schema.get_all_operations())
    assert all(isinstance(result, Ok) for result in loaded), loaded  # the served schema is a valid one
    operations = [result.ok() for result in loaded if isinstance(result, Ok)]
    # every route is in the schema (ingest and agents also without /v1; export; forget's preview)
    assert len(operations) == 23

    for operation in operations:
        @given(case=operation.as_strategy())
        @hypothesis_settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                             suppress_health_check=list(HealthCheck))
        def answers(case) -> None:  # type: ignore[no-untyped-def]
            response = case.call(base_url=served.url, headers=auth, timeout=60)
            refused_without_reason = response.status_code >= 400 and not response.json().get("error", {}).get(
                "message")
            if response.status_code >= 500 or refused_without_reason:
                failures.append(f"{case.method} {case.path} {case.path_parameters} {case.query} {case.body!r:.300}"
                                f" -> {response.status_code} {response.text[:300]}")

        answers()
    assert not failures, "\n".join(failures[:10])
