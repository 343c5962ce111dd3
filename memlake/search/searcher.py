"""The search itself, read as its steps: plan, candidate lists, fusion, boosts and rerank, finish."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import numpy as np
import polars as pl

from memlake.access import AccessLog
from memlake.embedding import TextEmbedder, configured_embedder, why_unavailable
from memlake.errors import BadRequest
from memlake.moments import parse_as_of
from memlake.search.candidates import Source, candidate_lists, index_columns, search_mode
from memlake.search.current import Replaced, give_way
from memlake.search.finish import (
    empty_result,
    fetch_rows,
    messages_best_first,
    nearest_passage,
    passage_keys,
    result_frame,
    with_whole_rows,
)
from memlake.search.fusion import Candidate, Fused, GraphLinks, add_context_lifts, add_graph_list, fuse
from memlake.search.params import SPECS, IndexSpec, SearchParams
from memlake.search.plan import Plan, plan_search
from memlake.search.rerank import Mentions, Scoring, shortlist
from memlake.vectors import VECTOR, Filters, VectorStore


class Searcher:
    """Hybrid search over one home's LanceDB tables."""

    def __init__(self, store: VectorStore, embedder: TextEmbedder | None, turns: VectorStore | None = None,
                 passages_per_turn: int = 0) -> None:
        self.store = store
        self.embedder = embedder
        self.turns = turns or store  # where the turns of episode and fact hits are read (the home's chunk index)
        self.passages_per_turn = passages_per_turn  # the most passage keys a long turn has (chunk_long_turn_keys)

    def query_vector(
        self, spec: IndexSpec, query: str, built_with: str | None = None
    ) -> tuple[np.ndarray | None, str | None]:
        """The query's vector, or None and why not (`built_with`: the index's embedder, if known)."""
        built_with = built_with or self.store.embedder_of(spec.table)
        if self.embedder is None:
            why = why_unavailable()
            return None, f"no embedding model loadable{f' ({why})' if why else ''}: full-text search only"
        if built_with != self.embedder.name:
            return None, f"index built with {built_with!r}, query model is {self.embedder.name!r}: full-text only"
        return self.embedder.embed([query])[0], None

    def search(
        self,
        spec: IndexSpec,
        query: str,
        agent_id: str,
        params: SearchParams,
        filters: Filters | None = None,
        as_of: datetime | str | None = None,
        access_counts: Mapping[str, int] | None = None,
        query_vector: np.ndarray | None = None,
        graph: GraphLinks | None = None,
        replaced: Replaced | None = None,
    ) -> pl.DataFrame:
        """The `params.k` best rows of one agent for `query`, best first (see the package doc); `graph` (the
        agent's links) adds the turns its entities pull as one more list when `params.graph_weight` > 0;
        `replaced` (the stale turns of a question about now) makes them give way to what replaced them."""
        plan = plan_search(spec, query, agent_id, params, filters or Filters(), as_of)
        if not self.store.exists(spec.table):
            return empty_result(spec)
        source = self._source(plan, query_vector)
        if source is None:
            return empty_result(spec)
        fused = fuse(plan, candidate_lists(self.store, plan, source))
        if graph is not None and plan.params.graph_weight > 0 and spec.result_kinds:
            add_graph_list(plan, fused, graph)
        mentions = Mentions.of(spec, query, (c.row for c in fused.candidates.values()))
        scoring = Scoring(spec, mentions, plan.params, plan.when, access_counts or {})
        candidates: dict[str, Candidate] = fused.candidates
        turns: dict[str, dict[str, Any]] = {}
        if spec.result_kinds:
            candidates, turns = self._best_turns(plan, source, fused, scoring, replaced)
        if not candidates:
            return empty_result(spec)
        found = result_frame(plan, scoring, candidates, fused.vectors, turns, source.mode, source.note)
        return found if spec.result_kinds else messages_best_first(self.turns, found, agent_id, query, source.vector)

    def _source(self, plan: Plan, query_vector: np.ndarray | None) -> Source | None:
        """The snapshot and query vector the lists are read with; None when the search can find nothing."""
        spec, caller_clauses = plan.spec, plan.caller_clauses
        # The full-text query starts on the snapshot this reader already holds, before the table's
        # version is checked and the query embedded; a new version discards it and asks again.
        held = None if caller_clauses else self.store.held_snapshot(spec.table, plan.agent_id, spec.base_filter)
        early_text = None
        if held is not None and plan.use_text:
            early_text = held.submit_text(plan.query, plan.limit, plan.group)
        # the agent's rows in memory (None: too many for the cache, or caller clauses only LanceDB can apply)
        snapshot = None if caller_clauses else self.store.snapshot(spec.table, plan.agent_id, spec.base_filter)
        if snapshot is not None and snapshot.size == 0:
            return None
        note = None
        # a full-text-only search (the BM25 baseline) ignores a query vector passed in
        vector = query_vector if plan.use_vector else None
        if vector is None and plan.use_vector:
            vector, note = self.query_vector(spec, plan.query, snapshot.embedder if snapshot is not None else None)
        if vector is None and not plan.use_text:
            return None
        has_vectors = snapshot.vectors is not None if snapshot is not None else self.store.has_vectors(spec.table)
        return Source(snapshot, early_text if snapshot is held else None, vector, note,
                      search_mode(vector, plan.use_text), has_vectors)

    def _best_turns(
        self, plan: Plan, source: Source, fused: Fused, scoring: Scoring, replaced: Replaced | None = None
    ) -> tuple[dict[str, Candidate], dict[str, dict[str, Any]]]:
        """Turn hits: lifted by their context (stale ones giving way to what replaced them), the best fetched whole
        (with the turns around them), filtered."""
        add_context_lifts(plan.agent_id, plan.params, fused)
        if replaced:
            give_way(plan.agent_id, fused, replaced, plan.params.superseded_weight)
        # only the best rows (by the score so far, boosts included) are fetched whole
        ranked = shortlist(fused.candidates, scoring, keep=max(4 * plan.params.k, plan.params.k + 30))
        columns = [*index_columns(plan.spec), *([VECTOR] if source.has_vectors else [])]
        light = {k: fused.candidates[k].row for k in ranked}
        excerpts = [key for key in (fused.candidates[k].excerpt_key() for k in ranked) if key is not None]
        # a long turn returns its passage nearest the question, whether it matched whole or by one of them: the
        # passage a list ranked may say only the turn's topic, where another holds the word asked about
        whole = {k: passage_keys(plan.agent_id, light[k], source.snapshot, self.passages_per_turn) for k in ranked}
        turns = fetch_rows(self.store, source.snapshot, plan, light, columns, fused.vectors,
                           [*excerpts, *(key for keys in whole.values() for key in keys)])
        for k, keys in whole.items():
            if keys:
                fused.candidates[k].nearest_part = nearest_passage(keys, turns, fused.vectors, plan.query,
                                                                   source.vector)
        return with_whole_rows(plan, fused.candidates, ranked, turns), turns


# -- the read entry point used by Memory.search ----------------------------------------------


def search_memory(
    settings: Any,
    query: str,
    agent_id: str,
    *,
    k: int = 10,
    scope: str = "chunks",
    as_of: datetime | str | None = None,
    filters: Filters | None = None,
    embedder: TextEmbedder | None = None,
    use_embedder: bool = True,
    query_vector: np.ndarray | None = None,
    store: VectorStore | None = None,
    access: AccessLog | None = None,
    turn_store: VectorStore | None = None,
    graph: GraphLinks | None = None,
    replaced: Replaced | None = None,
    **overrides: Any,
) -> pl.DataFrame:
    """Hybrid search of one agent's memory in `scope` (chunks, episodes or facts); see `Searcher.search`.
    `access` is the home's access log (read whole when not given), for the access-frequency boost;
    `turn_store` holds the chunk index that orders an episode's or a fact's message ids (default `store`);
    `graph` the agent's graph links, for the graph list (`graph_weight`); `replaced` the stale turns of a
    question about now (`memlake.search.current`)."""
    if scope not in SPECS:
        raise BadRequest(f"unknown scope {scope!r}: expected one of {', '.join(SPECS)}")
    when = parse_as_of(as_of, end_of_day=True)
    if embedder is None and use_embedder:
        embedder = configured_embedder(settings)
    # a one-off store keeps no snapshot: loading the agent's rows would cost more than the one search
    searcher = Searcher(store or VectorStore.of(settings), embedder, turn_store,
                        passages_per_turn=settings.chunk_long_turn_keys)
    params = SearchParams.from_settings(settings.search, k=k, **overrides)
    return searcher.search(
        SPECS[scope],
        query,
        agent_id,
        params,
        filters=filters,
        as_of=when,
        access_counts=(access or AccessLog(settings)).counts(agent_id, scope, when),
        query_vector=query_vector,
        graph=graph,
        replaced=replaced,
    )
