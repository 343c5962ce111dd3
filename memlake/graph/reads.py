"""The graph reads `Memory` answers: entities, relations (as of a time), a neighbourhood, a search by words.

Plain functions over one agent's `graph/entities` and `graph/relations` frames.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np
import polars as pl

from memlake.errors import BadRequest, NotFound
from memlake.graph.mentions import normalize_relation
from memlake.graph.resolve import Embed, normalize_name
from memlake.graph.stated import SHOWN_CONFIDENCE
from memlake.schemas import GRAPH_ENTITY_TYPES
from memlake.text import content_words

MAX_DEPTH = 5
# A relation row as read: its ends by name beside their ids.
NAMED = ["source_name", "relation", "target_name"]


def _names(entities: pl.DataFrame) -> pl.DataFrame:
    return entities.select("entity_id", "name")


def _matches(entities: pl.DataFrame, name: str) -> pl.DataFrame:
    """The entities called `name` (canonical or alias, case and accents aside), or whose id it is."""
    wanted = normalize_name(name)
    keep = [
        row["entity_id"] == name or normalize_name(row["name"]) == wanted
        or any(normalize_name(a) == wanted for a in row["aliases"] or [])
        for row in entities.select("entity_id", "name", "aliases").iter_rows(named=True)
    ]
    return entities.filter(pl.Series(keep, dtype=pl.Boolean)) if keep else entities


def select_entities(entities: pl.DataFrame, name: str | None = None, type_: str | None = None) -> pl.DataFrame:
    """An agent's entities, optionally those called `name` (or with it as an alias) or of one type."""
    if type_ is not None:
        if type_.strip().lower() not in GRAPH_ENTITY_TYPES:
            raise BadRequest(f"unknown entity type {type_!r}: one of {', '.join(GRAPH_ENTITY_TYPES)}")
        entities = entities.filter(pl.col("type") == type_.strip().lower())
    if name is not None:
        entities = _matches(entities, name)
    return entities.sort("type", "name", "entity_id")


def in_force(relations: pl.DataFrame, as_of: datetime | None) -> pl.DataFrame:
    """The versions in force at `as_of` (said by then, valid_from <= as_of < valid_until); None: the active ones."""
    if as_of is None:
        return relations.filter(pl.col("status") == "active")
    return relations.filter(
        (pl.col("created_at") <= as_of) & (pl.col("valid_from") <= as_of)
        & (pl.col("valid_until").is_null() | (pl.col("valid_until") > as_of))
    )


def named(relations: pl.DataFrame, entities: pl.DataFrame) -> pl.DataFrame:
    """Relation rows with their ends' names (`source_name`, `target_name`) first."""
    names = _names(entities)
    frame = relations.join(names.rename({"entity_id": "source_entity_id", "name": "source_name"}),
                           on="source_entity_id", how="left")
    frame = frame.join(names.rename({"entity_id": "target_entity_id", "name": "target_name"}),
                       on="target_entity_id", how="left")
    return frame.select(*NAMED, *[c for c in frame.columns if c not in NAMED])


def select_relations(relations: pl.DataFrame, entities: pl.DataFrame, entity: str | None = None,
                     relation: str | None = None, as_of: datetime | None = None) -> pl.DataFrame:
    """An agent's relation versions (every version; with `as_of`, those in force then), optionally those with
    `entity` at either end or of one relation, newest first."""
    if as_of is not None:
        relations = in_force(relations, as_of)
    if relation is not None:
        relations = relations.filter(pl.col("relation") == normalize_relation(relation))
    if entity is not None:
        ids = _matches(entities, entity)["entity_id"].to_list()
        relations = relations.filter(pl.col("source_entity_id").is_in(ids) | pl.col("target_entity_id").is_in(ids))
    return named(relations, entities).sort("valid_from", "relation_id", "version", descending=[True, False, False])


def neighborhood(relations: pl.DataFrame, entities: pl.DataFrame, entity: str, depth: int = 2,
                 as_of: datetime | None = None) -> pl.DataFrame:
    """The relations within `depth` hops of `entity` (either direction), in force at `as_of` (None: the active
    ones) and shown (confidence at least `SHOWN_CONFIDENCE`: the rest are candidates, in `select_relations`' history
    only), each with the hop (`depth`) at which it was first reached."""
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_DEPTH:
        raise BadRequest(f"depth is a whole number from 1 to {MAX_DEPTH}, got {depth!r}")
    start = _matches(entities, entity)
    if start.height == 0:
        raise NotFound(f"no entity called {entity!r}: see `entities` for the names")
    if start.height > 1:
        shown = ", ".join(f"{r['name']} ({r['type']}, {r['entity_id']})" for r in start.iter_rows(named=True))
        raise BadRequest(f"{entity!r} names {start.height} entities: {shown}; ask by entity id")
    edges = in_force(relations, as_of).filter(pl.col("confidence") >= SHOWN_CONFIDENCE)
    reached = set(start["entity_id"].to_list())
    hop_of: dict[tuple[str, int], int] = {}
    for hop in range(1, depth + 1):
        touching = edges.filter(pl.col("source_entity_id").is_in(list(reached))
                                | pl.col("target_entity_id").is_in(list(reached)))
        for rid, version, source, target in touching.select(
                "relation_id", "version", "source_entity_id", "target_entity_id").iter_rows():
            hop_of.setdefault((rid, version), hop)
            reached.update((source, target))
    hops = pl.DataFrame({"relation_id": [k[0] for k in hop_of], "version": [k[1] for k in hop_of],
                         "depth": list(hop_of.values())},
                        schema={"relation_id": pl.String, "version": pl.Int32, "depth": pl.Int32})
    frame = named(edges.join(hops, on=["relation_id", "version"], how="inner"), entities)
    return frame.select("depth", *[c for c in frame.columns if c != "depth"]).sort("depth", *NAMED)


def search_graph(entities: pl.DataFrame, relations: pl.DataFrame, query: str, k: int, embed: Embed | None,
                 as_of: datetime | None = None) -> pl.DataFrame:
    """Entities (by name and aliases) and relations in force (by "source relation target") that match `query`'s
    words, best first; with an embedder, the texts' cosine to the query counts too."""
    current = named(in_force(relations, as_of), entities)
    rows: list[dict[str, object]] = []
    for e in entities.iter_rows(named=True):
        text = " / ".join([e["name"], *(e["aliases"] or [])])
        rows.append({"kind": "entity", "key": e["entity_id"], "text": f"{text} ({e['type']})", "match": text,
                     "conversation_ids": e["source_conversation_ids"], "message_ids": e["source_message_ids"]})
    for r in current.iter_rows(named=True):
        text = f"{r['source_name']} {r['relation'].replace('_', ' ')} {r['target_name']}"
        rows.append({"kind": "relation", "key": f"{r['relation_id']}@{r['version']}", "text": text, "match": text,
                     "conversation_ids": r["source_conversation_ids"], "message_ids": r["source_message_ids"]})
    asked = {_stem(w) for w in content_words(query)}
    scores = [len(asked & {_stem(w) for w in content_words(str(row["match"]))}) / len(asked) if asked else 0.0
              for row in rows]
    if embed is not None and rows:
        vectors = embed([query] + [str(row["match"]) for row in rows])
        cosines = np.asarray(vectors[1:] @ vectors[0]).tolist()
        scores = [0.5 * s + 0.5 * max(c, 0.0) for s, c in zip(scores, cosines, strict=True)]
    ranked = sorted((s, i) for i, s in enumerate(scores) if s > 0 and (embed is None or _lexical_or_close(s)))
    ranked = sorted(ranked, key=lambda p: (-p[0], p[1]))[:k]
    out = [{"rank": n + 1, "score": round(s, 4), **{c: rows[i][c] for c in ("kind", "key", "text")},
            "conversation_id": (rows[i]["conversation_ids"] or [None])[0],  # type: ignore[index]
            "conversation_ids": rows[i]["conversation_ids"], "message_ids": rows[i]["message_ids"],
            "mode": "hybrid" if embed is not None else "full_text"} for n, (s, i) in enumerate(ranked)]
    schema: dict[str, pl.DataType] = {
        "rank": pl.Int32(), "score": pl.Float64(), "kind": pl.String(), "key": pl.String(), "text": pl.String(),
        "conversation_id": pl.String(), "conversation_ids": pl.List(pl.String()),
        "message_ids": pl.List(pl.String()), "mode": pl.String(),
    }
    return pl.DataFrame(out, schema=schema)


def _stem(word: str) -> str:
    """A word without a plain English ending, so "live" finds "lives in" and "working" finds "works at"."""
    for ending in ("ing", "es", "ed", "s"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)].rstrip("e")
    return word.rstrip("e") if len(word) > 3 else word


def _lexical_or_close(score: float) -> bool:
    """With an embedder every row has some cosine: keep those a word matched or that are close (0.3 and up)."""
    return score >= 0.3
