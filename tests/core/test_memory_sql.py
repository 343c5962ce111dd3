"""`Memory.sql`: DuckDB over every table as `Memory` reads it, for one agent or (an operator) all of them."""

from __future__ import annotations

import polars as pl
import pytest

from memlake.api import Memory
from memlake.maintenance.sweep import run_sweep
from memlake.schemas import TABLES
from tests.maintenance.helpers import AS_OF, episode, fact, write_home


@pytest.fixture
def memory(settings) -> Memory:
    """Two agents' facts; ana remembered one since the last run, forgot one, and a sweep evicted an idle one."""
    write_home(settings, [
        fact("tea", "The user likes tea.", said_days_ago=3),
        fact("race", "The user ran a 10k race.", type="event", said_days_ago=120),
        fact("gym", "The user goes to the gym.", said_days_ago=2),
        fact("bob1", "The user is a baker.", agent_id="bob", said_days_ago=40),
    ], [episode("c1", "Talked about tea.", ended_days_ago=3),
        episode("c2", "Talked about bread.", ended_days_ago=40, agent_id="bob")])
    run_sweep(settings, "consolidation", AS_OF)
    memory = Memory(settings=settings.model_copy(update={"embedding_model": "none"}))
    memory.remember("ana", "I am allergic to cats")
    memory.forget("ana", fact_id="gym")
    return memory


def test_facts_read_through_sql_are_what_memory_reads(memory) -> None:
    rows = memory.sql("SELECT fact_id, status, content FROM facts.facts ORDER BY created_at", agent_id="ana")
    status = dict(zip(rows["fact_id"], rows["status"], strict=True))
    assert status["tea"] == "active" and status["race"] == "evicted"  # the sweep's verdict joined
    assert "gym" not in status  # forgotten: its text is nowhere in the view
    assert any("allergic to cats" in text for text in rows["content"])  # remembered, not folded by a run yet
    assert set(rows["fact_id"]) == set(memory.facts("ana", include_history=True)["fact_id"])


def test_one_agent_sees_only_its_rows_in_every_table(memory) -> None:
    for table in ("facts.facts", "episodes.episodes", "transcripts.turns", "maintenance.fact_status"):
        agents = memory.sql(f"SELECT DISTINCT agent_id FROM {table}", agent_id="ana")["agent_id"].to_list()
        assert agents == ["ana"], table
    assert memory.sql("SELECT count(*) AS n FROM facts.facts", agent_id="bob")["n"][0] == 1


def test_an_operator_reads_every_agent_with_an_explicit_flag(memory) -> None:
    agents = memory.sql("SELECT DISTINCT agent_id FROM facts.facts ORDER BY 1", all_agents=True)
    assert agents["agent_id"].to_list() == ["ana", "bob"]
    sweeps = memory.sql("SELECT kind FROM maintenance.reports", all_agents=True)
    assert sweeps["kind"].to_list() == ["consolidation"]


def test_values_are_bound_parameters(memory) -> None:
    found = memory.sql("SELECT fact_id FROM facts.facts WHERE type = ? AND content LIKE ?", ["fact", "%tea%"],
                       agent_id="ana")
    assert found["fact_id"].to_list() == ["tea"]
    tricky = memory.sql("SELECT count(*) AS n FROM facts.facts WHERE content = ?", ["x' OR '1'='1"], agent_id="ana")
    assert tricky["n"][0] == 0


def test_facts_learned_per_month_is_one_short_query(memory) -> None:
    per_month = memory.sql(
        "SELECT strftime(ingested_at, '%Y-%m') AS month, count(*) AS learned FROM facts.facts "
        "WHERE ingested_at IS NOT NULL GROUP BY 1 ORDER BY 1", all_agents=True)
    assert per_month["learned"].sum() == 4  # tea, race, bob's, the remembered one; the forgotten one is gone
    assert per_month.columns == ["month", "learned"]


def test_every_lake_table_is_a_view(memory) -> None:
    for path in TABLES:
        layer, name = path.split("/")
        memory.sql(f'SELECT * FROM "{layer}"."{name}" LIMIT 1', all_agents=True)


@pytest.mark.parametrize("sql", [
    "SELECT * FROM read_parquet('{lake}/facts/facts/data.parquet')",
    "SELECT * FROM '{lake}/facts/facts/data.parquet'",
    "COPY (SELECT 1) TO '{lake}/../out.csv'",
    "SET enable_external_access = true",
    "SELECT 1; SET lock_configuration = false; SELECT * FROM read_parquet('{lake}/facts/facts/data.parquet')",
])
def test_one_agent_cannot_read_past_its_views(memory, sql) -> None:
    with pytest.raises(ValueError, match="(?i)sql"):
        memory.sql(sql.format(lake=memory.settings.lake_dir), agent_id="ana")


def test_a_table_without_agents_is_for_an_operator_only(memory) -> None:
    with pytest.raises(ValueError, match="maintenance.reports has no agent_id column: only all_agents=True"):
        memory.sql("SELECT * FROM maintenance.reports", agent_id="ana")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({}, "agent_id or all_agents"),
    ({"agent_id": "ana", "all_agents": True}, "agent_id or all_agents"),
    ({"agent_id": "../x"}, "agent"),
])
def test_whose_rows_must_be_said_once(memory, kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        memory.sql("SELECT 1", **kwargs)


@pytest.mark.parametrize("sql", ["SELEC 1", "SELECT * FROM facts.nothing", "", 42])
def test_a_bad_query_is_a_clear_error(memory, sql) -> None:
    with pytest.raises(ValueError, match="(?i)sql"):
        memory.sql(sql, agent_id="ana")


def test_a_query_result_is_a_polars_frame(memory) -> None:
    assert isinstance(memory.sql("SELECT 1 AS one", agent_id="ana"), pl.DataFrame)


def test_an_agent_with_no_facts_still_has_the_sweep_columns(memory) -> None:
    memory.remember("cleo", "I play the cello")
    memory.forget("cleo", everything=True)
    found = memory.sql("SELECT fact_id, sweep_flag, conflicts FROM facts.facts", agent_id="cleo")
    assert found.height == 0 and found.columns == ["fact_id", "sweep_flag", "conflicts"]
