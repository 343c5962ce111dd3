"""`Memory.sql`: DuckDB over every lake table as `Memory` reads it, for one agent or, for an operator, all.

Each lake table is a view `<layer>.<table>` (`facts.facts`, `transcripts.turns`, ...). The facts layer's tables
(`facts.facts`, `facts.fact_edges`, `profile.profiles`) are what the fact reads see: overrides and forgets
written since the last run folded in, a forgotten fact gone, the maintenance sweeps' verdicts joined (an
evicted version has status `evicted`, with `sweep_flag`, `sweep_note`, `swept_at` and `conflicts`). The other
tables are the lake's rows of the agent. Tables without an `agent_id` column (`maintenance/reports`,
`maintenance/judge_cache`) are shown to an operator only.

The views are over frames read here, not over the files: once they exist the connection is closed to files
(`enable_external_access` off, configuration locked), so a query cannot read past its agent by naming a Parquet
file, nor write anything. A table the query does not name is not read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import duckdb
import polars as pl

from memlake.errors import BadRequest
from memlake.lake import Lake
from memlake.schemas import FACT_EDGES, FACTS, PROFILES, TABLES, Table
from memlake.settings import Settings

FACT_LAYER = (FACTS, FACT_EDGES, PROFILES)  # read through the fact fold, not from the lake alone
HIDDEN_FACT_STATUSES = ("forgotten",)  # a forgotten version's text is in no view

# agent_id -> the agent's facts tables as reads see them (`memlake.facts.reads.AgentFacts`)
FactTables = Callable[[str], Any]


def _named(table: Table, sql: str) -> bool:
    """Whether `sql` may refer to `table` (its name appears in it, any case): a table it does not name is not read."""
    return re.search(rf"\b{re.escape(table.name)}\b", sql, re.IGNORECASE) is not None


def _fact_layer_frame(table: Table, tables: Any, settings: Settings, agent_id: str) -> pl.DataFrame:
    from memlake.facts.reads import profiles_as_read  # deferred: the fact fold, ~50 ms

    if table is FACTS:
        return tables.facts.filter(~pl.col("status").is_in(HIDDEN_FACT_STATUSES))
    if table is FACT_EDGES:
        return tables.edges
    return profiles_as_read(settings, tables, agent_id)


def table_frame(settings: Settings, lake: Lake, fact_tables: FactTables, table: Table, agents: Sequence[str],
                all_agents: bool) -> pl.DataFrame | None:
    """`table` as the agents' reads see it (`all_agents`: every row, `agents` being every agent with memory);
    None: not shown to them."""
    if table in FACT_LAYER:
        # every agent's frame, empty ones too: they carry the columns the sweeps join (`sweep_flag`, ...)
        frames = [_fact_layer_frame(table, fact_tables(agent), settings, agent) for agent in agents]
        return pl.concat(frames, how="diagonal_relaxed") if frames else Lake.empty(table)
    frame = lake.read(table)
    if all_agents:
        return frame
    if "agent_id" not in frame.columns:
        return None
    return frame.filter(pl.col("agent_id").is_in(list(agents)))


def run_sql(settings: Settings, lake: Lake, fact_tables: FactTables, sql: str, params: Sequence[Any] | None,
            agents: Sequence[str], all_agents: bool) -> pl.DataFrame:
    """`sql` (bound `params` for its `?`) over the views of the tables the agents may read; a bad query, or
    one reaching past the views, is a ValueError."""
    if not isinstance(sql, str) or not sql.strip():
        raise BadRequest(f"Memory.sql needs a SQL query, got {sql!r}")
    if params is not None and (isinstance(params, str | bytes) or not isinstance(params, Sequence)):
        raise BadRequest(f"SQL parameters are a list of values for the query's `?`, got {params!r}")
    con = duckdb.connect()
    withheld = []  # named by the query, but not shown to one agent
    try:
        for table in TABLES.values():
            con.execute(f'CREATE SCHEMA IF NOT EXISTS "{table.layer}"')
            frame = table_frame(settings, lake, fact_tables, table, agents, all_agents) if _named(table, sql) \
                else Lake.empty(table)
            if frame is None:
                withheld.append(f"{table.layer}.{table.name}")
                continue
            hidden = f"_{table.layer}_{table.name}"
            con.register(hidden, frame.to_arrow())
            con.execute(f'CREATE VIEW "{table.layer}"."{table.name}" AS SELECT * FROM "{hidden}"')
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
        result = con.sql(sql, params=list(params) if params is not None else None)
        return result.pl() if result is not None else pl.DataFrame()  # a statement that returns no rows
    except duckdb.Error as exc:
        why = f" ({', '.join(withheld)} has no agent_id column: only all_agents=True reads it)" if withheld else ""
        raise BadRequest(f"SQL error: {exc}{why}") from exc
    finally:
        con.close()
