"""What a row of a search index is and how it gets its vector: the index schema, the rows pooled from their
parts, the keys whose vectors are read from their turn's model pass, and a `sync`'s counts.

Part of `memlake.vectors`, which re-exports these names.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from memlake.chunks import key_span
from memlake.embedding_cache import EmbeddingCache
from memlake.embedding_onnx import Span

VECTOR = "vector"
TEXT = "text"
NO_EMBEDDER = "none"
# Sessions get the normalised mean of their turns' vectors (windows too, when the caller pools them), a long
# turn (one with passage keys) the mean of its passages', and, when the caller pools turns, a turn with sentence
# keys the mean of its sentences' (see memlake.chunks): the kind pooled -> the kinds of the rows it is pooled from,
# in pooling order.
POOLED_KINDS = ("session",)
POOLED_FROM = {"turn": ("passage", "sentence"), "window": ("turn",), "session": ("turn",)}
# Below this many rows a flat (exact) scan is fast enough; above it an IVF index helps.
# Columns only the writer uses (change detection, partitions); a snapshot leaves them out.
WRITE_ONLY_COLUMNS = ("embed_text", "text_sha256", "token_count", "day", "embedder")

Embed = Callable[[list[str]], np.ndarray]
# texts and the spans of each -> the texts' vectors and each span's (None: the span was cut off)
EmbedSpans = Callable[[list[str], list[list[Span]]], tuple[np.ndarray, list[list[np.ndarray | None]]]]


@dataclass
class SyncResult:
    """What one `sync` did to a table."""

    rows: int = 0
    embedded: int = 0  # texts the model embedded (each distinct text once, none the cache had)
    from_cache: int = 0  # distinct texts whose vectors came from the embedding cache
    reused: int = 0
    pooled: int = 0
    spanned: int = 0  # keys whose vector was read from their turn's model pass (that pass counts as embedded)
    text_only: int = 0  # keys with no vector of their own (a long turn's passages past its embedding budget)
    deleted: int = 0
    embedder: str = NO_EMBEDDER
    rebuilt_table: bool = False
    embed_seconds: float = 0.0


def pool_groups(rows: pl.DataFrame, pool_by: str) -> list[tuple[Any, Any]]:
    """Each row's pooling group: its agent and its `pool_by` value. Conversation ids are the export's and repeat
    across agents (LoCoMo's "session_3" is ten agents' conversation): one agent's rows never pool another's."""
    agents = rows["agent_id"].to_list() if "agent_id" in rows.columns else [None] * rows.height
    return list(zip(agents, rows[pool_by].to_list(), strict=True))


def _pooled_turns(rows: pl.DataFrame, pool_by: str, pooled_kinds: Sequence[str]) -> set[int]:
    """The positions of the turn rows whose vector is pooled from their part rows (the same group and turn): every
    turn with passage rows, and with "turn" in `pooled_kinds` every turn with sentence rows."""
    if "kind" not in rows.columns:
        return set()
    part_kinds = POOLED_FROM["turn"] if "turn" in pooled_kinds else ("passage",)
    keyed = list(zip(pool_groups(rows, pool_by), rows["turn_start"].to_list(), rows["kind"].to_list(), strict=True))
    parted = {(group, start) for group, start, kind in keyed if kind in part_kinds}
    if not parted:
        return set()
    return {i for i, (group, start, kind) in enumerate(keyed) if kind == "turn" and (group, start) in parted}


def _read_spans(
    rows: pl.DataFrame,
    vectors: list[np.ndarray | None],
    spanned: list[int],
    to_embed: list[int],
    pool_by: str,
    embed_spans: EmbedSpans,
    cache: EmbeddingCache | None,
    result: SyncResult,
) -> list[int]:
    """Give the `spanned` rows (keys inside their turn's text) the vectors of their spans in their turns' model
    passes, from `cache` when it has them; a turn in `to_embed` takes its vector from its pass and leaves the list.
    Returns the rows that still need their own text embedded (no turn row, or a span the model's limit cut off)."""
    shas = rows["text_sha256"].to_list()
    texts = rows["embed_text"].to_list()
    known = cache.lookup(shas[i] for i in spanned) if cache is not None else {}
    result.from_cache += sum(1 for i in spanned if shas[i] in known)
    starts = rows["turn_start"].to_list()
    groups = pool_groups(rows, pool_by)
    turn_rows = {(groups[i], starts[i]): i for i, kind in enumerate(rows["kind"].to_list()) if kind == "turn"}
    by_turn: dict[int, list[tuple[int, Span]]] = {}
    left: list[int] = []
    for i in spanned:
        if shas[i] in known:
            vectors[i] = known[shas[i]]
            continue
        turn = turn_rows.get((groups[i], starts[i]))
        span = key_span(texts[turn], texts[i]) if turn is not None else None
        if turn is None or span is None:
            left.append(i)
        else:
            by_turn.setdefault(turn, []).append((i, span))
    if not by_turn:
        return left
    turns = list(by_turn)
    turn_vectors, span_vectors = embed_spans([texts[t] for t in turns], [[s for _, s in by_turn[t]] for t in turns])
    result.embedded += len(turns)
    waiting = set(to_embed)
    fresh: dict[str, np.ndarray] = {}
    for turn, turn_vector, keys in zip(turns, turn_vectors, span_vectors, strict=True):
        if turn in waiting:
            vectors[turn] = turn_vector
            fresh[shas[turn]] = turn_vector
        for (i, _), vector in zip(by_turn[turn], keys, strict=True):
            if vector is None:
                left.append(i)
            else:
                vectors[i] = vector
                fresh[shas[i]] = vector
                result.spanned += 1
    to_embed[:] = [i for i in to_embed if vectors[i] is None]  # the turns read above are embedded
    if cache is not None and fresh:
        cache.add(list(fresh), np.stack(list(fresh.values())))
    return left


def index_schema(base: pa.Schema, dim: int) -> pa.Schema:
    """A lake table's columns plus `importance`, `day`, `embedder` and, when there is a model, the vector."""
    fields = [f for f in base if f.name not in ("day", "embedder", VECTOR)]
    if "importance" not in base.names:
        fields.append(pa.field("importance", pa.float64()))  # null: neutral for the importance boost
    fields += [pa.field("day", pa.string()), pa.field("embedder", pa.string())]
    if dim > 0:
        fields.append(pa.field(VECTOR, pa.list_(pa.float32(), dim)))
    return pa.schema(fields)


def _matrix(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    dim = array.type.list_size
    return np.asarray(array.flatten().to_numpy(zero_copy_only=False), dtype=np.float32).reshape(-1, dim)


def _conform(frame: pl.DataFrame, schema: pa.Schema, vectors: list[np.ndarray | None] | None, dim: int) -> pa.Table:
    arrow = frame.to_arrow()
    columns = []
    for f in schema:
        if f.name == VECTOR:
            assert vectors is not None
            filled = [v if v is not None else np.zeros(dim, dtype=np.float32) for v in vectors]
            flat = np.concatenate(filled).astype(np.float32) if filled else np.zeros(0, dtype=np.float32)
            columns.append(pa.FixedSizeListArray.from_arrays(pa.array(flat, type=pa.float32()), dim))
        elif f.name in arrow.column_names:
            columns.append(arrow.column(f.name).cast(f.type))
        else:
            columns.append(pa.nulls(arrow.num_rows, f.type))
    return pa.Table.from_arrays(columns, schema=schema)


def _polars(table: pa.Table) -> pl.DataFrame:
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    return frame
