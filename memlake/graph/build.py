"""The graph tables from episodes and facts: mentions read, entities resolved, relation versions folded."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime

import polars as pl

from memlake.distill.models import USER_SUBJECT
from memlake.facts.overrides import read_forgets
from memlake.graph.mentions import read_said
from memlake.graph.resolve import Embed, Merge, Node, Split, normalize_name, resolve, stable_id
from memlake.graph.splits import read_splits
from memlake.graph.turn_names import from_turns
from memlake.graph.versions import fold_versions
from memlake.lake import Lake, conform
from memlake.schemas import ENTITIES, ENTITY_MERGES, MENTIONS, RELATIONS, TURNS, Table
from memlake.settings import Settings


@dataclass(frozen=True)
class Graph:
    """The graph tables, in their schemas; `turn_reads`: every read turn's reading, kept for the next build."""

    entities: pl.DataFrame
    relations: pl.DataFrame
    merges: pl.DataFrame
    mentions: pl.DataFrame
    turn_reads: pl.DataFrame


def _frame(table: Table, rows: list[dict[str, object]]) -> pl.DataFrame:
    frame = pl.from_arrow(conform(table, rows))
    assert isinstance(frame, pl.DataFrame)
    return frame


def canonical(nodes: list[Node]) -> Node:
    """The form an entity is called by: the user as such, else a typed form before an untyped one (its type is
    the entity's), the fullest name, the most said, then by name."""
    user = next((n for n in nodes if n.is_user), None)
    if user is not None:
        return user
    return min(nodes, key=lambda n: (n.type == "concept", -len(normalize_name(n.name).split()), -len(n.mentions),
                                     n.name, n.key))


def entity_id(nodes: list[Node]) -> str:
    """Named for the entity's first form said, so a form seen later (or split off) leaves it as it was."""
    first = nodes[0]  # resolve sorts an entity's nodes by first seen
    return stable_id("e_", first.agent_id, first.type, USER_SUBJECT if first.is_user else first.key)


def build_graph(
    episodes: pl.DataFrame,
    facts: pl.DataFrame,
    embed: Embed | None,
    threshold: float,
    forgotten: Iterable[tuple[str, str | None]] = (),
    splits: Iterable[Split] = (),
    forgotten_facts: Iterable[tuple[str, str, datetime]] = (),
    turns: pl.DataFrame | None = None,
    turn_reads: pl.DataFrame | None = None,
) -> Graph:
    """Entities, relation versions, merges and mentions of every agent; the same inputs give the same tables.
    `forgotten` and `forgotten_facts` are the forget log's entries (see `read_said`); `turns`, when given, add
    the names every person's turn says (`turn_names`), reusing the readings `turn_reads` kept of the same texts."""
    in_turns = from_turns(turns if turns is not None else Lake.empty(TURNS), turn_reads)
    said = read_said(episodes, facts, forgotten, forgotten_facts, (in_turns.mentions, in_turns.observations),
                     in_turns.evidence)
    # the one name the user speaks under is theirs: its mentions ("Hey Tamsin") are the user's (`resolve`); where
    # several people speak as the user, which is the user is not said
    called = {agent: next(iter(names)) for agent, names in in_turns.user_speakers.items() if len(names) == 1}
    said = replace(said, user_names={agent: said.user_names.get(agent, set()) | ({called[agent]} if agent in called
                                                                                else set())
                                     for agent in said.user_names.keys() | called.keys()})
    resolution = resolve(said, embed, threshold, splits)
    id_of: dict[int, str] = {}
    entity_rows = []
    mention_rows: dict[tuple[str, str, str], dict[str, object]] = {}
    for nodes in resolution.entities:
        eid = entity_id(nodes)
        main = canonical(nodes)
        id_of.update({id(n): eid for n in nodes})
        mentions = [m for n in nodes for m in n.mentions]
        for m in mentions:
            for message in m.message_ids:
                mention_rows.setdefault((eid, message, m.name), {
                    "agent_id": m.agent_id, "entity_id": eid, "name": m.name, "type": m.type,
                    "conversation_id": m.conversation_id, "message_id": message, "said_at": m.at})
        aliases = {n.name for n in nodes} - {main.name}
        name = main.name
        if main.is_user:
            aliases |= said.user_names.get(main.agent_id, set())
            # one person speaks as the user: the entity is called by their name, "user" an alias (lookups by either)
            name = called.get(main.agent_id, USER_SUBJECT)
            aliases = (aliases | {USER_SUBJECT}) - {name}
        entity_rows.append({
            "entity_id": eid, "agent_id": main.agent_id, "name": name, "type": main.type,
            "aliases": sorted(aliases), "first_seen_at": min(m.at for m in mentions),
            "last_seen_at": max(m.at for m in mentions),
            "mention_count": len({(m.conversation_id, m.name, m.message_ids) for m in mentions}),
            "source_conversation_ids": sorted({m.conversation_id for m in mentions if m.conversation_id}),
            "source_message_ids": sorted({i for m in mentions for i in m.message_ids}),
        })
    resolved = []
    for o in said.observations:
        source = resolution.node_of[(o.agent_id, o.conversation_id, *_form(o.source, o.source_type))]
        target = resolution.node_of[(o.agent_id, o.conversation_id, *_form(o.target, o.target_type))]
        resolved.append((id_of[id(source)], id_of[id(target)], o))
    versions = fold_versions(resolved)
    return Graph(
        entities=_frame(ENTITIES, entity_rows).sort("agent_id", "type", "name", "entity_id"),
        relations=_frame(RELATIONS, [v.row() for v in versions]).sort("agent_id", "relation_id", "version"),
        merges=_frame(ENTITY_MERGES, [_merge_row(m, id_of) for m in resolution.merges]).sort("agent_id", "merge_id"),
        mentions=_frame(MENTIONS, list(mention_rows.values())).sort("agent_id", "entity_id", "said_at", "message_id"),
        turn_reads=in_turns.reads,
    )


def build_home_graph(settings: Settings, episodes: pl.DataFrame, facts: pl.DataFrame, embed: Embed | None,
                     turns: pl.DataFrame | None = None, turn_reads: pl.DataFrame | None = None) -> Graph:
    """`build_graph` of a home's episodes, facts and turns, leaving out what its forget log names and keeping apart the
    merges its users split."""
    forgets = read_forgets(settings)
    forgotten = [(f.agent_id, f.target if f.scope == "conversation" else None)
                 for f in forgets if f.scope in ("agent", "conversation")]
    forgotten_facts = [(f.agent_id, f.target, f.written_at) for f in forgets if f.scope == "fact" and f.target]
    return build_graph(episodes, facts, embed, settings.graph_entity_cosine, forgotten, read_splits(settings),
                       forgotten_facts, turns, turn_reads)


def _form(name: str, type_: str) -> tuple[str, str]:
    """An end of a relation as `Resolution.node_of` keys it: (type, name lowercased)."""
    return ("person", USER_SUBJECT) if name.strip().lower() == USER_SUBJECT else (type_, name.strip().lower())


def _merge_row(merge: Merge, id_of: dict[int, str]) -> dict[str, object]:
    return {
        "merge_id": merge.merge_id, "agent_id": merge.agent_id, "entity_id": id_of[id(merge.kept)],
        "type": merge.type, "kept_name": merge.kept.key, "merged_name": merge.merged.key, "rule": merge.rule,
        "reason": merge.reason, "score": merge.score, "undone_by": merge.undone_by,
    }


def counts_by_type(entities: pl.DataFrame) -> dict[str, int]:
    return dict(sorted(Counter(entities["type"].to_list()).items()))
