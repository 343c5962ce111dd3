"""Reads of working memory: current facts, as-of facts, histories and profiles, for one agent.

Reads see a remembered fact at once, without waiting for a run: the facts
tables are read, and override or forget entries written since the last fold
(an override whose id no fact row carries yet; a forget whose target is still
in the tables) are folded on top of them in memory, with the configured
embedder. The next run folds them for good.

`as_of` returns what was true then and already said: valid_from <= as_of <
valid_until (open when null) and created_at <= as_of. A bare date means the
end of that day (UTC); a naive datetime is UTC.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from typing import Any

import polars as pl

from memlake.facts.fold import Embed, FoldConfig, Folder, Forget, Override
from memlake.facts.overrides import read_forgets, read_overrides, structure_statement, write_override
from memlake.lake import Lake
from memlake.schemas import FACT_EDGES, FACTS, PROFILES
from memlake.settings import Settings

HIDDEN_STATUSES = ("rejected", "forgotten")
EmbedFactory = Callable[[], Embed | None]


@dataclass
class AgentFacts:
    """One agent's fact tables as a read sees them."""

    facts: pl.DataFrame
    edges: pl.DataFrame
    pending_overrides: int = 0
    pending_forgets: int = 0


def parse_as_of(value: datetime | date | str | None) -> datetime | None:
    """A UTC datetime from a datetime (naive = UTC), a date (its end) or an ISO string."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        value = date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text.replace("Z", "+00:00"))
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return datetime.combine(value, time.max, tzinfo=UTC)


def _pending(
    facts: pl.DataFrame, overrides: list[Override], forgets: list[Forget]
) -> tuple[list[Override], list[Forget]]:
    folded = set(facts["override_ids"].explode().drop_nulls().to_list()) if facts.height else set()
    pending_overrides = [o for o in overrides if o.override_id not in folded]
    pending_forgets = []
    for f in forgets:
        at = f.written_at
        if f.scope == "fact":
            hit = facts.filter((pl.col("fact_id") == f.target) & (pl.col("created_at") <= at))
        elif f.scope == "conversation":
            hit = facts.filter(pl.col("source_conversation_ids").list.contains(f.target or ""))
        else:
            hit = facts.filter(pl.col("ingested_at").is_null() | (pl.col("ingested_at") <= at))
        if hit.height:
            pending_forgets.append(f)
    return pending_overrides, pending_forgets


def agent_facts(settings: Settings, agent_id: str, embed_factory: EmbedFactory | None = None) -> AgentFacts:
    """The agent's facts and edges, with overrides and forgets not yet folded merged in."""
    lake = Lake(settings.lake_dir)
    facts = lake.read(FACTS).filter(pl.col("agent_id") == agent_id)
    edges = lake.read(FACT_EDGES).filter(pl.col("agent_id") == agent_id)
    overrides, forgets = _pending(facts, read_overrides(settings, agent_id), read_forgets(settings, agent_id))
    if not overrides and not forgets:
        return AgentFacts(facts, edges)
    embed = embed_factory() if embed_factory is not None else None
    folder = Folder.from_tables(facts, edges, FoldConfig.from_settings(settings), embed)
    folder.add([*overrides, *forgets])
    return AgentFacts(folder.facts_frame(), folder.edges_frame(), len(overrides), len(forgets))


def _order(frame: pl.DataFrame) -> pl.DataFrame:
    """Current versions first, newest said first; versions of a chain newest first."""
    if frame.height == 0:
        return frame
    return (
        frame.with_columns((pl.col("status") != "active").alias("_not_active"))
        .sort(["_not_active", "created_at", "fact_id", "version"], descending=[False, True, False, True])
        .drop("_not_active")
    )


def select_facts(
    facts: pl.DataFrame,
    type: str | None = None,  # noqa: A002 - the fact type, as in the schema
    subject: str | None = None,
    as_of: datetime | date | str | None = None,
    include_history: bool = False,
) -> pl.DataFrame:
    """Facts that are current (or were true at `as_of`), optionally with every version of their chains."""
    when = parse_as_of(as_of)
    frame = facts
    if type is not None:
        frame = frame.filter(pl.col("type") == type)
    if subject is not None:
        frame = frame.filter(pl.col("subject").str.to_lowercase() == subject.strip().lower())
    if when is None:
        current = frame.filter(pl.col("status") == "active")
    else:
        current = frame.filter(
            ~pl.col("status").is_in(HIDDEN_STATUSES)
            & (pl.col("valid_from") <= when)
            & (pl.col("valid_until").is_null() | (pl.col("valid_until") > when))
            & (pl.col("created_at") <= when)
        )
    if not include_history:
        return _order(current)
    chains = set(current["fact_id"].to_list())
    history = facts.filter(pl.col("fact_id").is_in(sorted(chains)))
    if when is not None:
        history = history.filter(pl.col("created_at") <= when)
    return _order(history)


def fact_history(facts: pl.DataFrame, edges: pl.DataFrame, fact_id: str) -> pl.DataFrame:
    """Every version of a fact's chain, and of the chains `update` edges link to it, oldest first."""
    chains = {fact_id}
    updates = edges.filter(pl.col("edge_type") == "update").select("from_fact_id", "to_fact_id").rows()
    grew = True
    while grew:
        linked = {b for a, b in updates if a in chains} | {a for a, b in updates if b in chains}
        grew = not linked <= chains
        chains |= linked
    history = facts.filter(pl.col("fact_id").is_in(sorted(chains)))
    return history.sort("created_at", "fact_id", "version")


def profile(settings: Settings, agent_id: str, version: int | None = None) -> pl.DataFrame:
    """One profile version of the agent (the latest unless `version`), as a one-row frame (empty if none)."""
    frame = Lake(settings.lake_dir).read(PROFILES).filter(pl.col("agent_id") == agent_id)
    if version is not None:
        return frame.filter(pl.col("version") == version)
    return frame.sort("version").tail(1)


def remember(
    settings: Settings,
    agent_id: str,
    content: str | None,
    *,
    replaces: str | None = None,
    reject: str | None = None,
    embed_factory: EmbedFactory | None = None,
    author: str = "api",
    **fields: Any,
) -> pl.DataFrame:
    """Append an override (add, correct `replaces`, or `reject`) and return the fact rows it made or touched."""
    target_id = replaces or reject
    target: dict[str, Any] | None = None
    if target_id is not None:
        known = agent_facts(settings, agent_id, embed_factory).facts.filter(pl.col("fact_id") == target_id)
        if known.height == 0:
            raise ValueError(f"agent {agent_id!r} has no fact {target_id!r}")
        target = known.sort("version").row(-1, named=True)
    action = "reject" if reject is not None else "correct" if replaces is not None else "add"
    now = datetime.now(UTC)
    if content and action != "reject" and not fields.get("slot") and not fields.get("type"):
        fields, content = _structured(content, now, target, fields)
    override = write_override(
        settings, agent_id, action, content=content, fact_id=target_id, target=target, author=author, at=now,
        **fields,
    )
    facts = agent_facts(settings, agent_id, embed_factory).facts
    return facts.filter(pl.col("override_ids").list.contains(override.override_id))


def _structured(
    content: str, now: datetime, target: dict[str, Any] | None, fields: dict[str, Any]
) -> tuple[dict[str, Any], str]:
    """Fill type, subject, slot and value of a remembered statement from the offline rules, when they fit."""
    found = structure_statement(content, now)
    if found is None:
        return fields, content
    if target is not None and found["slot"] != target.get("slot"):
        return fields, content  # the rules read it as another attribute than the fact it corrects
    out = dict(fields)
    for name in ("type", "subject", "slot", "value"):
        if out.get(name) is None and found.get(name) is not None and (target is None or name == "value"):
            out[name] = found[name]
    stated_from = found.get("valid_from")
    if out.get("valid_from") is None and stated_from and stated_from != now.date().isoformat():
        out["valid_from"] = stated_from
    if out.get("valid_until") is None and found.get("valid_until"):
        out["valid_until"] = found["valid_until"]
    return out, found["content"]
