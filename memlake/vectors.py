"""The LanceDB store under `<home>/lancedb`: one table per search index, rebuildable from the lake.

A table holds one row per indexed object (chunk, episode, fact version) with
its text, its vector and the columns search filters on. Rows are written a
scope at a time (some daily partitions, or a set of keys): `sync` embeds only
rows whose (text_sha256, embedder) is new, reuses the stored vectors of the
rest, and replaces the scope with one `merge_insert` commit, so a reader sees
the old rows or the new ones and a rebuilt scope keeps no stale row.

Every read is filtered by one agent id, validated and quoted here.

A reader keeps `Snapshot`s: one agent's rows of one table at one table
version, in memory, in a small LRU bounded by rows (`snapshot_rows`), so a
search needs only the full-text query from LanceDB (vector search runs in
memory: exact, or over IVF lists for a large agent); a new table version
replaces the snapshot on the next read.
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Coroutine, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from memlake.errors import BadRequest

# LanceDB logs "No existing dataset ... it will be created" as a warning on every first index build; read
# when lancedb is imported, so set before it. Errors still print; LANCEDB_LOG in the environment wins.
os.environ.setdefault("LANCEDB_LOG", "error")
import lancedb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
from lancedb.index import FTS, Bitmap, BTree, IvfFlat
from lancedb.query import MatchQuery

from memlake.changes import folder_state, mark_changed
from memlake.chunks import key_span, text_only_sha256
from memlake.embedding_cache import EmbeddingCache, embed_unique
from memlake.embedding_onnx import Span
from memlake.moments import EPOCH, micros, utc
from memlake.schemas import ROLES, check_agent_id, check_day

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
ANN_MIN_ROWS = 50_000
# Rows a reader keeps in memory by default (Settings.search_snapshot_rows): about 2 KB a row with 384-d vectors.
SNAPSHOT_ROWS = 300_000
# Columns only the writer uses (change detection, partitions); a snapshot leaves them out.
WRITE_ONLY_COLUMNS = ("embed_text", "text_sha256", "token_count", "day", "embedder")

Embed = Callable[[list[str]], np.ndarray]
# texts and the spans of each -> the texts' vectors and each span's (None: the span was cut off)
EmbedSpans = Callable[[list[str], list[list[Span]]], tuple[np.ndarray, list[list[np.ndarray | None]]]]


def quote(value: str) -> str:
    """A SQL string literal: single quotes doubled, NUL refused."""
    if "\x00" in value:
        raise BadRequest("NUL in a filter value")
    return "'" + value.replace("'", "''") + "'"


def agent_filter(agent_id: str) -> str:
    return f"agent_id = {quote(check_agent_id(agent_id))}"


@dataclass(frozen=True)
class Filters:
    """What a search may return, beyond the agent: time range, roles, conversations, kinds."""

    since: datetime | None = None
    until: datetime | None = None
    roles: tuple[str, ...] = ()
    conversation_ids: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    extra: tuple[str, ...] = field(default=())  # trusted clauses built by memlake code only

    def __post_init__(self) -> None:  # a filter that can match nothing is a mistake, not an empty answer
        unknown = [role for role in self.roles if role not in ROLES]
        if unknown:
            raise BadRequest(f"unknown role {', '.join(map(repr, unknown))}: one of {', '.join(ROLES)}")
        if self.since is not None and self.until is not None and utc(self.since) >= utc(self.until):
            raise BadRequest(f"since ({self.since:%Y-%m-%d %H:%M}) is not before until ({self.until:%Y-%m-%d %H:%M})")

    def where(self, agent_id: str, time_column: str = "created_at") -> str:
        clauses = [agent_filter(agent_id)]
        if self.since is not None:
            clauses.append(f"{time_column} >= timestamp {quote(utc(self.since).strftime('%Y-%m-%d %H:%M:%S.%f'))}")
        if self.until is not None:
            clauses.append(f"{time_column} < timestamp {quote(utc(self.until).strftime('%Y-%m-%d %H:%M:%S.%f'))}")
        for column, values in (("role", self.roles), ("conversation_id", self.conversation_ids), ("kind", self.kinds)):
            if values:
                clauses.append(f"{column} IN ({', '.join(quote(v) for v in values)})")
        clauses.extend(self.extra)
        return " AND ".join(f"({c})" for c in clauses)

    def accepts(self, row: dict[str, Any], time_column: str = "created_at") -> bool:
        """The structured part of the filter (not `extra`), checked on a fetched row."""
        moment = row.get(time_column)
        if self.since is not None and (moment is None or utc(moment) < utc(self.since)):
            return False
        if self.until is not None and (moment is None or utc(moment) >= utc(self.until)):
            return False
        return all(
            not values or row.get(column) in values
            for column, values in (("role", self.roles), ("conversation_id", self.conversation_ids),
                                   ("kind", self.kinds))
        )


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


class VectorStore:
    """The LanceDB tables of one home."""

    def __init__(
        self, path: str | Path, snapshot_rows: int = SNAPSHOT_ROWS, background_rows: int | None = None
    ) -> None:
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        # A long-lived reader sees each new table version on its next read.
        self.db = lancedb.connect(str(self.path), read_consistency_interval=timedelta(0))
        self._tables: dict[str, Any] = {}
        self._plans: dict[tuple[str, int, str], bool] = {}
        self.snapshot_rows = snapshot_rows  # 0: no snapshots, every read goes to LanceDB
        # an agent with more rows is loaded on a background thread while its first searches read LanceDB
        # (None: every snapshot is loaded by the search that needs it)
        self.background_rows = background_rows
        self._snapshots: OrderedDict[tuple[str, str, tuple[str, ...]], Snapshot] = OrderedDict()
        # table -> (version, the table checked out at it, the same through LanceDB's async API)
        self._pinned: dict[str, tuple[int, Any, Any]] = {}
        self._async_db: Any = None
        self._agent_rows: dict[tuple[str, int, str, tuple[str, ...]], int] = {}  # (table, version, agent, base)
        self._indexed: dict[tuple[str, int], bool] = {}  # (table, version): has an ANN index
        self._current: dict[str, tuple[str, int, str | None]] = {}  # table -> (store's mark, version, embedder)
        # snapshots being loaded, by (key, version, embedder): a second search of the agent waits for the first
        self._loading: dict[tuple[tuple[str, str, tuple[str, ...]], int, str | None], threading.Event] = {}
        self._lock = threading.Lock()

    # -- tables ---------------------------------------------------------------------------

    def exists(self, name: str) -> bool:
        return name in self._tables or name in self.db.list_tables().tables

    def open(self, name: str) -> Any:
        table = self._tables.get(name)
        if table is None:
            table = self._tables[name] = self.db.open_table(name)
        return table

    def embedder_of(self, name: str) -> str | None:
        """The embedder a table's vectors came from (`none`: full text only), or None if no table."""
        if not self.exists(name):
            return None
        table = self.open(name)
        metadata = table.schema.metadata or {}
        return metadata.get(b"memlake.embedder", b"").decode() or None

    def current(self, name: str) -> tuple[int, str | None]:
        """An existing table's version and embedder, asked of LanceDB again only once a write has marked the store
        changed (`mark_changed`: every sync, index build and drop ends so): asking LanceDB took ~3 ms of a
        ~23 ms search. The mark is read first, so a write during the asking makes the next read ask again."""
        mark = folder_state(self.path)
        held = self._current.get(name)
        if held is None or held[0] != mark:
            held = self._current[name] = (mark, int(self.open(name).version), self.embedder_of(name))
        return held[1], held[2]

    def has_vectors(self, name: str) -> bool:
        return self.exists(name) and VECTOR in self.open(name).schema.names

    def count(self, name: str, agent_id: str | None = None) -> int:
        if not self.exists(name):
            return 0
        return int(self.open(name).count_rows(agent_filter(agent_id) if agent_id else None))

    def drop(self, name: str) -> None:
        self._tables.pop(name, None)
        self._current.pop(name, None)
        with self._lock:
            self._forget_snapshots(name, None)
        if self.exists(name):
            self.db.drop_table(name)
            mark_changed(self.path)

    def _create(self, name: str, schema: pa.Schema, embedder: str) -> Any:
        schema = schema.with_metadata({"memlake.embedder": embedder})
        self._tables[name] = self.db.create_table(name, schema=schema, mode="overwrite")
        return self._tables[name]

    def use_ann(self, name: str, agent_id: str) -> bool:
        """Whether a vector search of this agent should use the ANN index: only when there is one
        and the agent has at least ANN_MIN_ROWS rows (smaller scopes are scanned exactly)."""
        table = self.open(name)
        plan_key = (name, int(table.version), agent_id)
        if plan_key not in self._plans:
            indexed = any(tuple(i.columns) == (VECTOR,) for i in table.list_indices())
            self._plans[plan_key] = indexed and int(table.count_rows(agent_filter(agent_id))) >= ANN_MIN_ROWS
        return self._plans[plan_key]

    # -- writes ---------------------------------------------------------------------------

    def sync(
        self,
        name: str,
        rows: pl.DataFrame,
        *,
        base_schema: pa.Schema,
        key: str,
        scope: str,
        embed: Embed | None,
        embedder: str,
        dim: int,
        pool_by: str | None = None,
        pooled_kinds: Sequence[str] = POOLED_KINDS,
        cache: EmbeddingCache | None = None,
        spanned_kinds: Sequence[str] = (),
        embed_spans: EmbedSpans | None = None,
    ) -> SyncResult:
        """Make the rows of `scope` (a trusted filter, e.g. `day IN (...)`) exactly `rows`.

        Rows whose (text_sha256, embedder) matches the stored row keep their
        stored vector; the others are embedded (`embed`), except kinds in
        `pooled_kinds`, which get the normalised mean of the vectors of the rows
        sharing their agent and `pool_by` value and lying in their turn range (and turns
        with passage keys the mean of their passages'; with "turn" in `pooled_kinds`, turns
        with sentence keys the mean of their sentences'). With no
        embedder the table has no vector column (full-text search only). A table
        built by another embedder is rebuilt from scratch: the caller passes the
        whole lake then (see `needs_full_rebuild`). Of the rows to embed, each
        distinct text is embedded once, and not at all when `cache` (the
        embedder's cache) has its vector. Rows of `spanned_kinds` (keys inside
        their turn's text) get the vector of their span in their turn's model
        pass (`embed_spans`; without it their own text is embedded).
        """
        result = SyncResult(rows=rows.height, embedder=embedder if embed else NO_EMBEDDER)
        embedder_name = result.embedder
        dim = dim if embed else 0
        schema = index_schema(base_schema, dim)
        if self.exists(name) and self.embedder_of(name) != embedder_name:
            self.drop(name)
            result.rebuilt_table = True
        table = self.open(name) if self.exists(name) else self._create(name, schema, embedder_name)

        previous = self._previous(table, scope, key, with_vectors=dim > 0)
        vectors: list[np.ndarray | None] = [None] * rows.height
        to_embed: list[int] = []
        pooled: list[int] = []
        spanned: list[int] = []
        kinds = rows["kind"].to_list() if "kind" in rows.columns else [None] * rows.height
        embed_texts = rows["embed_text"].to_list() if "embed_text" in rows.columns else [""] * rows.height
        pooled_turns = _pooled_turns(rows, pool_by, pooled_kinds) if pool_by is not None and dim > 0 else set()
        for i, (row_key, sha, kind, embed_text) in enumerate(
            zip(rows[key].to_list(), rows["text_sha256"].to_list(), kinds, embed_texts, strict=True)
        ):
            old = previous.get(row_key)
            if dim == 0:
                continue
            if old is not None and old[0] == sha and old[1] is not None:
                vectors[i] = old[1]
                result.reused += 1
            elif embed_text is not None and sha == text_only_sha256(embed_text):
                result.text_only += 1  # no vector (a zero one): full text finds it, vector search never
            elif pool_by is not None and (i in pooled_turns or (kind in pooled_kinds and kind != "turn")):
                pooled.append(i)
            elif pool_by is not None and embed_spans is not None and kind in spanned_kinds:
                spanned.append(i)
            else:
                to_embed.append(i)
        started = time.perf_counter()
        if spanned and embed_spans is not None:
            to_embed += _read_spans(rows, vectors, spanned, to_embed, pool_by or "", embed_spans, cache, result)
        if to_embed and embed is not None:
            source = rows["embed_text"] if "embed_text" in rows.columns else rows["text"]
            fresh, counts = embed_unique([source[i] or rows["text"][i] for i in to_embed], embed, cache)
            for i, vector in zip(to_embed, fresh, strict=True):
                vectors[i] = vector
            result.embedded += counts.embedded
            result.from_cache += counts.from_cache
        result.embed_seconds = time.perf_counter() - started
        if pooled:
            self._pool(rows, vectors, pooled, pool_by or "")
            result.pooled = len(pooled)

        data = rows.with_columns(pl.lit(embedder_name).alias("embedder"))
        arrow = _conform(data, schema, vectors if dim > 0 else None, dim)
        builder = (
            table.merge_insert(key)
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .when_not_matched_by_source_delete(scope)
        )
        builder.execute(arrow)
        result.deleted = len(set(previous) - set(rows[key].to_list()))
        self.ensure_indexes(name)
        return result

    @staticmethod
    def _previous(table: Any, scope: str, key: str, with_vectors: bool) -> dict[str, tuple[str, Any]]:
        columns = [key, "text_sha256"] + ([VECTOR] if with_vectors else [])
        stored = table.search().where(scope).select(columns).limit(None).to_arrow()
        keys = stored.column(key).to_pylist()
        shas = stored.column("text_sha256").to_pylist()
        if not with_vectors or stored.num_rows == 0:
            return {k: (s, None) for k, s in zip(keys, shas, strict=True)}
        matrix = _matrix(stored.column(VECTOR))
        return {k: (s, matrix[i]) for i, (k, s) in enumerate(zip(keys, shas, strict=True))}

    @staticmethod
    def _pool(rows: pl.DataFrame, vectors: list[np.ndarray | None], pooled: list[int], pool_by: str) -> None:
        groups = pool_groups(rows, pool_by)
        starts = rows["turn_start"].to_list()
        ends = rows["turn_end"].to_list()
        kinds = rows["kind"].to_list()
        for pooled_kind, member_kinds in POOLED_FROM.items():  # turns first: a session pools its pooled turns
            members: dict[Any, list[int]] = {}
            for i, kind in enumerate(kinds):
                if kind in member_kinds and vectors[i] is not None:
                    members.setdefault(groups[i], []).append(i)
            for i in pooled:
                if kinds[i] != pooled_kind:
                    continue
                inside = [j for j in members.get(groups[i], []) if starts[i] <= starts[j] <= ends[i]]
                if not inside:
                    continue
                mean = np.mean(np.stack([vectors[j] for j in inside]), axis=0)  # type: ignore[misc]
                norm = float(np.linalg.norm(mean))
                vectors[i] = (mean / norm if norm > 0 else mean).astype(np.float32)

    def ensure_indexes(self, name: str, ann: bool | None = None) -> None:
        """Full-text index on `text`, a bitmap on `agent_id`; fold new rows in; an ANN index when large."""
        table = self.open(name)
        existing = {tuple(i.columns): i for i in table.list_indices()}
        created = False
        if (TEXT,) not in existing:
            table.create_index(TEXT, config=FTS(with_position=False, stem=True, remove_stop_words=True))
            created = True
        # The agent prefilter of every query: a bitmap hands over an agent's row set at once, where a
        # BTree takes ~4 ms more per query at 100k rows of one agent (tables built before used a BTree).
        agent_index = existing.get(("agent_id",))
        if agent_index is not None and agent_index.index_type != "Bitmap":
            table.drop_index(agent_index.name)
            agent_index = None
        if agent_index is None:
            table.create_index("agent_id", config=Bitmap())
            created = True
        key = key_column(table)
        if key and (key,) not in existing:
            table.create_index(key, config=BTree())  # fetches by key
            created = True
        if "kind" in table.schema.names and ("kind",) not in existing:
            table.create_index("kind", config=Bitmap())  # the kind prefilter of every chunk search
            created = True
        rows = int(table.count_rows())
        has_vector = VECTOR in table.schema.names
        want_ann = has_vector and (rows >= ANN_MIN_ROWS if ann is None else ann)
        if want_ann and (VECTOR,) not in existing:
            # IVF without quantisation: quick to train on 2 cores, exact distances inside the probed lists
            partitions = max(1, int(np.sqrt(rows)))
            table.create_index(VECTOR, config=IvfFlat(distance_type="cosine", num_partitions=partitions))
            created = True
        if not created:
            table.optimize()  # folds unindexed rows into the indexes and compacts small fragments
        mark_changed(self.path)  # `sync` ends here too: its rows are in

    # -- snapshots ------------------------------------------------------------------------

    def snapshot(self, name: str, agent_id: str, base: tuple[str, ...] = ()) -> Snapshot | None:
        """The agent's rows of `name` (those matching the trusted clauses `base`) at the table's
        current version: cached, or loaded now. None when there is no such table, snapshots are off,
        or the agent has more rows than `snapshot_rows` (search then reads LanceDB as before).

        Keyed by the table version: a write (new version) makes the next read load a new snapshot.
        The embedder is checked too: a table rebuilt for another model starts its versions again.
        """
        where = Filters(extra=base).where(agent_id)  # validates the agent id
        if self.snapshot_rows <= 0 or not self.exists(name):
            return None
        version, embedder = self.current(name)
        key = (name, agent_id, base)
        with self._lock:
            cached = self._snapshots.get(key)
            if cached is not None and (cached.version, cached.embedder) == (version, embedder) and (
                cached.size <= self.snapshot_rows
            ):
                self._snapshots.move_to_end(key)
                return cached
            if cached is not None and cached.embedder != embedder:
                self._forget_snapshots(name, None)
            self._forget_snapshots(name, version)
            table, text_table = self._pinned_tables(name, version)
            counted = (name, version, agent_id, base)
            if counted not in self._agent_rows:
                self._agent_rows[counted] = int(table.count_rows(where))
            rows = self._agent_rows[counted]  # what the snapshot would hold
            if rows > self.snapshot_rows:
                return None
            if (name, version) not in self._indexed:
                self._indexed[(name, version)] = any(tuple(i.columns) == (VECTOR,) for i in table.list_indices())
            indexed = self._indexed[(name, version)]
            agent_rows = rows
            if indexed and base:  # the ANN threshold counts all the agent's rows, as `use_ann` does
                agent_rows = int(table.count_rows(agent_filter(agent_id)))
            loading = (key, version, embedder)
            waiting = self._loading.get(loading)
            if waiting is None:
                self._loading[loading] = threading.Event()
        in_background = self.background_rows is not None and rows > self.background_rows
        ann = indexed and agent_rows >= ANN_MIN_ROWS
        load = functools.partial(self._load, loading, table, text_table, ann=ann, key_name=key_column(table))
        if in_background:  # this search reads LanceDB; a later one gets the snapshot
            if waiting is None:
                _BACKGROUND.submit(load)
            return None
        if waiting is not None:  # another thread is loading these rows: take its snapshot when it is done
            waiting.wait()
            return self.snapshot(name, agent_id, base)
        return load()

    def _load(
        self, loading: tuple[tuple[str, str, tuple[str, ...]], int, str | None], table: Any, text_table: Any,
        *, ann: bool, key_name: str | None,
    ) -> Snapshot:
        """Load one snapshot outside the lock (seconds for a large agent: other agents' searches go on
        meanwhile), then cache it and wake the searches waiting for it."""
        (name, agent_id, base), version, embedder = loading
        try:
            snapshot = Snapshot.load(table, name, agent_id, base, version, key_name or "", ann=ann,
                                     embedder=embedder, text_table=text_table)
        except BaseException:
            with self._lock:
                self._loading.pop(loading).set()  # a waiting search tries the load itself
            raise
        with self._lock:
            key = (name, agent_id, base)
            self._snapshots[key] = snapshot
            self._snapshots.move_to_end(key)
            total = sum(s.size for s in self._snapshots.values())
            while total > self.snapshot_rows:  # least recently used first; the new one fits by itself
                _, evicted = self._snapshots.popitem(last=False)
                total -= evicted.size
            self._loading.pop(loading).set()
            return snapshot

    def wait_for_loads(self) -> None:
        """Return once no snapshot is being loaded (in the background or by another thread)."""
        while True:
            with self._lock:
                pending = list(self._loading.values())
            if not pending:
                return
            for event in pending:
                event.wait()

    def held_snapshot(self, name: str, agent_id: str, base: tuple[str, ...] = ()) -> Snapshot | None:
        """The snapshot this reader holds for the agent, without checking the table's version (no I/O):
        for work that may start early and is discarded when `snapshot` returns another one."""
        with self._lock:
            return self._snapshots.get((name, agent_id, base))

    def snapshot_rows_held(self) -> int:
        """Rows the cached snapshots hold: at most `snapshot_rows`."""
        with self._lock:
            return sum(s.size for s in self._snapshots.values())

    def _pinned_tables(self, name: str, version: int) -> tuple[Any, Any]:
        """The table checked out at `version`, shared by that version's snapshots: row ids of its
        full-text and ANN hits are those the snapshots were loaded with. Opened twice: the async
        API answers a full-text query in one round trip (the sync one reads the schema twice
        more, ~1.5 ms of a ~5 ms query)."""
        pinned = self._pinned.get(name)
        if pinned is None or pinned[0] != version:
            table = self.db.open_table(name)
            table.checkout(version)

            async def open_async() -> Any:
                if self._async_db is None:
                    self._async_db = await lancedb.connect_async(str(self.path))
                pinned_async = await self._async_db.open_table(name)
                await pinned_async.checkout(version)
                return pinned_async

            pinned = self._pinned[name] = (version, table, run_async(open_async()))
        return pinned[1], pinned[2]

    def reset(self) -> None:
        """Forget every table, version and snapshot held: for tables deleted or made anew under this reader
        (a version number then names another table)."""
        with self._lock:
            self._tables.clear()
            self._plans.clear()
            self._snapshots.clear()
            self._pinned.clear()
            self._agent_rows.clear()
            self._indexed.clear()
            self._current.clear()
            self._async_db = None
        self.db = lancedb.connect(str(self.path), read_consistency_interval=timedelta(0))

    def _forget_snapshots(self, name: str, version: int | None) -> None:
        """Drop the snapshots of `name` from other versions than `version` (None: all of them)."""
        for key in [k for k, s in self._snapshots.items() if k[0] == name and s.version != version]:
            del self._snapshots[key]
        self._agent_rows = {k: n for k, n in self._agent_rows.items() if k[0] != name or k[1] == version}
        self._indexed = {k: n for k, n in self._indexed.items() if k[0] != name or k[1] == version}
        if version is None or (name in self._pinned and self._pinned[name][0] != version):
            self._pinned.pop(name, None)

    # -- reads ----------------------------------------------------------------------------

    def search_vector(
        self,
        name: str,
        agent_id: str,
        vector: np.ndarray,
        k: int,
        filters: Filters | None = None,
        *,
        columns: Sequence[str] | None = None,
        exact: bool | None = None,
        nprobes: int = 20,
        refine_factor: int | None = None,
    ) -> pl.DataFrame:
        """The `k` nearest rows of one agent by cosine distance (`_distance`), nearest first.

        `exact` None: exact scan unless `use_ann` says the ANN index pays off.
        """
        table = self.open(name)
        if exact is None:
            exact = not self.use_ann(name, agent_id)
        query = (
            table.search(np.asarray(vector, dtype=np.float32), query_type="vector", vector_column_name=VECTOR)
            .distance_type("cosine")
            .where((filters or Filters()).where(agent_id), prefilter=True)
            .limit(k)
        )
        if exact:
            query = query.bypass_vector_index()
        else:
            query = query.nprobes(nprobes)
            if refine_factor:
                query = query.refine_factor(refine_factor)
        if columns is not None:
            query = query.select([*columns, "_distance"])
        return _polars(query.to_arrow())

    def search_text(
        self,
        name: str,
        agent_id: str,
        text: str,
        k: int,
        filters: Filters | None = None,
        *,
        columns: Sequence[str] | None = None,
    ) -> pl.DataFrame:
        """The `k` best BM25 matches of one agent (`_score`), best first. The query is plain words, not syntax."""
        if not text.strip():
            return pl.DataFrame()
        table = self.open(name)
        query = (
            table.search(_match(text), query_type="fts")
            .where((filters or Filters()).where(agent_id), prefilter=True)
            .limit(k)
        )
        if columns is not None:
            query = query.select([*columns, "_score"])
        return _polars(query.to_arrow())

    def rows(
        self,
        name: str,
        agent_id: str,
        filters: Filters | None = None,
        *,
        columns: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> pl.DataFrame:
        """Rows of one agent matching `filters` (no ranking)."""
        table = self.open(name)
        query = table.search().where((filters or Filters()).where(agent_id)).limit(limit)
        if columns is not None:
            query = query.select(list(columns))
        return _polars(query.to_arrow())


@dataclass
class Snapshot:
    """One agent's rows of one index table at one table version, in memory (see `VectorStore.snapshot`).

    Vector search (exact, or through in-memory IVF lists for an agent large
    enough for an ANN index), the structured filters and lookups by key run
    here on arrays. The full-text query (and LanceDB's ANN query, when one is
    forced on a snapshot without lists) runs in LanceDB on `table`, checked
    out at `version`, still filtered by the agent; the row ids of its hits map
    back to positions, which index `rows`, `vectors`, `created_at` and `codes`.
    """

    name: str
    agent_id: str
    base: tuple[str, ...]  # the trusted clauses the rows were loaded with
    version: int
    embedder: str | None  # the table's embedder when loaded
    table: Any
    key: str
    rows: pa.Table  # every column search reads, except created_at and the vector
    created_at: np.ndarray  # microseconds since the epoch; `created_null` marks rows without a time
    created_null: np.ndarray
    vectors: np.ndarray | None  # float32 (rows, dim) as stored
    norms: np.ndarray | None
    codes: dict[str, tuple[dict[str, int], np.ndarray]]  # role, conversation_id, kind: value -> code, codes
    rowids_sorted: np.ndarray
    rowid_positions: np.ndarray  # the position of each sorted row id
    positions: dict[str, int]  # key -> position
    ann: bool  # the agent is large enough for approximate vector search (as `VectorStore.use_ann` decides)
    load_seconds: float
    # An in-memory IVF (for `ann` snapshots): rows are stored list by list, list i at ivf_bounds[i:i+2]
    ivf_centroids: np.ndarray | None = None
    ivf_bounds: np.ndarray | None = None
    text_table: Any = None  # `table` through LanceDB's async API, for the full-text query
    masks: dict[Filters, np.ndarray] = field(default_factory=dict)  # the last few masks: searches repeat them
    moments: list[datetime | None] | None = None  # created_at as aware datetimes, made by the first `take`

    @classmethod
    def load(
        cls, table: Any, name: str, agent_id: str, base: tuple[str, ...], version: int, key: str, ann: bool,
        embedder: str | None = None, text_table: Any = None,
    ) -> Snapshot:
        """Read the agent's rows (matching `base`) from `table`; with `ann`, also build the IVF lists."""
        started = time.perf_counter()
        columns = [c for c in table.schema.names if c not in WRITE_ONLY_COLUMNS]
        query = table.search().where(Filters(extra=base).where(agent_id)).select(columns).with_row_id(True)
        data = query.limit(None).to_arrow().combine_chunks()
        vectors = norms = centroids = bounds = None
        if VECTOR in data.column_names:
            vectors = _matrix(data.column(VECTOR))
            norms = np.linalg.norm(vectors, axis=1)
            if ann and data.num_rows:  # store the rows list by list, so a probe reads contiguous slices
                centroids, lists = _ivf(vectors, norms)
                order = np.argsort(lists, kind="stable")
                data, vectors, norms = data.take(order), vectors[order], norms[order]
                bounds = np.searchsorted(lists[order], np.arange(len(centroids) + 1))
        codes = {}
        for column in ("role", "conversation_id", "kind"):
            if column in data.column_names:
                encoded = data.column(column).combine_chunks().dictionary_encode()
                values = encoded.dictionary.to_pylist()
                codes[column] = ({v: i for i, v in enumerate(values)},
                                 pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False))
        if "created_at" in data.column_names:
            moments = data.column("created_at").cast(pa.timestamp("us", tz="UTC"))
            created_null = moments.is_null().to_numpy(zero_copy_only=False)
            created_at = moments.cast(pa.int64()).fill_null(0).to_numpy()
        else:
            created_null = np.ones(data.num_rows, dtype=bool)
            created_at = np.zeros(data.num_rows, dtype=np.int64)
        rowids = data.column("_rowid").to_numpy()
        order = np.argsort(rowids, kind="stable")
        keys = data.column(key).to_pylist() if key else []
        return cls(
            name=name, agent_id=agent_id, base=base, version=version, embedder=embedder, table=table, key=key,
            rows=data.drop_columns([c for c in (VECTOR, "created_at", "_rowid") if c in data.column_names]),
            created_at=created_at, created_null=created_null, vectors=vectors, norms=norms, codes=codes,
            rowids_sorted=rowids[order], rowid_positions=order, positions={k: i for i, k in enumerate(keys)},
            ann=ann, load_seconds=time.perf_counter() - started, ivf_centroids=centroids, ivf_bounds=bounds,
            text_table=text_table,
        )

    @property
    def size(self) -> int:
        return self.rows.num_rows

    def mask(self, filters: Filters) -> np.ndarray:
        """Which rows pass the structured filters (time range, roles, conversations, kinds), as LanceDB
        would filter them (a null never passes). `filters.extra` must be the snapshot's own base
        clauses: its rows were loaded with them."""
        if tuple(filters.extra) != self.base:
            raise ValueError("a snapshot applies only the clauses it was loaded with")
        cached = self.masks.get(filters)
        if cached is not None:
            return cached
        keep = np.ones(self.size, dtype=bool)
        if filters.since is not None:
            keep &= ~self.created_null & (self.created_at >= micros(filters.since))
        if filters.until is not None:
            keep &= ~self.created_null & (self.created_at < micros(filters.until))
        for column, values in (("role", filters.roles), ("conversation_id", filters.conversation_ids),
                               ("kind", filters.kinds)):
            if values:
                if column not in self.codes:
                    raise ValueError(f"{self.name} has no column {column!r} to filter on")
                index, codes = self.codes[column]
                wanted = np.zeros(len(index) + 1, dtype=bool)  # the last slot answers code -1 (null): never
                wanted[[index[v] for v in values if v in index]] = True
                keep &= wanted[codes]
        keep.setflags(write=False)  # shared by later searches
        with _MASKS_LOCK:  # searches of the agent on other threads add and drop masks too
            if len(self.masks) >= 16:
                self.masks.pop(next(iter(self.masks)), None)
            self.masks[filters] = keep
        return keep

    def nearest(self, vector: np.ndarray, k: int, keep: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Positions and cosine distances of the `k` nearest rows (among `keep`), nearest first: exact.

        As in LanceDB's flat search, a zero vector has no distance and is never
        returned; equal distances go to the earlier row.
        """
        query = np.asarray(vector, dtype=np.float32)
        query_norm = np.float32(np.linalg.norm(query))
        if self.vectors is None or self.norms is None or query_norm == 0 or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        valid = self.norms > 0 if keep is None else keep & (self.norms > 0)
        candidates = np.flatnonzero(valid)
        # the product is bound by memory bandwidth: copying most rows out first would cost more than it saves
        dots = (self.vectors @ query)[candidates] if 4 * candidates.size > self.size else (
            self.vectors[candidates] @ query)
        return _nearest_first(candidates, np.float32(1.0) - dots / (self.norms[candidates] * query_norm), k)

    def search_ivf(
        self, vector: np.ndarray, k: int, keep: np.ndarray | None = None, nprobes: int = 20
    ) -> tuple[np.ndarray, np.ndarray]:
        """Positions and cosine distances of the `k` nearest rows (among `keep`) in the `nprobes` lists
        of the in-memory IVF whose centroids are nearest the query (more lists while fewer than `k`
        rows were seen), nearest first: the same approximation as LanceDB's IVF-flat index."""
        query = np.asarray(vector, dtype=np.float32)
        query_norm = np.float32(np.linalg.norm(query))
        if self.ivf_centroids is None or self.ivf_bounds is None or self.vectors is None or self.norms is None:
            raise ValueError("this snapshot has no IVF lists")
        if query_norm == 0 or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        positions, distances = [], []
        seen = 0
        for probed, i in enumerate(np.argsort(-(self.ivf_centroids @ query), kind="stable")):
            start, end = int(self.ivf_bounds[i]), int(self.ivf_bounds[i + 1])
            if probed >= nprobes and seen >= k:
                break
            valid = self.norms[start:end] > 0 if keep is None else keep[start:end] & (self.norms[start:end] > 0)
            inside = np.flatnonzero(valid)
            dots = (self.vectors[start:end] @ query)[inside]
            positions.append(inside + start)
            distances.append(np.float32(1.0) - dots / (self.norms[start:end][inside] * query_norm))
            seen += inside.size
        return _nearest_first(np.concatenate(positions), np.concatenate(distances), k)

    def search_ann(
        self, vector: np.ndarray, k: int, filters: Filters, nprobes: int = 20, refine_factor: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Positions and cosine distances of the `k` nearest rows by LanceDB's ANN index, nearest first."""
        query = (
            self.table.search(np.asarray(vector, dtype=np.float32), query_type="vector", vector_column_name=VECTOR)
            .distance_type("cosine")
            .where(filters.where(self.agent_id), prefilter=True)
            .limit(k)
            .nprobes(nprobes)
        )
        if refine_factor:
            query = query.refine_factor(refine_factor)
        return self._located(query.with_row_id(True).select(["_distance"]).to_arrow(), "_distance")

    def submit_text(self, text: str, k: int, filters: Filters) -> Future[tuple[np.ndarray, np.ndarray]]:
        """Positions and BM25 scores of the `k` best full-text matches (LanceDB's FTS index), best first,
        started on LanceDB's event loop: the caller works on while the query runs."""
        where = filters.where(self.agent_id)

        async def query() -> tuple[np.ndarray, np.ndarray]:
            if not text.strip():
                return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
            fts = self.text_table.query().nearest_to_text(_match(text)).where(where)  # a prefilter
            return self._located(await fts.limit(k).with_row_id().select(["_score"]).to_arrow(), "_score")

        return submit_async(query())

    def _located(self, found: pa.Table, value: str) -> tuple[np.ndarray, np.ndarray]:
        """Positions of LanceDB hits by row id, in hit order, with their `value`; a row id the
        snapshot does not hold (none, with the same filter and version) is dropped."""
        rowids = found.column("_rowid").to_numpy()
        values = found.column(value).to_numpy()
        if not self.size or not rowids.size:
            return np.zeros(0, dtype=np.int64), values[:0]
        at = np.minimum(np.searchsorted(self.rowids_sorted, rowids), self.size - 1)
        known = self.rowids_sorted[at] == rowids
        return self.rowid_positions[at[known]], values[known]

    def take(self, positions: Sequence[int] | np.ndarray, columns: Sequence[str]) -> list[dict[str, Any]]:
        """The rows at `positions` as dicts of `columns` (created_at an aware datetime, the vector an array)."""
        at = np.asarray(positions, dtype=np.int64)
        plain = [c for c in columns if c in self.rows.column_names]
        # column by column: a table's `to_pylist` builds each row through Arrow's structs, ~2x the CPU
        taken = self.rows.select(plain).take(at)
        values = [taken.column(c).to_pylist() for c in plain]
        out = [dict(zip(plain, row, strict=True)) for row in zip(*values, strict=True)] if plain else [
            {} for _ in range(at.size)]
        if "created_at" in columns:
            moments = self.created_moments()
            for row, i in zip(out, at.tolist(), strict=True):
                row["created_at"] = moments[i]
        if VECTOR in columns and self.vectors is not None:
            for row, i in zip(out, at.tolist(), strict=True):
                row[VECTOR] = self.vectors[i]
        return out

    def created_moments(self) -> list[datetime | None]:
        """Each row's created_at as an aware datetime (None: no time), made once per snapshot: a search takes
        some three hundred rows, and making their datetimes each time cost more than the rest of `take`."""
        if self.moments is None:  # two searches making it at once make the same list
            self.moments = [None if null else EPOCH + timedelta(microseconds=since_epoch) for since_epoch, null
                            in zip(self.created_at.tolist(), self.created_null.tolist(), strict=True)]
        return self.moments

    def by_keys(self, keys: Iterable[str], columns: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The rows of `keys` the snapshot holds, by key."""
        found = sorted({self.positions[k] for k in keys if k in self.positions})
        return {row[self.key]: row for row in self.take(found, list(dict.fromkeys([self.key, *columns])))}


def _nearest_first(candidates: np.ndarray, distances: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The `k` smallest distances with their positions, nearest first; equal distances by position."""
    if k < candidates.size:
        bound = np.partition(distances, k - 1)[k - 1]
        inside = np.flatnonzero(distances <= bound)  # every tie at the bound; the sort below settles them
    else:
        inside = np.arange(candidates.size)
    chosen = inside[np.lexsort((candidates[inside], distances[inside]))[:k]]
    return candidates[chosen], distances[chosen]


def _ivf(vectors: np.ndarray, norms: np.ndarray, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Unit centroids of sqrt(rows) lists (as the LanceDB index has) and each row's list: spherical
    k-means, trained for a few rounds on a sample (40 rows a list) to keep a snapshot quick to load."""
    unit = vectors / np.where(norms > 0, norms, 1.0)[:, None]
    lists = max(1, int(np.sqrt(len(vectors))))
    rng = np.random.default_rng(seed)
    sample = unit[rng.choice(len(unit), min(len(unit), 40 * lists), replace=False)]
    centroids = sample[rng.choice(len(sample), lists, replace=False)].copy()
    for _ in range(6):
        nearest = np.argmax(sample @ centroids.T, axis=1)
        sums = np.zeros_like(centroids)
        np.add.at(sums, nearest, sample)
        lengths = np.linalg.norm(sums, axis=1)
        filled = lengths > 0  # a list that lost every sample keeps its centroid
        centroids[filled] = sums[filled] / lengths[filled, None]
    assigned = np.concatenate(
        [np.argmax(unit[i : i + 8192] @ centroids.T, axis=1) for i in range(0, len(unit), 8192)]
    )
    return centroids, assigned


def _background_pool() -> ThreadPoolExecutor:
    # one snapshot load at a time in the background: on 2 cores a second would only slow the searches more
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="memlake-snapshot")


_BACKGROUND = _background_pool()
_MASKS_LOCK = threading.Lock()
_ASYNC_LOOP: asyncio.AbstractEventLoop | None = None
_ASYNC_LOCK = threading.Lock()


def submit_async(coroutine: Coroutine[Any, Any, Any]) -> Future[Any]:
    """Start a coroutine of LanceDB's async API on memlake's one event-loop thread."""
    global _ASYNC_LOOP
    with _ASYNC_LOCK:
        if _ASYNC_LOOP is None:
            _ASYNC_LOOP = asyncio.new_event_loop()
            threading.Thread(target=_ASYNC_LOOP.run_forever, name="memlake-lancedb", daemon=True).start()
    return asyncio.run_coroutine_threadsafe(coroutine, _ASYNC_LOOP)


def run_async(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine of LanceDB's async API on memlake's event-loop thread and wait for it."""
    return submit_async(coroutine).result()


def _forget_loop_after_fork() -> None:
    global _ASYNC_LOOP, _BACKGROUND
    _ASYNC_LOOP = None  # its thread did not survive the fork: the child starts its own on demand
    _BACKGROUND = _background_pool()  # likewise


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_loop_after_fork)


def _match(text: str) -> MatchQuery:
    """A full-text match of `text` on the indexed text column, LanceDB's defaults otherwise."""
    # pydantic's mypy plugin does not see the defaults of lancedb's pydantic dataclass
    return MatchQuery(text, TEXT)  # type: ignore[call-arg]


def key_column(table: Any) -> str | None:
    """The key column of an index table: the first column, by construction of `index_schema` callers."""
    name = table.schema.names[0]
    return name if name.endswith(("_id", "_key")) else None


def day_scope(days: Iterable[str]) -> str:
    """The filter of some daily partitions (validated `YYYY-MM-DD`)."""
    return key_scope("day", [check_day(day) for day in days])


def key_scope(key: str, values: Iterable[str]) -> str:
    """The filter `key IN (values)` (quoted), or `false` for no values."""
    values = sorted(set(values))
    return f"{key} IN ({', '.join(quote(v) for v in values)})" if values else "false"


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
