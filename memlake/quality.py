"""Data-quality suites (Great Expectations 1.x) over lake tables.

GX validates pandas frames and imports slowly, so it is imported only when a
suite runs. Each suite is a list of expectations; `run_suite` returns whether
all passed and, for each failure, what failed and a few offending values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import polars as pl

from memlake.schemas import ROLES


@dataclass
class SuiteResult:
    success: bool
    failures: list[dict[str, Any]] = field(default_factory=list)
    evaluated: int = 0


def run_suite(frame: pl.DataFrame, name: str, build: Callable[[Any], list[Any]]) -> SuiteResult:
    """Validate `frame` against the expectations `build(gx.expectations)` returns."""
    # deferred: Great Expectations costs ~4 s to import; only a check running a suite needs it
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    batch_definition = (
        context.data_sources.add_pandas(f"{name}_source")
        .add_dataframe_asset(name)
        .add_batch_definition_whole_dataframe("whole")
    )
    suite = gx.ExpectationSuite(name=name)
    for expectation in build(gx.expectations):
        suite.add_expectation(expectation)
    batch = batch_definition.get_batch(batch_parameters={"dataframe": frame.to_pandas()})
    validation = batch.validate(suite)
    failures = []
    for r in validation.results:
        config = r.expectation_config
        if r.success or config is None:
            continue
        failures.append(
            {
                "expectation": config.type,
                "kwargs": {k: str(v) for k, v in config.kwargs.items() if k != "batch_id"},
                "unexpected_count": r.result.get("unexpected_count"),
                "examples": [str(v) for v in (r.result.get("partial_unexpected_list") or [])[:5]],
            }
        )
    return SuiteResult(success=bool(validation.success), failures=failures, evaluated=len(validation.results))


def validate_turns(frame: pl.DataFrame, now: datetime) -> SuiteResult:
    """The `transcripts/turns` suite: ids, roles, times and content are sound."""
    frame = frame.drop("day", strict=False)

    def expectations(gxe: Any) -> list[Any]:
        return [
            *(gxe.ExpectColumnValuesToNotBeNull(column=c) for c in ("agent_id", "conversation_id", "message_id")),
            gxe.ExpectColumnValuesToBeInSet(column="role", value_set=list(ROLES)),
            gxe.ExpectColumnValuesToNotBeNull(column="created_at"),
            gxe.ExpectColumnValuesToBeBetween(column="created_at", max_value=now),
            gxe.ExpectCompoundColumnsToBeUnique(column_list=["agent_id", "conversation_id", "message_id"]),
            gxe.ExpectColumnValuesToNotBeNull(column="content"),
        ]

    return run_suite(frame, "turns", expectations)
