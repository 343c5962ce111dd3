"""The graph's Great Expectations suite: what it passes, and each rule it catches."""

from datetime import UTC, datetime

import polars as pl
import pytest

from memlake.graph.build import build_graph
from memlake.graph.quality import validate_graph
from tests.graph.helpers import episode, episodes, no_facts


@pytest.fixture(scope="module")
def graph():  # type: ignore[no-untyped-def]
    return build_graph(episodes(
        episode("a1", "c1", "2024-01-10", [("Acme", "organization")], [("user", "works_at", "Acme")]),
        episode("a1", "c2", "2024-06-01", [("Globex", "organization")], [("user", "works_at", "Globex")]),
        episode("a2", "c1", "2024-01-10", [("Acme", "organization")], [("user", "works_at", "Acme")]),
    ), no_facts(), None, 0.85)


def _failed(result) -> set[str]:  # type: ignore[no-untyped-def]
    return {f["kwargs"].get("column") or f["kwargs"].get("column_list") or f["expectation"] for f in result.failures}


def test_a_built_graph_passes(graph) -> None:  # type: ignore[no-untyped-def]
    result = validate_graph(graph.entities, graph.relations)
    assert result.success, result.failures


def test_the_suite_catches_a_relation_to_another_agents_entity(graph) -> None:  # type: ignore[no-untyped-def]
    other = graph.entities.filter(pl.col("agent_id") == "a2")["entity_id"][0]
    bad = graph.relations.with_columns(
        pl.when(pl.col("agent_id") == "a1").then(pl.lit(other)).otherwise(pl.col("target_entity_id"))
        .alias("target_entity_id"))
    result = validate_graph(graph.entities, bad)
    assert not result.success and _failed(result) == {"target_is_own_entity"}


def test_the_suite_catches_a_missing_end_a_repeated_id_and_validity_backwards(graph) -> None:  # type: ignore[no-untyped-def]
    bad = graph.relations.with_columns(pl.lit("e_gone").alias("source_entity_id"),
                                       pl.lit(datetime(2000, 1, 1, tzinfo=UTC)).alias("valid_until"))
    entities = pl.concat([graph.entities, graph.entities.head(1)])
    result = validate_graph(entities, bad)
    assert _failed(result) == {"source_is_own_entity", "valid_from_not_after_until", "entity_id"}
