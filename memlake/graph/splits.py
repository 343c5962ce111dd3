"""The log of entity merges a user undid (`<home>/inputs/graph_splits/`): append-only, read by every rebuild."""

from __future__ import annotations

import uuid
from datetime import datetime

import polars as pl

from memlake.graph.resolve import Split
from memlake.inputs import append_entry, read_log
from memlake.moments import parse_as_of
from memlake.schemas import GRAPH_SPLITS, check_agent_id
from memlake.settings import Settings


def write_split(settings: Settings, agent_id: str, merge: pl.DataFrame, author: str = "api",
                at: datetime | None = None) -> Split:
    """Append the undoing of one merge (its `graph/entity_merges` row): the next graph build keeps the two apart."""
    check_agent_id(agent_id)
    if merge.height != 1:
        raise ValueError("a split undoes exactly one merge")
    row = merge.row(0, named=True)
    written_at = parse_as_of(at)  # None: now
    split_id = f"s_{uuid.uuid4().hex[:16]}"
    entry = {"split_id": split_id, "agent_id": agent_id, "merge_id": row["merge_id"],
             "kept_name": row["kept_name"], "merged_name": row["merged_name"], "written_at": written_at,
             "author": author}
    append_entry(settings, GRAPH_SPLITS, [entry], split_id, written_at)
    return Split(split_id, agent_id, row["merge_id"], _form(row["kept_name"]), _form(row["merged_name"]))


def _form(key: str | None) -> str | None:
    """A merge row's node key without the relations that split a name ("Alex [sibling_of]" -> "Alex")."""
    return key.split(" [", 1)[0] if key else key


def read_splits(settings: Settings) -> list[Split]:
    return [Split(r["split_id"], r["agent_id"], r["merge_id"], _form(r["kept_name"]), _form(r["merged_name"]))
            for r in read_log(settings, GRAPH_SPLITS).iter_rows(named=True)]
