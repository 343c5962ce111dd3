"""The maintenance tables a sweep writes, each by the sweep alone: fact_status, reports, audit, fact_edges.

A sweep's id is its kind and as_of (`consolidation-2026-11-25T03:00:00Z`): a sweep run again at the same
as_of replaces its own rows with the same rows, so it changes nothing. The audit records each state change
against the latest earlier sweep of the same kind (an episode's, against its latest audit row): the old and
new value, why, and the sweep id.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import polars as pl

from memlake.lake import Lake
from memlake.schemas import AUDIT, FACT_STATUS, REPORTS, SWEEP_EDGES


def sweep_id(kind: str, as_of: datetime) -> str:
    return f"{kind}-{as_of.astimezone(UTC):%Y-%m-%dT%H:%M:%S.%fZ}"


def _replace_sweep(lake: Lake, table: Any, sweep: str, rows: pl.DataFrame) -> None:
    """The table with `sweep`'s rows replaced by `rows` (the table is written whole, atomically)."""
    kept = lake.read(table).filter(pl.col("sweep_id") != sweep)
    lake.write(table, pl.concat([kept, rows.select(kept.columns).cast(kept.schema)]))


def previous_sweep(lake: Lake, kind: str, as_of: datetime) -> pl.DataFrame:
    """The fact_status rows of the latest sweep of `kind` before `as_of` (per agent)."""
    rows = lake.read(FACT_STATUS).filter((pl.col("kind") == kind) & (pl.col("as_of") < as_of))
    if rows.height == 0:
        return rows
    latest = rows.group_by("agent_id").agg(pl.col("as_of").max())
    return rows.join(latest, on=["agent_id", "as_of"], how="semi")


def fact_audit(rows: pl.DataFrame, before: pl.DataFrame, sweep: str, as_of: datetime) -> pl.DataFrame:
    """One audit row per status or flag that differs from the earlier sweep's (else from the facts table)."""
    old = before.select("fact_id", "version", pl.col("status").alias("_old_status"), pl.col("flag").alias("_old_flag"))
    joined = rows.join(old, on=["fact_id", "version"], how="left").with_columns(
        pl.coalesce("_old_status", "base_status").alias("_old_status"))
    object_id = pl.col("fact_id") + "@" + pl.col("version").cast(pl.String)
    changes = []
    for field, old_column in (("status", "_old_status"), ("flag", "_old_flag")):
        changed = joined.filter(pl.col(field).eq_missing(pl.col(old_column)).not_())
        changes.append(changed.select(
            pl.lit(sweep).alias("sweep_id"), pl.lit(as_of).alias("at"), "agent_id",
            pl.lit("fact").alias("object_kind"), object_id.alias("object_id"), pl.lit(field).alias("field"),
            pl.col(old_column).alias("old_value"), pl.col(field).alias("new_value"),
            pl.coalesce("reason", pl.lit("no longer flagged")).alias("reason")))
    return pl.concat(changes)


def episode_audit(lake: Lake, changes: list[dict[str, Any]], sweep: str, as_of: datetime) -> pl.DataFrame:
    """One audit row per episode whose state differs from its latest audit row written before this sweep."""
    earlier = lake.read(AUDIT).filter((pl.col("object_kind") == "episode") & (pl.col("sweep_id") != sweep)
                                      & (pl.col("at") <= as_of))
    last = {(a, o): v for a, o, v in earlier.sort("at", "sweep_id").select("agent_id", "object_id", "new_value")
            .iter_rows()}
    rows = [{"sweep_id": sweep, "at": as_of, "agent_id": c["agent_id"], "object_kind": "episode",
             "object_id": c["conversation_id"], "field": "status", "old_value": last.get(key),
             "new_value": c["new_value"], "reason": c["reason"]}
            for c in changes if last.get(key := (c["agent_id"], c["conversation_id"])) != c["new_value"]]
    return pl.DataFrame(rows, schema=dict(Lake.empty(AUDIT).schema))


def write_sweep(lake: Lake, kind: str, as_of: datetime, facts: pl.DataFrame, episode_changes: list[dict[str, Any]],
                counts: dict[str, int], durations: dict[str, float], judge: str | None,
                edges: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Write a sweep's rows to its tables (a lint sweep's `edges` too); returns its report row."""
    sweep = sweep_id(kind, as_of)
    audit = pl.concat([fact_audit(facts, previous_sweep(lake, kind, as_of), sweep, as_of),
                       episode_audit(lake, episode_changes, sweep, as_of)], how="vertical_relaxed")
    counts = {**counts, "audited_changes": audit.height}
    report = {"sweep_id": sweep, "kind": kind, "as_of": as_of,
              "agents": facts["agent_id"].n_unique() if facts.height else 0,
              "counts": json.dumps(counts, sort_keys=True), "durations": json.dumps(durations, sort_keys=True),
              "judge": judge, "ran_at": datetime.now(UTC)}
    status = facts.with_columns(pl.lit(sweep).alias("sweep_id"), pl.lit(kind).alias("kind"),
                                pl.lit(as_of).alias("as_of"))
    if "related_fact_ids" not in status.columns:
        status = status.with_columns(pl.lit(None, dtype=pl.List(pl.String)).alias("related_fact_ids"))
    _replace_sweep(lake, AUDIT, sweep, audit.sort("agent_id", "object_kind", "object_id", "field"))
    _replace_sweep(lake, REPORTS, sweep, pl.DataFrame([report], schema=dict(Lake.empty(REPORTS).schema)))
    if edges is not None:
        rows = [{"sweep_id": sweep, "as_of": as_of, **edge} for edge in edges]
        _replace_sweep(lake, SWEEP_EDGES, sweep, pl.DataFrame(rows, schema=dict(Lake.empty(SWEEP_EDGES).schema)))
    _replace_sweep(lake, FACT_STATUS, sweep, status)
    return report
