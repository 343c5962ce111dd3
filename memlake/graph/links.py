"""Graph-assisted retrieval: the turns a question's entities, and its first hits' entities, are named in.

A question whose evidence spans sessions names a person, a place or a book once ("When did Jon visit Rome?"), or its
first hits do ("my snake Susie"); other turns naming them, or an entity a stated relation ties them to, are likely
the rest of the answer though they share few of the question's words. `GraphLinks` holds one agent's turns by the
entities they name (the graph's mentions table read against the turns) and the relations between entities;
`pulled` scores the turns a search's entities reach, for the search to fuse as one more candidate list
(`memlake.search.fusion.add_graph_list`).

An entity's pull is its rarity, log(sessions / sessions naming it): an entity named in more than `MAX_SHARE` of the
agent's sessions (the two speakers of a chat) links everything and pulls nothing. A neighbour by a relation pulls
at `NEIGHBOUR_SHARE` of its rarity; a seed entity (named in a first hit, not in the question) at `SEED_SHARE`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime

import polars as pl

from memlake.schemas import ENTITIES, MENTIONS, RELATIONS, TURNS, Table
from memlake.text import words

MAX_SHARE = 0.5  # an entity in more than this share of the sessions links them all: no pull through it
NEIGHBOUR_SHARE = 0.5  # a related entity pulls at this share of its rarity
SEED_SHARE = 0.5  # an entity of a first hit (not named in the question) pulls at this share

Place = tuple[str, int]  # (conversation id, turn index): one turn


@dataclass(frozen=True)
class GraphLinks:
    """One agent's turns by the entities they name, and the entities each relation ties together."""

    places: dict[str, tuple[Place, ...]]  # entity id -> the turns naming it
    entities_at: dict[Place, tuple[str, ...]]  # turn -> the entity ids it names
    times: dict[Place, datetime | None]  # turn -> when it was said
    rarity: dict[str, float]  # entity id -> log(sessions / its sessions); only entities that may pull
    names: dict[tuple[str, ...], str]  # a name's or alias's words (lowercase) -> entity id
    neighbours: dict[str, tuple[str, ...]]  # entity id -> the entities a relation in force ties it to

    @classmethod
    def of_agent(cls, read: Callable[[Table], pl.DataFrame], agent_id: str) -> GraphLinks:
        """The agent's links, from `read` (a lake table whole: Memory's cached read)."""
        mine = [read(table).filter(pl.col("agent_id") == agent_id) for table in (MENTIONS, TURNS, ENTITIES, RELATIONS)]
        mentions, turns, entities, relations = mine
        return cls.build(mentions, turns, entities, relations.filter(pl.col("status") == "active"))

    @classmethod
    def build(cls, mentions: pl.DataFrame, turns: pl.DataFrame, entities: pl.DataFrame,
              relations: pl.DataFrame) -> GraphLinks:
        """From one agent's mentions, turns (message_id, conversation_id, turn_index, created_at), entities and
        relation versions in force."""
        placed = mentions.select("entity_id", "message_id").join(
            turns.select("message_id", "conversation_id", "turn_index", "created_at"), on="message_id", how="inner")
        places: defaultdict[str, set[Place]] = defaultdict(set)
        entities_at: defaultdict[Place, set[str]] = defaultdict(set)
        times: dict[Place, datetime | None] = {}
        for entity, _, conversation, index, at in placed.iter_rows():
            place = (conversation, int(index))
            places[entity].add(place)
            entities_at[place].add(entity)
            times[place] = at
        sessions = turns["conversation_id"].n_unique()  # the agent's sessions, named in or not
        rarity = {}
        for entity, where in places.items():
            named_in = len({conversation for conversation, _ in where})
            if sessions >= 2 and named_in <= MAX_SHARE * sessions:
                rarity[entity] = math.log(sessions / named_in)
        names: dict[tuple[str, ...], str] = {}
        for entity, name, aliases in entities.select("entity_id", "name", "aliases").iter_rows():
            for form in [name, *(aliases or [])]:
                said = tuple(words(form))
                if said and entity in rarity:
                    names.setdefault(said, entity)
        neighbours: defaultdict[str, set[str]] = defaultdict(set)
        for source, target in relations.select("source_entity_id", "target_entity_id").iter_rows():
            if source and target and source != target:
                neighbours[source].add(target)
                neighbours[target].add(source)
        return cls({e: tuple(sorted(p)) for e, p in places.items()},
                   {p: tuple(sorted(e)) for p, e in entities_at.items()}, times, rarity, names,
                   {e: tuple(sorted(n)) for e, n in neighbours.items()})

    def named_in(self, query: str) -> list[str]:
        """The entities the query names (a name's or an alias's words in a row, case aside) that may pull."""
        said = words(query)
        found = []
        for start in range(len(said)):
            for end in range(len(said), start, -1):
                entity = self.names.get(tuple(said[start:end]))
                if entity is not None and entity not in found:
                    found.append(entity)
                    break
        return found

    def pulled(self, query: str, seeds: Iterable[Place], depth: int = 1) -> list[tuple[Place, float]]:
        """The turns the query's entities, and the `seeds` turns' entities, are named in, with how hard they are
        pulled (the summed pull of the entities, best first; ties in place order). `depth` 2 adds the entities a
        relation ties them to."""
        pull: dict[str, float] = {}
        for entity in self.named_in(query):
            pull[entity] = self.rarity[entity]
        for place in seeds:
            for entity in self.entities_at.get(place, ()):
                if entity in self.rarity:
                    pull[entity] = max(pull.get(entity, 0.0), SEED_SHARE * self.rarity[entity])
        if depth >= 2:
            for entity, value in list(pull.items()):
                for neighbour in self.neighbours.get(entity, ()):
                    if neighbour in self.rarity:
                        # as hard as what reached it, at most as hard as its own rarity, shared
                        share = NEIGHBOUR_SHARE * min(value, self.rarity[neighbour])
                        pull[neighbour] = max(pull.get(neighbour, 0.0), share)
        scores: defaultdict[Place, float] = defaultdict(float)
        for entity, value in pull.items():
            for place in self.places.get(entity, ()):
                scores[place] += value
        return sorted(scores.items(), key=lambda item: (-item[1], item[0]))
