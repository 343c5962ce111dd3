"""Step 2 of a search: the candidate lists, the nearest rows by vector and the best BM25 rows.

From the agent's snapshot when the reader holds one (the vector list an exact scan or an
in-memory IVF, the BM25 list the one LanceDB query), else one LanceDB query each; the two
run side by side and the results are the same either way.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from memlake import vectors
from memlake.search.params import IndexSpec, SearchParams
from memlake.search.plan import Plan
from memlake.vectors import VECTOR, Filters, Snapshot, VectorStore

# The vector and full-text lists of one search run side by side (LanceDB releases the GIL).
_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="memlake-search")

HYBRID = "hybrid"
FULL_TEXT = "full_text"
VECTOR_ONLY = "vector"

Lists = Iterable[tuple[str, list[dict[str, Any]]]]  # (list name, its hits) in the order fusion reads them


@dataclass(frozen=True)
class Source:
    """Where a search reads its lists, and with which query vector."""

    snapshot: Snapshot | None  # the agent's rows in memory (None: too many for the cache, or caller clauses)
    early_text: Future[tuple[np.ndarray, np.ndarray]] | None  # the full-text query, started on `snapshot`
    vector: np.ndarray | None
    note: str | None  # why there is no query vector
    mode: str  # HYBRID, VECTOR_ONLY or FULL_TEXT
    has_vectors: bool  # whether the index stores vectors


def search_mode(vector: np.ndarray | None, use_text: bool) -> str:
    return HYBRID if vector is not None and use_text else VECTOR_ONLY if vector is not None else FULL_TEXT


def index_columns(spec: IndexSpec) -> list[str]:
    """The columns of a whole index row a search reads."""
    base = ["agent_id", "conversation_id", "message_ids", "created_at", "text", "importance", "kind"]
    if spec.result_kinds:
        base += ["turn_start", "turn_end"]
    return list(dict.fromkeys([spec.key, *base, *spec.extra_columns]))


def candidate_lists(store: VectorStore, plan: Plan, source: Source) -> Lists:
    """The vector list (if there is a query vector) and the full-text list (if asked) of one search."""
    spec = plan.spec
    columns = index_columns(spec)
    # chunks: light candidate lists, then one fetch of every row needed; others: whole rows at once
    light = [spec.key, "kind", "conversation_id", "turn_start", "turn_end", "created_at"]
    light += [column for column in (spec.mention_column, spec.mention_role_column) if column]
    listed = light if spec.result_kinds else [*columns, *([VECTOR] if source.has_vectors else [])]
    text = plan.query if plan.use_text else None
    if source.snapshot is not None:
        return snapshot_lists(
            source.snapshot, source.vector, text, plan.limit, plan.group, listed, plan.params, source.early_text
        )
    jobs = {}
    if source.vector is not None:
        jobs["vector"] = _POOL.submit(
            store.search_vector, spec.table, plan.agent_id, source.vector, plan.limit, plan.group, columns=listed,
            exact=plan.params.exact,
        )
    if text is not None:
        jobs["text"] = _POOL.submit(
            store.search_text, spec.table, plan.agent_id, text, plan.limit, plan.group, columns=listed
        )
    return [(name, job.result().to_dicts()) for name, job in jobs.items()]


def snapshot_lists(
    snapshot: Snapshot,
    vector: np.ndarray | None,
    text: str | None,
    limit: int,
    group: Filters,
    columns: list[str],
    params: SearchParams,
    text_job: Future[tuple[np.ndarray, np.ndarray]] | None = None,
) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """The candidate lists of one search from the agent's snapshot, as LanceDB would give them:
    the vector list first, then the full-text one (the order fusion reads them in).

    The full-text query (`text_job` if the caller started it already) runs in
    LanceDB on its event loop while the vector search runs here and its list
    is fused: exact, or through the snapshot's IVF lists for an agent large
    enough to use an ANN index when at least ANN_MIN_ROWS rows pass the
    filters (LanceDB's own ANN index only when one is forced on a snapshot
    without lists).
    """

    def rows(found: tuple[np.ndarray, np.ndarray], value: str) -> list[dict[str, Any]]:
        positions, values = found
        taken = snapshot.take(positions, columns)
        for row, number in zip(taken, values.tolist(), strict=True):
            row[value] = number
        return taken

    approximate = vector is not None and (snapshot.ann if params.exact is None else not params.exact)
    in_lancedb = approximate and snapshot.ivf_centroids is None
    jobs = {}
    if in_lancedb and vector is not None:
        jobs["vector"] = _POOL.submit(snapshot.search_ann, vector, limit, group)
    if text is not None:
        jobs["text"] = text_job or snapshot.submit_text(text, limit, group)
    if vector is not None and not in_lancedb:
        keep = snapshot.mask(group)
        if approximate and int(keep.sum()) >= vectors.ANN_MIN_ROWS:
            yield "vector", rows(snapshot.search_ivf(vector, limit, keep), "_distance")
        else:
            yield "vector", rows(snapshot.nearest(vector, limit, keep), "_distance")
    for name, job in jobs.items():  # the caller fuses the vector list while these run
        yield name, rows(job.result(), "_distance" if name == "vector" else "_score")
