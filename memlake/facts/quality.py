"""The Great Expectations suite on `facts/facts` (run by a blocking asset check).

Expectations: (fact_id, version) unique; ids, agent, status and times present;
type and status from their vocabularies; confidence and importance in [0, 1];
valid_from <= valid_until; every superseded_by names an existing fact of the
same agent; each slot chain has exactly one active version (none only when its
newest version was rejected), and no fact_id more than one. A slot chain is what
the fold keeps one current value of, as the fold defines it
(`memlake.facts.fold.slot_chains`): the facts kept under one slot key (the agent,
the subject and the slot, and for a multi-valued slot such as sibling the value
too), a fact whose value was replaced being kept under both values' keys.
The last three are cross-row rules, so they are computed first as boolean
columns that the suite expects to be true.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import polars as pl

from memlake.facts.fold import slot_chains
from memlake.quality import SuiteResult, run_suite
from memlake.schemas import FACT_STATUSES, FACT_TYPES

# The cross-row rules, as the boolean columns `with_chain_checks` adds.
CHAIN_RULES = ("superseded_by_exists", "slot_chain_one_active", "fact_chain_at_most_one_active")
HELD_BACK = "memlake.held_back"  # the facts file's stamp: {agent: [broken row, ...]} of the agents held back


def with_chain_checks(facts: pl.DataFrame) -> pl.DataFrame:
    """`facts` with boolean columns for the cross-row rules."""
    frame = facts.drop("day", strict=False)
    if frame.height == 0:
        return frame.with_columns(
            pl.lit(True).alias("superseded_by_exists"),
            pl.lit(True).alias("slot_chain_one_active"),
            pl.lit(True).alias("fact_chain_at_most_one_active"),
        )
    known = frame.select("agent_id", pl.col("fact_id").alias("superseded_by")).unique().with_columns(
        pl.lit(True).alias("_target_exists")
    )
    frame = frame.join(known, on=["agent_id", "superseded_by"], how="left").with_columns(
        (pl.col("superseded_by").is_null() | pl.col("_target_exists").fill_null(False)).alias("superseded_by_exists")
    )
    frame = with_slot_chain(frame)
    slot_chain = ["_slot_chain"]
    active = (pl.col("status") == "active").cast(pl.Int32)
    newest_status = pl.col("status").sort_by(["created_at", "version"]).last()
    frame = frame.with_columns(
        active.sum().over(slot_chain).alias("_slot_active"),
        newest_status.over(slot_chain).alias("_slot_newest_status"),
        active.sum().over(["agent_id", "fact_id"]).alias("_fact_active"),
    ).with_columns(
        (
            pl.col("_slot_chain").is_null()
            | (pl.col("_slot_active") == 1)
            | ((pl.col("_slot_active") == 0) & (pl.col("_slot_newest_status") == "rejected"))
        ).alias("slot_chain_one_active"),
        (pl.col("_fact_active") <= 1).alias("fact_chain_at_most_one_active"),
    )
    return frame.drop("_target_exists", "_slot_chain", "_slot_active", "_slot_newest_status", "_fact_active")


def with_slot_chain(facts: pl.DataFrame) -> pl.DataFrame:
    """`facts` with `_slot_chain`: the slot chain the fold keeps a row's fact in (null for a fact without a slot).

    From the fold's own `slot_chains`, so the check and the fold agree on which rows hold one current value."""
    chains = slot_chains(facts).rename({"slot_chain": "_slot_chain"})
    return facts.join(chains, on=["agent_id", "fact_id"], how="left", maintain_order="left")


def validate_facts(facts: pl.DataFrame) -> SuiteResult:
    """Run the facts suite."""
    frame = with_chain_checks(facts).drop("tags", "source_conversation_ids", "source_message_ids", "override_ids")

    def expectations(gxe: Any) -> list[Any]:
        return [
            *(
                gxe.ExpectColumnValuesToNotBeNull(column=c)
                for c in ("fact_id", "version", "agent_id", "status", "content", "created_at", "valid_from")
            ),
            gxe.ExpectCompoundColumnsToBeUnique(column_list=["fact_id", "version"]),
            gxe.ExpectColumnValuesToBeInSet(column="status", value_set=list(FACT_STATUSES)),
            gxe.ExpectColumnValuesToBeInSet(column="type", value_set=list(FACT_TYPES)),
            gxe.ExpectColumnValuesToBeBetween(column="confidence", min_value=0.0, max_value=1.0),
            gxe.ExpectColumnValuesToBeBetween(column="importance", min_value=0.0, max_value=1.0),
            gxe.ExpectColumnPairValuesAToBeGreaterThanB(
                column_A="valid_until", column_B="valid_from", or_equal=True, ignore_row_if="either_value_is_missing"
            ),
            gxe.ExpectColumnValuesToBeInSet(column="superseded_by_exists", value_set=[True]),
            gxe.ExpectColumnValuesToBeInSet(column="slot_chain_one_active", value_set=[True]),
            gxe.ExpectColumnValuesToBeInSet(column="fact_chain_at_most_one_active", value_set=[True]),
        ]

    return run_suite(frame, "facts", expectations)


def broken_rows(facts: pl.DataFrame) -> pl.DataFrame:
    """The rows that break a cross-row rule, one per row and rule: agent, subject, slot, value, fact id, version,
    status and the rule, ordered by agent and fact."""
    checked = with_chain_checks(facts)
    return pl.concat([
        checked.filter(~pl.col(rule)).select(
            "agent_id", "subject", "slot", "value", "fact_id", "version", "status", pl.lit(rule).alias("rule"))
        for rule in CHAIN_RULES
    ]).sort("agent_id", "fact_id", "version", "rule")


def describe_rows(rows: pl.DataFrame, limit: int = 10) -> list[str]:
    """One line per broken row, as a person reads it (at most `limit`, then how many more)."""
    lines = [
        f"agent {r['agent_id']!r}, subject {r['subject']!r}, slot {r['slot']!r} = {r['value']!r}: fact "
        f"{r['fact_id']} v{r['version']} ({r['status']}) breaks {r['rule']}"
        for r in rows.head(limit).iter_rows(named=True)
    ]
    return lines + ([f"and {rows.height - limit} more"] if rows.height > limit else [])


@dataclass
class SoundFacts:
    """The facts and edges to write, and the agents whose new rows were held back (with the rows that broke)."""

    facts: pl.DataFrame
    edges: pl.DataFrame
    held_back: dict[str, list[str]]

    def stamp(self) -> str:
        return json.dumps(self.held_back, sort_keys=True)


def hold_back_broken_agents(
    facts: pl.DataFrame, edges: pl.DataFrame, last_facts: pl.DataFrame, last_edges: pl.DataFrame
) -> SoundFacts:
    """A fold's tables with each agent whose rows break a cross-row rule put back to its last written rows.

    One agent's broken chain then costs only that agent its new facts; the other agents' memory is written.
    Its last rows stay if they keep the rules (else it has none until a fold gets it right: the lake is derived,
    its inputs are kept)."""
    broken = broken_rows(facts)
    if broken.height == 0:
        return SoundFacts(facts, edges, {})
    agents = sorted(set(broken["agent_id"].to_list()))
    last_facts = last_facts.drop("day", strict=False).filter(pl.col("agent_id").is_in(agents))
    last_broken = set(broken_rows(last_facts)["agent_id"].to_list())
    kept = [a for a in agents if a not in last_broken]
    sound_facts = pl.concat([facts.filter(~pl.col("agent_id").is_in(agents)),
                             last_facts.filter(pl.col("agent_id").is_in(kept)).select(facts.columns)],
                            how="vertical_relaxed")
    sound_edges = pl.concat([edges.filter(~pl.col("agent_id").is_in(agents)),
                             last_edges.filter(pl.col("agent_id").is_in(kept)).select(edges.columns)],
                            how="vertical_relaxed")
    held_back = {a: describe_rows(broken.filter(pl.col("agent_id") == a)) for a in agents}
    return SoundFacts(sound_facts, sound_edges, held_back)


def held_back_agents(stamp: str | None) -> dict[str, list[str]]:
    """The agents a facts file's `HELD_BACK` stamp names, with their broken rows (none for an older file)."""
    return json.loads(stamp) if stamp else {}
