"""The Great Expectations suites on `graph/entities` and `graph/relations` (run by the graph's asset check).

Entities: entity_id unique; agent, name and type present, type from `GRAPH_ENTITY_TYPES`; first seen not after
last seen. Relations: (relation_id, version) unique; status from `RELATION_STATUSES`; confidence in [0, 1];
valid_from <= valid_until; both ends exist, and are entities of the relation's own agent (no row of one agent
refers to another's). The cross-row rules are computed first as boolean columns the suite expects true.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from memlake.quality import SuiteResult, run_suite
from memlake.schemas import GRAPH_ENTITY_TYPES, RELATION_STATUSES

RELATION_RULES = ("source_is_own_entity", "target_is_own_entity", "valid_from_not_after_until")


def with_relation_checks(relations: pl.DataFrame, entities: pl.DataFrame) -> pl.DataFrame:
    """`relations` with a boolean column per cross-row rule."""
    owners = entities.select("entity_id", "agent_id").unique("entity_id", keep="first")  # a repeated id fails alone
    frame = relations
    for end in ("source", "target"):
        known = owners.rename({"entity_id": f"{end}_entity_id", "agent_id": f"_{end}_agent"})
        frame = frame.join(known, on=f"{end}_entity_id", how="left", maintain_order="left").with_columns(
            (pl.col(f"_{end}_agent") == pl.col("agent_id")).fill_null(False).alias(f"{end}_is_own_entity"))
    frame = frame.with_columns(
        (pl.col("valid_until").is_null() | (pl.col("valid_from") <= pl.col("valid_until")))
        .fill_null(False).alias("valid_from_not_after_until"))
    return frame.drop("_source_agent", "_target_agent")


def validate_graph(entities: pl.DataFrame, relations: pl.DataFrame) -> SuiteResult:
    """Both suites; the result fails when either does, with every failure."""

    def entity_expectations(gxe: Any) -> list[Any]:
        return [
            gxe.ExpectColumnValuesToBeUnique(column="entity_id"),
            *(gxe.ExpectColumnValuesToNotBeNull(column=c) for c in ("entity_id", "agent_id", "name", "type")),
            gxe.ExpectColumnValuesToBeInSet(column="type", value_set=list(GRAPH_ENTITY_TYPES)),
            gxe.ExpectColumnPairValuesAToBeGreaterThanB(column_A="last_seen_at", column_B="first_seen_at",
                                                         or_equal=True),
        ]

    def relation_expectations(gxe: Any) -> list[Any]:
        return [
            gxe.ExpectCompoundColumnsToBeUnique(column_list=["relation_id", "version"]),
            *(gxe.ExpectColumnValuesToNotBeNull(column=c) for c in ("agent_id", "relation", "valid_from", "status")),
            gxe.ExpectColumnValuesToBeInSet(column="status", value_set=list(RELATION_STATUSES)),
            gxe.ExpectColumnValuesToBeBetween(column="confidence", min_value=0.0, max_value=1.0),
            *(gxe.ExpectColumnValuesToBeInSet(column=rule, value_set=[True]) for rule in RELATION_RULES),
        ]

    checked = with_relation_checks(relations, entities).drop("source_conversation_ids", "source_message_ids")
    first = run_suite(entities.drop("aliases", "source_conversation_ids", "source_message_ids"), "graph_entities",
                      entity_expectations)
    second = run_suite(checked, "graph_relations", relation_expectations)
    return SuiteResult(first.success and second.success, first.failures + second.failures,
                       first.evaluated + second.evaluated)
