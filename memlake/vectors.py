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

import functools
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

# LanceDB logs "No existing dataset ... it will be created" as a warning on every first index build; read
# when lancedb is imported, so set before it. Errors still print; LANCEDB_LOG in the environment wins.
os.environ.setdefault("LANCEDB_LOG", "error")
import lancedb
import numpy as np
import polars as pl
import pyarrow as pa
from lancedb.index import FTS, Bitmap, BTree, IvfFlat
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_random_exponential

from memlake.changes import folder_state, mark_changed
from memlake.chunks import text_only_sha256
from memlake.embedding_cache import EmbeddingCache, embed_unique
from memlake.storage import Store, index_store
from memlake.vector_filters import Filters, agent_filter, day_scope, key_column, key_scope, quote
from memlake.vector_rows import (
    NO_EMBEDDER,
    POOLED_FROM,
    POOLED_KINDS,
    TEXT,
    VECTOR,
    WRITE_ONLY_COLUMNS,
    Embed,
    EmbedSpans,
    SyncResult,
    _conform,
    _matrix,
    _polars,
    _pooled_turns,
    _read_spans,
    index_schema,
    pool_groups,
)
from memlake.vector_snapshot import Snapshot, _match
from memlake.vector_threads import run_async, submit_async, submit_background

if TYPE_CHECKING:
    from memlake.settings import ServingSettings, Settings

# The store's parts, by concern, live in memlake.vector_*; their names are re-exported here, where callers import
# them.
__all__ = [
    "ANN_MIN_ROWS", "NO_EMBEDDER", "POOLED_FROM", "POOLED_KINDS", "SNAPSHOT_ROWS", "TEXT", "VECTOR",
    "WRITE_ONLY_COLUMNS", "Embed", "EmbedSpans", "Filters", "Snapshot", "SyncResult", "VectorStore", "agent_filter",
    "day_scope", "index_schema", "key_column", "key_scope", "pool_groups", "quote", "run_async", "submit_async",
]

# Below this many rows a flat (exact) scan is fast enough; above it an IVF index helps.
ANN_MIN_ROWS = 50_000
# Rows a reader keeps in memory by default (Settings.search_snapshot_rows): about 2 KB a row with 384-d vectors.
SNAPSHOT_ROWS = 300_000


def _is_commit_conflict(error: BaseException) -> bool:
    return isinstance(error, RuntimeError) and "commit conflict" in str(error).lower()


def _lance_commits() -> Retrying:
    """Tries of a Lance commit that another writer of the table may get in before (two runs indexing one table at
    once, or two hosts on one object store): Lance refuses the later commit as retryable, and the retry reads the
    table anew."""
    return Retrying(retry=retry_if_exception(_is_commit_conflict), stop=stop_after_attempt(6),
                    wait=wait_random_exponential(multiplier=0.05, max=2), reraise=True)


class VectorStore:
    """The LanceDB tables of one home."""

    def __init__(
        self, path: str | Path | Store, snapshot_rows: int = SNAPSHOT_ROWS, background_rows: int | None = None
    ) -> None:
        # a local folder, or a prefix of an object store (`memlake.storage.index_store`)
        self.store = path if isinstance(path, Store) else Store.folder(Path(path))
        self.path: Path | Store = Path(self.store.path) if self.store.local else self.store
        if self.store.local:
            Path(self.store.path).mkdir(parents=True, exist_ok=True)
        self.db = self._connect()
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

    def _connect(self) -> Any:
        """LanceDB on the store; a long-lived reader sees each new table version on its next read."""
        return lancedb.connect(self.store.uri, read_consistency_interval=timedelta(0),
                               storage_options=self.store.options or None)

    @classmethod
    def of(cls, settings: Settings, snapshot_rows: int = 0) -> VectorStore:
        """The home's indexes, where its settings put them (`storage_uri`); no snapshots unless asked."""
        return cls(index_store(settings), snapshot_rows=snapshot_rows)

    @classmethod
    def serving(cls, path: str | Path | Store, serving: ServingSettings) -> VectorStore:
        """The store of a long-lived reader, keeping the snapshots the serving group (`Settings.serving`) allows."""
        return cls(path, snapshot_rows=serving.search_snapshot_rows,
                   background_rows=serving.search_snapshot_background_rows)

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
        mark = folder_state(self.store)
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
            mark_changed(self.store)

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
        embed_only: bool = False,
    ) -> SyncResult:
        """Make the rows of `scope` (a trusted filter, e.g. `day IN (...)`) exactly `rows`; with `embed_only`, only
        embed what the rows need into `cache` (no table read or written: days built at once embed in their own
        processes, and the one-at-a-time commit then finds the vectors in the cache).

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
        previous: dict[str, tuple[str, Any]] = {}
        if not embed_only:
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
        if embed_only:
            return result
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
        for attempt in _lance_commits():
            with attempt:
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
        for attempt in _lance_commits():
            with attempt:
                self._ensure_indexes(name, ann)
        mark_changed(self.store)  # `sync` ends here too: its rows are in

    def _ensure_indexes(self, name: str, ann: bool | None) -> None:
        table = self.open(name)  # anew on each try: what the writer that got in first committed
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
                submit_background(load)
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
                    self._async_db = await lancedb.connect_async(self.store.uri,
                                                                   storage_options=self.store.options or None)
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
        self.db = self._connect()

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
