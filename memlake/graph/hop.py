"""Graph-assisted retrieval: a second hop from a search's first sessions to the sessions that share entities.

A question whose evidence spans sessions ("What did Caroline do after the adoption meeting?") finds one of them;
the others name the same people, places and events. The sessions of the first `seeds` distinct conversations a
search returned are the seeds; every other session gets the summed rarity (log(sessions / sessions naming it)) of
the entities it shares with them, scaled to 0..1. An entity named in more than `max_share` of the agent's
sessions (the two speakers of a chat) links everything and is left out. The search's rows are then ordered again:
a row keeps its rank score 1 / (60 + rank), lifted by (1 + weight x its session's hop score). Rows of the seeds
and rows of sessions that share nothing keep their order; nothing is added or removed.
"""

from __future__ import annotations

import math

import polars as pl

HOP_RANK_K = 60  # the rank score's constant, as RRF's
MAX_SHARE = 0.5  # an entity in more than this share of the sessions links them all: no hop through it


def seed_sessions(conversations: list[str | None], seeds: int) -> list[str]:
    """The first `seeds` distinct conversations of a search's rows, in rank order."""
    return [c for c in dict.fromkeys(conversations) if c is not None][:seeds]


def hop_scores(entities: pl.DataFrame, seeds: list[str], max_share: float = MAX_SHARE) -> dict[str, float]:
    """conversation -> how much it shares with `seeds` (0..1, 1 the most): the rarity of the shared entities."""
    sources = [set(s or ()) for s in entities["source_conversation_ids"].to_list()]
    sessions = len(set().union(*sources)) if sources else 0
    if not seeds or sessions < 2:
        return {}
    wanted = set(seeds)
    scores: dict[str, float] = {}
    for named_in in sources:
        if len(named_in) < 2 or len(named_in) > max_share * sessions or not named_in & wanted:
            continue
        rarity = math.log(sessions / len(named_in))
        for conversation in named_in - wanted:
            scores[conversation] = scores.get(conversation, 0.0) + rarity
    top = max(scores.values(), default=0.0)
    return {c: s / top for c, s in scores.items()} if top > 0 else {}


def lift_by_hop(found: pl.DataFrame, scores: dict[str, float], weight: float) -> pl.DataFrame:
    """`found` (rows in rank order, with conversation_id) ordered again by rank score x (1 + weight x hop score);
    `rank` renumbered, `graph_hop` says each row's hop score."""
    if found.height == 0:
        return found.with_columns(pl.lit(0.0).alias("graph_hop"))
    hop = [scores.get(c, 0.0) if c is not None else 0.0 for c in found["conversation_id"].to_list()]
    lifted = [(1.0 / (HOP_RANK_K + i + 1)) * (1.0 + weight * h) for i, h in enumerate(hop)]
    order = sorted(range(found.height), key=lambda i: (-lifted[i], i))
    frame = found.with_columns(pl.Series("graph_hop", hop, dtype=pl.Float64))[order]
    return frame.with_columns(pl.int_range(1, frame.height + 1, dtype=pl.Int32).alias("rank")) \
        if "rank" in frame.columns else frame
