"""The one join of the maintenance sweeps onto the facts a read sees (`memlake.facts.reads` calls it).

The latest consolidation sweep of an agent says which active fact versions are evicted (or pruned); the latest
lint sweep flags facts (stale, redundant, conflicting) and, under the `supersede` contradiction policy, marks
the older side of a judged contradiction superseded. A read gets three columns more: `sweep_flag`,
`sweep_note` (what the read path shows, e.g. "conflicting: …") and `swept_at` (the as_of of the sweep that
changed the status, so a read as of an earlier time still sees the fact). The latest lint sweep's `contradict`
edges (`maintenance/fact_edges`) give every version a `conflicts` column: the versions a judge found it in
conflict with ("with f_… v1: <content> (<judge>: <reason>)"), on both sides, whatever the policy.
"""

from __future__ import annotations

import polars as pl

from memlake.lake import Lake
from memlake.schemas import FACT_STATUS, SWEEP_EDGES, SWEEP_KINDS

SWEEP_COLUMNS: dict[str, pl.DataType] = {"sweep_flag": pl.String(), "sweep_note": pl.String(),
                                         "swept_at": pl.Datetime("us", "UTC")}
# statuses a sweep may give an active fact
SWEPT_STATUSES = ("evicted", "superseded")


def latest_fact_status(lake: Lake, agent_id: str | None = None) -> pl.DataFrame:
    """The rows of each agent's latest sweep of each kind (latest as_of, then sweep id)."""
    rows = lake.read(FACT_STATUS)
    if agent_id is not None:
        rows = rows.filter(pl.col("agent_id") == agent_id)
    if rows.height == 0:
        return rows
    latest = (rows.select("agent_id", "kind", "as_of", "sweep_id").unique()
              .sort("as_of", "sweep_id").group_by("agent_id", "kind").last())
    return rows.join(latest.select("sweep_id", "agent_id"), on=["sweep_id", "agent_id"], how="semi")


def with_sweep_status(facts: pl.DataFrame, latest: pl.DataFrame) -> pl.DataFrame:
    """`facts` with the latest sweeps' verdicts: an active version a sweep evicted or superseded takes that
    status; every version gets `sweep_flag`, `sweep_note` and `swept_at` (null when no sweep said anything)."""
    if latest.height == 0 or facts.height == 0:
        return facts.with_columns(pl.lit(None, dtype=dtype).alias(name) for name, dtype in SWEEP_COLUMNS.items())
    by_kind = {kind: latest.filter(pl.col("kind") == kind) for kind in SWEEP_KINDS}
    consolidation = by_kind["consolidation"].select(
        "fact_id", "version", pl.col("status").alias("_c_status"), pl.col("as_of").alias("_c_at"),
        pl.col("reason").alias("_c_reason"))
    lint = by_kind["lint"].select(
        "fact_id", "version", pl.col("status").alias("_l_status"), pl.col("as_of").alias("_l_at"),
        pl.col("flag").alias("_l_flag"), pl.col("reason").alias("_l_reason"))
    joined = (facts.join(consolidation, on=["fact_id", "version"], how="left")
              .join(lint, on=["fact_id", "version"], how="left"))
    active = pl.col("status") == "active"
    evicted = (active & (pl.col("_c_status") == "evicted")).fill_null(False)  # no row of a sweep: not evicted
    superseded = (active & ~evicted & (pl.col("_l_status") == "superseded")).fill_null(False)
    return joined.with_columns(
        pl.when(evicted).then(pl.lit("evicted")).when(superseded).then(pl.lit("superseded"))
        .otherwise(pl.col("status")).alias("status"),
        pl.when(evicted).then(pl.lit("evicted")).otherwise(pl.col("_l_flag")).alias("sweep_flag"),
        pl.when(evicted).then(pl.col("_c_reason")).when(pl.col("_l_flag").is_not_null())
        .then(pl.col("_l_reason")).alias("sweep_note"),
        pl.when(evicted).then(pl.col("_c_at")).when(superseded).then(pl.col("_l_at")).alias("swept_at"),
    ).drop("_c_status", "_c_at", "_c_reason", "_l_status", "_l_at", "_l_flag", "_l_reason")


def hidden_by_sweep(facts: pl.DataFrame) -> pl.DataFrame:
    """The versions of `facts` (as `with_sweep_status` gave them) that a sweep took out of "now" reads: the facts
    table says active, a sweep evicted or superseded them. Reads built from another table (the search index, the
    profiles) leave these out."""
    if "swept_at" not in facts.columns:
        return facts.clear()
    return facts.filter(pl.col("swept_at").is_not_null() & pl.col("status").is_in(SWEPT_STATUSES))


def latest_sweep_edges(lake: Lake, latest: pl.DataFrame) -> pl.DataFrame:
    """The `contradict` edges of the lint sweeps whose rows are `latest` (`latest_fact_status`)."""
    edges = lake.read(SWEEP_EDGES)
    if latest.height == 0 or edges.height == 0:
        return edges.clear()
    sweeps = latest.filter(pl.col("kind") == "lint").select("sweep_id", "agent_id").unique()
    return edges.join(sweeps, on=["sweep_id", "agent_id"], how="semi")


def with_conflicts(facts: pl.DataFrame, edges: pl.DataFrame) -> pl.DataFrame:
    """`facts` with `conflicts`: per version, the versions a judged `contradict` edge links it to, each as
    "with <fact_id> v<version>: <content> (<judge>: <reason>)" (empty when none)."""
    if edges.height == 0:  # most reads: no lint sweep, or one that found nothing
        return facts.with_columns(pl.Series("conflicts", [[]] * facts.height, dtype=pl.List(pl.String)))
    content = {(f, v): c for f, v, c in facts.select("fact_id", "version", "content").rows()}
    found: dict[tuple[str, int], list[str]] = {}
    for edge in edges.sort("from_fact_id", "from_version", "to_fact_id", "to_version").iter_rows(named=True):
        ends = ((edge["from_fact_id"], edge["from_version"]), (edge["to_fact_id"], edge["to_version"]))
        for mine, other in (ends, ends[::-1]):
            if mine in content and other in content:
                found.setdefault(mine, []).append(
                    f"with {other[0]} v{other[1]}: {content[other]} ({edge['judge']}: {edge['reason']})")
    listed = [found.get((f, v), []) for f, v in facts.select("fact_id", "version").rows()]
    return facts.with_columns(pl.Series("conflicts", listed, dtype=pl.List(pl.String)))
