"""Rows of the existing reads (facts, search hits) as the ordered lines of a context section."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import polars as pl

from memlake.context.assemble import ContextLine
from memlake.context.gate import GateDecision
from memlake.distill.models import USER_SUBJECT

# the user's slots an identity question is answered from, besides the identity-typed facts
IDENTITY_SLOTS = ("name", "home_city", "employer", "job_title", "partner", "sibling")


def fact_line(row: dict[str, Any], past: bool = False) -> ContextLine:
    """A fact row (of `Memory.facts`) as a line; a `past` value (no longer true at the block's time) carries
    the day it ended. A current one carries none, even if it has ended since: an `as_of` block knows no later.
    A fact a lint sweep found in conflict carries the sweep's note ("conflicting: with …") after its text."""
    note = row.get("sweep_note") if row.get("sweep_flag") == "conflicting" else None
    return ContextLine(
        text=f"{row['content']} ({note})" if note else row["content"], kind="fact",
        ref=f"{row['fact_id']}@{row['version']}", said_at=row["created_at"],
        conversation_ids=tuple(row["source_conversation_ids"] or ()),
        message_ids=tuple(row["source_message_ids"] or ()),
        until=row["valid_until"] if past else None,
    )


def hit_lines(hits: pl.DataFrame, kind: str) -> list[ContextLine]:
    """Search hits (best first) as lines, each with its conversation and message ids."""
    return [ContextLine(text=row["text"], kind=kind, ref=row["key"], said_at=row["created_at"],
                        conversation_ids=(row["conversation_id"],) if row["conversation_id"] else (),
                        message_ids=tuple(row["message_ids"] or ()))
            for row in hits.iter_rows(named=True)]


def override_lines(current: pl.DataFrame) -> list[ContextLine]:
    """The user's overrides among the current facts, newest first: they go in every block."""
    rows = current.filter(pl.col("source_interface") == "override").sort("created_at", descending=True)
    return [fact_line(row) for row in rows.iter_rows(named=True)]


def _named(gate: GateDecision) -> pl.Expr:
    """A fact the question names: one of the user's slots it asks about, or the subject it names."""
    return ((pl.col("subject") == "user") & pl.col("slot").is_in(list(gate.slots))) | (
        pl.col("subject").str.to_lowercase() == (gate.fired or "").lower())


def named_fact_ids(current: pl.DataFrame, gate: GateDecision) -> list[str]:
    """The ids of the current facts the question names (`_named`), the user's overrides included: after
    `remember "I moved to Bristol"` the home city the question names is an override."""
    return current.filter(_named(gate).fill_null(False))["fact_id"].to_list()


def fact_lines(current: pl.DataFrame, history: pl.DataFrame | None, hit_fact_ids: list[str],
               gate: GateDecision) -> list[ContextLine]:
    """Current facts first: those the question names (its slots of the user, the subject it names), then the
    search's hits, then the rest by importance and recency; then, only when the question asks about the past
    or changes (`history` given), the superseded values, newest first."""
    named = _named(gate)
    hit_rank = {fact_id: at for at, fact_id in enumerate(dict.fromkeys(hit_fact_ids))}
    ordered = (
        current.filter(pl.col("source_interface") != "override")
        .with_columns(named.fill_null(False).alias("_named"),
                      pl.col("fact_id").replace_strict(hit_rank, default=len(hit_rank)).alias("_hit"))
        .sort(["_named", "_hit", "importance", "created_at"], descending=[True, False, True, True], nulls_last=True)
    )
    lines = [fact_line(row) for row in ordered.iter_rows(named=True)]
    if history is None:
        return lines
    # the past of what the question names goes right after its current value; other past values last
    named_ids = set(ordered.filter(pl.col("_named"))["fact_id"].to_list())
    # the versions said by then that were no longer true then: every version but the current ones
    past = (history.join(current.select("fact_id", "version"), on=["fact_id", "version"], how="anti")
            .filter(pl.col("valid_until").is_not_null())
            .with_columns(pl.col("fact_id").is_in(list(named_ids)).alias("_named"))
            .sort(["_named", "created_at"], descending=True))
    past_lines = [fact_line(row, past=True) for row in past.iter_rows(named=True)]
    named_count, past_named = int(ordered["_named"].sum()), int(past["_named"].sum())
    return lines[:named_count] + past_lines[:past_named] + lines[named_count:] + past_lines[past_named:]


def identity_lines(current: pl.DataFrame) -> list[ContextLine]:
    """Who the user is: identity facts and the user's core slots, most important first."""
    who = current.filter((pl.col("source_interface") != "override") & (
        (pl.col("type") == "identity") | ((pl.col("subject") == "user") & pl.col("slot").is_in(IDENTITY_SLOTS))))
    return [fact_line(row) for row in who.sort(["importance", "created_at"], descending=True, nulls_last=True)
            .iter_rows(named=True)]


def relationship_lines(current: pl.DataFrame) -> list[ContextLine]:
    """The people in the user's life: current relationship facts, most important first."""
    related = current.filter((pl.col("source_interface") != "override") & (pl.col("type") == "relationship"))
    return [fact_line(row) for row in related.sort(["importance", "created_at"], descending=True, nulls_last=True)
            .iter_rows(named=True)]


def graph_relation_lines(relations: pl.DataFrame, user_ids: Collection[str] = ()) -> list[ContextLine]:
    """Graph relation versions (rows of `Memory.relations`, ends by name) as lines: "user works at Northwind
    Labs", dated when said, citing the conversations and messages that said it; the most confident first. The
    user's entity (`user_ids`), which the graph calls by the name they speak under, is "user" here, as in every
    fact line of the block."""
    def end(row: dict, side: str) -> str:
        return USER_SUBJECT if row[f"{side}_entity_id"] in user_ids else row[f"{side}_name"]

    rows = relations.sort(["confidence", "valid_from"], descending=True, nulls_last=True)
    return [ContextLine(text=f"{end(row, 'source')} {row['relation'].replace('_', ' ')} {end(row, 'target')}",
                        kind="relation", ref=f"{row['relation_id']}@{row['version']}", said_at=row["created_at"],
                        conversation_ids=tuple(row["source_conversation_ids"] or ()),
                        message_ids=tuple(row["source_message_ids"] or ()))
            for row in rows.iter_rows(named=True)]


def episode_lines(episodes: pl.DataFrame) -> list[ContextLine]:
    """Episodes (rows of `Memory.episodes`, in the order given) as summary lines."""
    return [ContextLine(text=row["summary"], kind="episode", ref=f"{row['agent_id']}/{row['conversation_id']}",
                        said_at=row["conversation_started_at"], conversation_ids=(row["conversation_id"],),
                        message_ids=tuple(row["message_ids"] or ()))
            for row in episodes.iter_rows(named=True)]
