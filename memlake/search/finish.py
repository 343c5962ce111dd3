"""Step 5 of a search: the hits' whole rows, each turn with its adjacent turns as `context`, as a result frame.

Every result row carries `conversation_id` and `message_ids`, best match first: for episode and
fact hits the message ids are ordered by how well each message's turn matches the query.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import numpy as np
import polars as pl

from memlake.chunks import chunk_id
from memlake.schemas import CHUNK_INDEX
from memlake.search.fusion import Candidate
from memlake.search.params import IndexSpec, turn_key
from memlake.search.plan import Plan
from memlake.search.rerank import Scoring, mmr_picks
from memlake.text import content_words
from memlake.vectors import VECTOR, Filters, Snapshot, VectorStore, key_scope


def fetch_rows(
    store: VectorStore,
    snapshot: Snapshot | None,
    plan: Plan,
    light: dict[str, dict[str, Any]],
    columns: list[str],
    vectors: dict[str, np.ndarray],
    excerpts: Iterable[str] = (),
) -> dict[str, dict[str, Any]]:
    """The whole rows of `light`'s keys, of the turns `window_turns` around each (context) and of the `excerpts`
    (the passages long turns' hits return): from the snapshot, else one LanceDB fetch. Their stored vectors go
    into `vectors`."""
    spec, reach = plan.spec, plan.params.window_turns
    wanted = set(light) | set(excerpts)
    for row in light.values():
        for index in range(int(row["turn_start"]) - reach, int(row["turn_end"]) + reach + 1):
            if index >= 0:
                wanted.add(turn_key(plan.agent_id, row["conversation_id"], index))
    turns: dict[str, dict[str, Any]] = {}
    if wanted:
        if snapshot is not None:
            fetched = list(snapshot.by_keys(wanted, columns).values())
        else:
            fetched = store.rows(
                spec.table, plan.agent_id, Filters(extra=(key_scope(spec.key, wanted),)), columns=columns
            ).to_dicts()
        for row in fetched:
            vec = row.pop(VECTOR, None)
            if vec is not None:
                vectors[row[spec.key]] = np.asarray(vec, dtype=np.float32)
            turns[row[spec.key]] = row
    return turns


def passage_keys(agent_id: str, row: dict[str, Any], snapshot: Snapshot | None, most: int) -> list[str]:
    """The keys a turn's passages would have (a long turn has up to `most`, numbered from 0): those the snapshot
    holds, or without one every possible key (a fetch returns the rows that exist)."""
    start, end = int(row["turn_start"]), int(row["turn_end"])
    keys = [chunk_id(agent_id, row["conversation_id"], "passage", start, end, part) for part in range(most)]
    if snapshot is None:
        return keys
    held = 0
    while held < len(keys) and keys[held] in snapshot.positions:  # numbered from 0 with no gaps
        held += 1
    return keys[:held]


def nearest_passage(keys: list[str], rows: dict[str, dict[str, Any]], vectors: dict[str, np.ndarray],
                    query: str, query_vector: np.ndarray | None) -> str | None:
    """Of a long turn's passages, the one nearest the question: the one holding most of the question's content
    words, each weighed by how few of the passages hold it, then by its stored vector (the first passage when
    neither tells)."""
    held = [key for key in keys if key in rows]
    if not held:
        return None
    wanted = content_words(query)
    said = {key: content_words(str(rows[key].get("text") or "")) for key in held}
    # a word every passage holds names the turn's topic, not the part asked about: the fewer passages hold a
    # word, the more it tells them apart ("what juice for the sourdough starter" in an answer on starters)
    weight = {word: math.log((1 + len(held)) / (1 + sum(word in words for words in said.values())))
              for word in wanted}
    with_vectors = query_vector is not None and all(key in vectors for key in held)

    def nearness(key: str) -> tuple[float, float]:
        shared = round(sum(weight[word] for word in wanted & said[key]), 9)
        return shared, float(vectors[key] @ query_vector) if with_vectors else 0.0  # type: ignore[operator]

    return max(held, key=nearness)


def with_whole_rows(
    plan: Plan, candidates: dict[str, Candidate], keys: Iterable[str], turns: dict[str, dict[str, Any]]
) -> dict[str, Candidate]:
    """The candidates of `keys` with their fetched rows, those the filters (and result kinds) accept."""
    eligible = replace(plan.base, kinds=plan.spec.result_kinds)
    return {k: candidates[k].with_row(turns[k]) for k in keys if k in turns and eligible.accepts(turns[k])}


def result_frame(
    plan: Plan,
    scoring: Scoring,
    candidates: dict[str, Candidate],
    vectors: dict[str, np.ndarray],
    turns: dict[str, dict[str, Any]],
    mode: str,
    note: str | None,
) -> pl.DataFrame:
    """The `k` best candidates in MMR order, as rows of the result frame."""
    keys = list(candidates)
    most = scoring.most_accessed(keys)
    scored = []
    for key in keys:
        boost, rec, importance, access, mention = scoring.boost(key, candidates[key].row, most)
        fused = candidates[key].fused
        scored.append({"score": fused * boost, "recency": rec, "importance": importance, "access": access,
                       "mention": mention, "boost": boost})
    matrix = None
    if plan.params.mmr_lambda < 1.0 and all(k in vectors for k in keys):
        matrix = np.stack([vectors[k] for k in keys])
    own = [candidates[k].rrf for k in keys]
    decay, spread = plan.params.same_conversation_decay, plan.spec.spread_column
    groups = sizes = None
    if spread and decay < 1.0:
        groups = [candidates[k].row.get(spread) for k in keys]
        sizes = [len(returned_text(candidates[k], turns).split()) for k in keys]
    picks = mmr_picks([s["score"] for s in scored], matrix, plan.params.mmr_lambda, plan.params.k, own,
                      groups, decay, sizes)
    out = []
    for rank, (i, ordered_by) in enumerate(picks, start=1):
        # `score` is what ordered the list (the spread over conversations and near-duplicates included), so it
        # never rises down the list; `own_score` is the hit's before the spread
        row = {"rank": rank, **result_row(keys[i], candidates[keys[i]], mode, note, turns), **scored[i],
               "score": ordered_by, "own_score": scored[i]["score"]}
        row.update(context(plan.spec, candidates[keys[i]].row, turns, plan.params.window_turns))
        row.update({c: candidates[keys[i]].row.get(c) for c in plan.spec.extra_columns})
        out.append(row)
    if not out:
        return empty_result(plan.spec)
    # types given up front: polars then skips inferring them (~0.8 ms a search)
    return pl.DataFrame(out, schema=result_schema(plan.spec), strict=False)


def result_row(
    key: str, cand: Candidate, mode: str, note: str | None, fetched: dict[str, dict[str, Any]] | None = None
) -> dict[str, Any]:
    """What a result row says of its candidate, beyond its score and boosts. A hit on a long turn through one of
    its passages returns that passage (`excerpt`), with the turn's key and ids: `Memory.turns` gives the whole."""
    return {
        "text": returned_text(cand, fetched),
        "excerpt": cand.excerpt_key() in (fetched or {}),
        "agent_id": cand.row["agent_id"],
        "conversation_id": cand.row.get("conversation_id"),
        "message_ids": list(cand.row.get("message_ids") or []),
        "created_at": cand.row.get("created_at"),
        "kind": cand.row.get("kind"),
        "key": key,
        "rrf": cand.rrf,
        "vector_rank": cand.ranks.get("vector"),
        "text_rank": cand.ranks.get("text"),
        "vector_match": cand.matched.get("vector") or None,
        "text_match": cand.matched.get("text") or None,
        "context_lift": cand.lift,
        "standing": cand.standing,
        "mode": mode,
        "note": note,
        "turn_start": cand.row.get("turn_start"),
        "turn_end": cand.row.get("turn_end"),
    }


def returned_text(cand: Candidate, fetched: dict[str, dict[str, Any]] | None) -> str:
    """The text a hit returns: the passage of a long turn that matched (its excerpt), else the row's own."""
    excerpt = (fetched or {}).get(cand.excerpt_key() or "")
    return str(excerpt["text"] if excerpt is not None else cand.row["text"])


def context(spec: IndexSpec, row: dict[str, Any], turns: dict[str, dict[str, Any]], window: int) -> dict[str, Any]:
    """The hit with its `window` adjacent turns before and after, as text and message ids."""
    if not spec.expand_windows or window <= 0 or row.get("turn_start") is None or row.get("kind") != "turn":
        return {"context": row["text"], "context_message_ids": list(row.get("message_ids") or [])}
    parts: list[str] = []
    ids: list[str] = []
    for index in range(int(row["turn_start"]) - window, int(row["turn_end"]) + window + 1):
        turn = turns.get(turn_key(row["agent_id"], row["conversation_id"], index))
        if turn is not None:
            parts.append(turn["text"])
            ids.extend(turn.get("message_ids") or [])
    return {"context": "\n".join(parts), "context_message_ids": ids}


def messages_best_first(
    turn_store: VectorStore, found: pl.DataFrame, agent_id: str, query: str, vector: np.ndarray | None
) -> pl.DataFrame:
    """Episode and fact hits with each row's message_ids best match first: by the cosine of each message's
    turn vector to the query's, or with no vectors by the query words the turn holds; ties and messages
    whose turn is not indexed keep their order, after the others."""
    conversations = sorted({c for c in found["conversation_id"].to_list() if c})
    ids = {m for row in found["message_ids"].to_list() for m in row}
    if len(ids) < 2 or not conversations or not turn_store.exists(CHUNK_INDEX):
        return found
    with_vectors = vector is not None and turn_store.has_vectors(CHUNK_INDEX)
    rows = turn_store.rows(
        CHUNK_INDEX, agent_id, Filters(conversation_ids=tuple(conversations), kinds=("turn",)),
        columns=["message_ids", "text", *([VECTOR] if with_vectors else [])],
    )
    words = content_words(query)
    match: dict[str, float] = {}
    for row in rows.iter_rows(named=True):
        if vector is not None and with_vectors and row[VECTOR] is not None:
            turn = np.asarray(row[VECTOR], dtype=np.float32)
            value = float(turn @ vector) / (float(np.linalg.norm(turn) * np.linalg.norm(vector)) or 1.0)
        else:
            value = float(len(words & content_words(row["text"])))
        for message_id in row["message_ids"] or []:
            match[message_id] = value
    ordered = [
        sorted(row, key=lambda m: (m not in match, -match.get(m, 0.0))) for row in found["message_ids"].to_list()
    ]
    return found.with_columns(pl.Series("message_ids", ordered, dtype=found.schema["message_ids"]))


def _result_schema() -> dict[str, Any]:
    return {
        "rank": pl.Int32,
        "score": pl.Float64,
        "own_score": pl.Float64,
        "text": pl.String,
        "excerpt": pl.Boolean,
        "agent_id": pl.String,
        "conversation_id": pl.String,
        "message_ids": pl.List(pl.String),
        "created_at": pl.Datetime("us", "UTC"),
        "kind": pl.String,
        "key": pl.String,
        "rrf": pl.Float64,
        "vector_rank": pl.Int32,
        "text_rank": pl.Int32,
        "vector_match": pl.String,
        "text_match": pl.String,
        "context_lift": pl.Float64,
        "standing": pl.Float64,
        "recency": pl.Float64,
        "importance": pl.Float64,
        "access": pl.Float64,
        "mention": pl.Float64,
        "boost": pl.Float64,
        "mode": pl.String,
        "note": pl.String,
        "turn_start": pl.Int32,
        "turn_end": pl.Int32,
        "context": pl.String,
        "context_message_ids": pl.List(pl.String),
    }


# the types of the index columns a scope's rows carry beyond the common ones (`IndexSpec.extra_columns`)
_EXTRA_TYPES = {
    "role": pl.String, "speaker": pl.String, "title": pl.String, "fact_id": pl.String, "version": pl.Int32,
    "type": pl.String, "subject": pl.String, "slot": pl.String, "status": pl.String,
}


def result_schema(spec: IndexSpec) -> dict[str, Any]:
    """The columns of a search result in `spec`'s scope, whether or not anything was found."""
    return {**_result_schema(), **{column: _EXTRA_TYPES[column] for column in spec.extra_columns}}


def empty_result(spec: IndexSpec) -> pl.DataFrame:
    return pl.DataFrame(schema=result_schema(spec))
