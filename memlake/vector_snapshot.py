"""`Snapshot`: one agent's rows of one index table at one table version, held in memory by a reader, with the
vector search (exact, or over IVF lists) and the structured filters that run on its arrays.

Part of `memlake.vectors`, which re-exports `Snapshot`.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

# LanceDB logs "No existing dataset ... it will be created" as a warning on every first index build; read
# when lancedb is imported, so set before it. Errors still print; LANCEDB_LOG in the environment wins.
os.environ.setdefault("LANCEDB_LOG", "error")
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from lancedb.query import MatchQuery

from memlake.moments import EPOCH, micros
from memlake.vector_filters import Filters
from memlake.vector_rows import TEXT, VECTOR, WRITE_ONLY_COLUMNS, _matrix
from memlake.vector_threads import submit_async


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


_MASKS_LOCK = threading.Lock()


def _match(text: str) -> MatchQuery:
    """A full-text match of `text` on the indexed text column, LanceDB's defaults otherwise."""
    # pydantic's mypy plugin does not see the defaults of lancedb's pydantic dataclass
    return MatchQuery(text, TEXT)  # type: ignore[call-arg]
