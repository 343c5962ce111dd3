"""The LanceDB store under `<home>/lancedb`: one table per search index, rebuildable from the lake.

A table holds one row per indexed object (chunk, episode, fact version) with
its text, its vector and the columns search filters on. Rows are written a
scope at a time (some daily partitions, or a set of keys): `sync` embeds only
rows whose (text_sha256, embedder) is new, reuses the stored vectors of the
rest, and replaces the scope with one `merge_insert` commit, so a reader sees
the old rows or the new ones and a rebuilt scope keeps no stale row.

Every read is filtered by one agent id, validated and quoted here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import polars as pl
import pyarrow as pa

from memlake.schemas import is_valid_agent_id

VECTOR = "vector"
TEXT = "text"
NO_EMBEDDER = "none"
# Sessions get the normalised mean of their turns' vectors (see memlake.chunks).
POOLED_KINDS = ("session",)
# Below this many rows a flat (exact) scan is fast enough; above it an IVF index helps.
ANN_MIN_ROWS = 50_000

Embed = Callable[[list[str]], np.ndarray]


def quote(value: str) -> str:
    """A SQL string literal: single quotes doubled, NUL refused."""
    if "\x00" in value:
        raise ValueError("NUL in a filter value")
    return "'" + value.replace("'", "''") + "'"


def agent_filter(agent_id: str) -> str:
    if not isinstance(agent_id, str) or not is_valid_agent_id(agent_id):
        raise ValueError(f"invalid agent id {agent_id!r}")
    return f"agent_id = {quote(agent_id)}"


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


@dataclass(frozen=True)
class Filters:
    """What a search may return, beyond the agent: time range, roles, conversations, kinds."""

    since: datetime | None = None
    until: datetime | None = None
    roles: tuple[str, ...] = ()
    conversation_ids: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    extra: tuple[str, ...] = field(default=())  # trusted clauses built by memlake code only

    def where(self, agent_id: str, time_column: str = "created_at") -> str:
        clauses = [agent_filter(agent_id)]
        if self.since is not None:
            clauses.append(f"{time_column} >= timestamp {quote(_utc(self.since).strftime('%Y-%m-%d %H:%M:%S.%f'))}")
        if self.until is not None:
            clauses.append(f"{time_column} < timestamp {quote(_utc(self.until).strftime('%Y-%m-%d %H:%M:%S.%f'))}")
        for column, values in (("role", self.roles), ("conversation_id", self.conversation_ids), ("kind", self.kinds)):
            if values:
                clauses.append(f"{column} IN ({', '.join(quote(v) for v in values)})")
        clauses.extend(self.extra)
        return " AND ".join(f"({c})" for c in clauses)

    def accepts(self, row: dict[str, Any], time_column: str = "created_at") -> bool:
        """The structured part of the filter (not `extra`), checked on a fetched row."""
        moment = row.get(time_column)
        if self.since is not None and (moment is None or _utc(moment) < _utc(self.since)):
            return False
        if self.until is not None and (moment is None or _utc(moment) >= _utc(self.until)):
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
    embedded: int = 0
    reused: int = 0
    pooled: int = 0
    deleted: int = 0
    embedder: str = NO_EMBEDDER
    rebuilt_table: bool = False
    embed_seconds: float = 0.0


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

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        # A long-lived reader sees each new table version on its next read.
        self.db = lancedb.connect(str(self.path), read_consistency_interval=timedelta(0))
        self._tables: dict[str, Any] = {}
        self._plans: dict[tuple[str, int, str], bool] = {}

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

    def has_vectors(self, name: str) -> bool:
        return self.exists(name) and VECTOR in self.open(name).schema.names

    def count(self, name: str, agent_id: str | None = None) -> int:
        if not self.exists(name):
            return 0
        return int(self.open(name).count_rows(agent_filter(agent_id) if agent_id else None))

    def drop(self, name: str) -> None:
        self._tables.pop(name, None)
        if self.exists(name):
            self.db.drop_table(name)

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
    ) -> SyncResult:
        """Make the rows of `scope` (a trusted filter, e.g. `day IN (...)`) exactly `rows`.

        Rows whose (text_sha256, embedder) matches the stored row keep their
        stored vector; the others are embedded (`embed`), except kinds in
        POOLED_KINDS, which get the normalised mean of the vectors of the rows
        sharing their `pool_by` value and lying in their turn range. With no
        embedder the table has no vector column (full-text search only). A table
        built by another embedder is rebuilt from scratch: the caller passes the
        whole lake then (see `needs_full_rebuild`).
        """
        import time

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
        kinds = rows["kind"].to_list() if "kind" in rows.columns else [None] * rows.height
        for i, (row_key, sha, kind) in enumerate(
            zip(rows[key].to_list(), rows["text_sha256"].to_list(), kinds, strict=True)
        ):
            old = previous.get(row_key)
            if dim == 0:
                continue
            if old is not None and old[0] == sha and old[1] is not None:
                vectors[i] = old[1]
                result.reused += 1
            elif kind in POOLED_KINDS and pool_by is not None:
                pooled.append(i)
            else:
                to_embed.append(i)
        if to_embed and embed is not None:
            started = time.perf_counter()
            source = rows["embed_text"] if "embed_text" in rows.columns else rows["text"]
            fresh = embed([source[i] or rows["text"][i] for i in to_embed])
            result.embed_seconds = time.perf_counter() - started
            for i, vector in zip(to_embed, fresh, strict=True):
                vectors[i] = np.asarray(vector, dtype=np.float32)
            result.embedded = len(to_embed)
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
        groups = rows[pool_by].to_list()
        starts = rows["turn_start"].to_list()
        ends = rows["turn_end"].to_list()
        kinds = rows["kind"].to_list()
        members: dict[Any, list[int]] = {}
        for i, kind in enumerate(kinds):
            if kind == "turn" and vectors[i] is not None:
                members.setdefault(groups[i], []).append(i)
        for i in pooled:
            inside = [j for j in members.get(groups[i], []) if starts[i] <= starts[j] <= ends[i]]
            if not inside:
                continue
            mean = np.mean(np.stack([vectors[j] for j in inside]), axis=0)  # type: ignore[misc]
            norm = float(np.linalg.norm(mean))
            vectors[i] = (mean / norm if norm > 0 else mean).astype(np.float32)

    def ensure_indexes(self, name: str, ann: bool | None = None) -> None:
        """Full-text index on `text`, a BTree on `agent_id`; fold new rows in; an ANN index when large."""
        from lancedb.index import FTS, Bitmap, BTree, IvfFlat

        table = self.open(name)
        existing = {tuple(i.columns): i for i in table.list_indices()}
        created = False
        if (TEXT,) not in existing:
            table.create_index(TEXT, config=FTS(with_position=False, stem=True, remove_stop_words=True))
            created = True
        for column in ("agent_id", key_column(table)):
            if column and (column,) not in existing:
                table.create_index(column, config=BTree())  # exact agent filters; fetches by key
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
        from lancedb.query import MatchQuery

        if not text.strip():
            return pl.DataFrame()
        table = self.open(name)
        query = (
            table.search(MatchQuery(text, TEXT), query_type="fts")
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

    def vectors_for(self, name: str, agent_id: str, keys: Iterable[str], key: str) -> dict[str, np.ndarray]:
        """Stored vectors of some rows of one agent, by key."""
        keys = list(dict.fromkeys(keys))
        if not keys or not self.exists(name) or VECTOR not in self.open(name).schema.names:
            return {}
        extra = (f"{key} IN ({', '.join(quote(k) for k in keys)})",)
        frame = self.rows(name, agent_id, Filters(extra=extra), columns=[key, VECTOR])
        if frame.height == 0:
            return {}
        matrix = np.asarray(frame[VECTOR].to_list(), dtype=np.float32)
        return dict(zip(frame[key].to_list(), matrix, strict=True))


def key_column(table: Any) -> str | None:
    """The key column of an index table: the first column, by construction of `index_schema` callers."""
    name = table.schema.names[0]
    return name if name.endswith(("_id", "_key")) else None


def day_scope(days: Iterable[str]) -> str:
    """The filter of some daily partitions (validated `YYYY-MM-DD`)."""
    days = sorted(set(days))
    for day in days:
        datetime.strptime(day, "%Y-%m-%d")
    return f"day IN ({', '.join(quote(d) for d in days)})" if days else "false"


def key_scope(key: str, values: Iterable[str]) -> str:
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
