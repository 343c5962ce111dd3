"""Maintenance layer: the consolidation and lint sweeps, and memory-health checks.

One multi-asset writes the layer's tables (each has this one writer): run as `kind: consolidation` by the
daily schedule, as `kind: lint` by the nightly one, or on demand from the UI's launchpad or `memlake maintain`.
The kind has no default: "Materialize" in the UI opens the launchpad asking for it, so nobody who wanted lint
gets an eviction.
`as_of` is the time the sweep is computed as of (the schedule's tick; empty: now), so a sweep again at the
same as_of writes the same rows.
"""

from datetime import UTC, datetime
from typing import Any

import dagster as dg
import polars as pl
from dagster._config import ConfigScalar, ConfigScalarKind
from dagster._config.errors import PostProcessingError

from assets.episodes import EPISODES_KEY
from assets.facts import FACTS_KEY
from assets.inputs import ACCESS_LOG
from assets.shared import LAKE_WRITERS, markdown_preview
from assets.transcripts import turns
from memlake.maintenance.health import MAX_DUPLICATE_RATE, MAX_HOURS_WITHOUT_SWEEP, MAX_STALE_SHARE, memory_health
from memlake.maintenance.judge import ModelJudge
from memlake.maintenance.sweep import run_sweep
from memlake.moments import as_utc
from memlake.schemas import SWEEP_KINDS
from resources import CoreModelResource
from resources.embedder import EmbedderResource
from resources.lake import LakeResource

FACT_STATUS_KEY = dg.AssetKey(["maintenance", "fact_status"])
REPORTS_KEY = dg.AssetKey(["maintenance", "reports"])
AUDIT_KEY = dg.AssetKey(["maintenance", "audit"])
# The lake table maintenance/fact_edges; named apart from facts/fact_edges, as the UI labels a node by its last part.
SWEEP_EDGES_KEY = dg.AssetKey(["maintenance", "contradictions"])
SWEEP_OP = "maintenance_sweep"


class _Moment(ConfigScalar):
    """An ISO 8601 time or date, or empty (now), checked when the run's config is (Dagster's post-processing step,
    the way its env-var strings are resolved), so a bad `as_of` typed in the launchpad is refused at launch,
    naming the field and the value, instead of starting a run that fails in its step (issue 40). Dagster's config
    types are not public API: tests/pipelines/test_maintenance.py shows the refusal, should an upgrade move them."""

    def __init__(self) -> None:
        super().__init__(key="MemlakeMoment", given_name="MemlakeMoment", scalar_kind=ConfigScalarKind.STRING,
                         description="ISO 8601 time or date (2024-05-01, 2024-05-01T10:00:00Z); empty = now")

    def post_process(self, value: str) -> str:
        if value.strip():
            try:
                as_utc(value)
            except ValueError as exc:
                raise PostProcessingError(f"as_of {value!r} is not a time: {exc}") from None
        return value


# What a sweep does, as the launchpad offers it: the schema's kinds and nothing else. No default: "Materialize" in
# the UI must ask which sweep, never run an eviction for an operator who wanted lint (issue 40). Lint is offered
# first: the launchpad gives a missing field's first value as its example and "Scaffold missing config" fills it in.
_LINT_FIRST = sorted(SWEEP_KINDS, key=lambda kind: kind != "lint")
SWEEP_CONFIG = {
    "kind": dg.Field(dg.Enum("SweepKind", [dg.EnumValue(kind) for kind in _LINT_FIRST]),
                     description="consolidation (decay, evict, merge) or lint (flags only)"),
    "as_of": dg.Field(_Moment(), default_value="", description="the time the sweep is computed as of; empty = now"),
}


def _spec(key: dg.AssetKey, description: str) -> dg.AssetSpec:
    return dg.AssetSpec(key, deps=[FACTS_KEY, EPISODES_KEY, turns, ACCESS_LOG], group_name="maintenance",
                        kinds={"polars", "parquet"}, description=description)


@dg.multi_asset(
    name=SWEEP_OP,
    specs=[
        _spec(FACT_STATUS_KEY, "One row per fact version per sweep: status, flag, salience, reason."),
        _spec(REPORTS_KEY, "One row per sweep: kind, as_of, counts and durations per step."),
        _spec(AUDIT_KEY, "One row per state change a sweep made: old and new value, why, sweep id."),
        _spec(SWEEP_EDGES_KEY, "One row per judged contradiction per lint sweep: a contradict edge, newer to older."),
    ],
    pool=LAKE_WRITERS,
    config_schema=SWEEP_CONFIG,
)
def maintenance_sweep(context: dg.AssetExecutionContext, lake: LakeResource,  # type: ignore[no-untyped-def]
                      embedder: EmbedderResource, core_model: CoreModelResource):
    """One sweep (consolidation or lint) over every agent as of `as_of`, written to maintenance/*."""
    config = context.op_execution_context.op_config
    kind = config["kind"]
    as_of = as_utc(config["as_of"]) if config["as_of"].strip() else datetime.now(UTC)  # checked at launch
    embed = judge = None
    if kind == "lint":
        core = embedder.core()
        embed = core.embed if core is not None else None
        if core_model.configured:
            judge = ModelJudge(core_model.config(), batch=lake.settings.maintenance_judge_batch)
    report = run_sweep(lake.settings, kind, as_of, embed, judge)
    context.log.info(f"{report.sweep_id}: {report.counts}")
    # each table shows what is true of it: the report and its step counts on `reports`, the node the operator
    # launched a sweep from in the UI (it was on fact_status, issue 40)
    sweep = {"sweep_id": report.sweep_id, "kind": report.kind, "as_of": report.as_of.isoformat()}
    judge = report.judge or "none"  # its answers are kept in maintenance/judge_cache, the sweep's own cache
    yield dg.MaterializeResult(asset_key=FACT_STATUS_KEY, metadata={**sweep, "judge": judge})
    yield dg.MaterializeResult(asset_key=REPORTS_KEY, metadata={
        **sweep, "report": dg.MetadataValue.md(report.markdown()), "judge": judge,
        **{f"count/{k}": v for k, v in report.counts.items()}})
    yield dg.MaterializeResult(asset_key=AUDIT_KEY, metadata={**sweep,
                                                              "changes": report.counts.get("audited_changes", 0)})
    yield dg.MaterializeResult(asset_key=SWEEP_EDGES_KEY, metadata={
        **sweep, "contradictions": report.counts.get("contradictions", 0)})


def _check(passed: bool, what: str, named: dict[str, Any] | None = None, **values: float | int | None
           ) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=passed, severity=dg.AssetCheckSeverity.WARN, description=what,
                               metadata={**{k: v for k, v in values.items() if v is not None}, **(named or {})})


@dg.asset_check(asset=FACT_STATUS_KEY, description="Current facts the latest lint sweep found in conflict, named.")
def open_contradictions(lake: LakeResource) -> dg.AssetCheckResult:
    health = memory_health(lake.lake, datetime.now(UTC))
    named = "; ".join(f"{row['fact_id']}: {row['content']}" for row in health.conflicting)
    return _check(health.open_contradictions == 0,
                  f"{health.open_contradictions} conflicting current facts" + (f": {named}" if named else ""),
                  {"conflicting": dg.MetadataValue.json(health.conflicting),  # which: the operator opens their
                   "preview": markdown_preview(pl.DataFrame(health.conflicting))},  # histories from here
                  open_contradictions=health.open_contradictions, current_facts=health.current_facts)


@dg.asset_check(asset=FACT_STATUS_KEY, description=f"Share of current facts redundant (at most {MAX_DUPLICATE_RATE}).")
def duplicate_rate(lake: LakeResource) -> dg.AssetCheckResult:
    health = memory_health(lake.lake, datetime.now(UTC))
    return _check(health.duplicate_rate <= MAX_DUPLICATE_RATE, f"duplicate rate {health.duplicate_rate:.1%}",
                  duplicate_rate=health.duplicate_rate, current_facts=health.current_facts)


@dg.asset_check(asset=FACT_STATUS_KEY, description=f"Share of current facts stale (at most {MAX_STALE_SHARE}).")
def stale_share(lake: LakeResource) -> dg.AssetCheckResult:
    health = memory_health(lake.lake, datetime.now(UTC))
    return _check(health.stale_share <= MAX_STALE_SHARE, f"stale share {health.stale_share:.1%}",
                  stale_share=health.stale_share, current_facts=health.current_facts)


@dg.asset_check(asset=FACT_STATUS_KEY, description=f"A sweep ran in the last {MAX_HOURS_WITHOUT_SWEEP:g} hours.")
def recent_sweep(lake: LakeResource) -> dg.AssetCheckResult:
    hours = memory_health(lake.lake, datetime.now(UTC)).hours_since_sweep
    passed = hours is not None and hours <= MAX_HOURS_WITHOUT_SWEEP
    return _check(passed, "no sweep yet" if hours is None else f"last sweep {hours:.1f} h ago",
                  hours_since_sweep=hours)


ASSETS = [maintenance_sweep]
CHECKS = [open_contradictions, duplicate_rate, stale_share, recent_sweep]
