"""Fact search that sees what fact reads see: overrides and forgets written since the last run.

`search/fact_index` is built by a run from `facts/facts`. Until the next run,
an agent with log entries the tables do not reflect yet (see
`memlake.facts.reads`) is searched in a small index of its own: the facts a
read sees (the tables with those entries folded on top), written to a
temporary LanceDB folder and searched by the same code (`search_memory`)
with the same embedder. Vectors the read's fold already computed are reused,
so a remembered fact costs one embedding. The index is kept until the tables
or the logs change. Agents with nothing pending are searched in
`search/fact_index` as before; the next run makes that exact again.

Without `as_of` (now), a fact whose validity has ended, that a maintenance
sweep evicted or superseded, or a candidate (below `shown_confidence`, not the
user's), is left out, as `Memory.facts()` leaves it out.
With `as_of`, fact search sees what `Memory.facts(as_of=...)` sees: the versions
true then and said by then, each with its status then (active, even if
superseded since); with a
conversation filter, the facts citing any of those conversations
(a fact may rest on several; the index row names only its first). Such a view
is searched in an index of its own, kept like the others.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import threading
import uuid
import weakref
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from memlake.distill.confidence import shown
from memlake.facts.reads import AgentFacts, FactReads, MemoEmbed, select_facts
from memlake.index_rows import FACT_INDEX_SCHEMA, fact_index_rows
from memlake.maintenance.status import hidden_by_sweep
from memlake.moments import parse_as_of
from memlake.schemas import FACT_INDEX
from memlake.search import FACT_SPEC, empty_result, search_memory
from memlake.vectors import NO_EMBEDDER, Filters, VectorStore, quote


class FactOverlays:
    """Per-agent fact indexes of one reader for agents with pending log entries, in a temporary folder."""

    def __init__(self, reads: FactReads, size: int = 4) -> None:
        self.reads = reads
        self.size = size
        self.root = Path(tempfile.mkdtemp(prefix="memlake-fact-overlay-"))
        self._finalizer = weakref.finalize(self, shutil.rmtree, self.root, True)
        # agent -> (the tables it was built from, embedder name, store or None when the agent has no fact left)
        self._stores: dict[str, tuple[AgentFacts, str, Any]] = {}
        self._lock = threading.Lock()  # threads of a served Memory build an agent's overlay once

    def close(self) -> None:
        self._stores.clear()
        self._finalizer()

    def store_for(self, agent_id: str, embedder: Any, reuse_vectors: bool = True) -> tuple[bool, Any]:
        """(pending, store): whether the agent has pending entries, and the index to search them in (None when
        the agent has no fact left to search)."""
        tables = self.reads.get(agent_id)
        if not tables.pending:
            return False, None
        return True, self._store(agent_id, tables, tables.facts, embedder, reuse_vectors)

    def store_view(
        self, agent_id: str, when: datetime | None, conversations: frozenset[str], embedder: Any,
        reuse_vectors: bool = True,
    ) -> Any:
        """The index of a view of the agent's facts (None: nothing in it): with `when`, the versions a fact read
        as of then sees (each active then); with `conversations`, those citing any of them, named first."""
        tables = self.reads.get(agent_id)
        facts = tables.facts
        if when is not None:  # the versions shown then: a candidate is no more searched then than now
            facts = select_facts(facts, as_of=when, edges=tables.edges,
                                 shown_confidence=self.reads.settings.shown_confidence)
        if conversations:
            wanted = sorted(conversations)
            cited = pl.col("source_conversation_ids").list.eval(pl.element().filter(pl.element().is_in(wanted)))
            others = pl.col("source_conversation_ids").list.eval(pl.element().filter(~pl.element().is_in(wanted)))
            facts = facts.filter(cited.list.len() > 0).with_columns(
                pl.concat_list(cited, others).alias("source_conversation_ids"))
        key = f"{agent_id}@{when.isoformat() if when else 'now'}#{','.join(sorted(conversations))}"
        return self._store(key, tables, facts, embedder, reuse_vectors)

    def _store(self, key: str, tables: AgentFacts, facts: pl.DataFrame, embedder: Any, reuse_vectors: bool) -> Any:
        """The index of `facts` under `key`, kept until the agent's tables or the embedder change."""
        name = embedder.name if embedder is not None else NO_EMBEDDER
        with self._lock:
            cached = self._stores.get(key)
            if cached is not None and cached[0] is tables and cached[1] == name:
                return cached[2]
            store = self._build(key, tables, facts, embedder, reuse_vectors)
            # a store replaced or evicted here may still be searched by another thread: its folder goes with its
            # last reference (the finalizer set in `_build`), not now
            self._stores.pop(key, None)
            while len(self._stores) >= self.size:
                self._stores.popitem()
            self._stores[key] = (tables, name, store)
            return store

    def _build(self, key: str, tables: AgentFacts, facts: pl.DataFrame, embedder: Any, reuse_vectors: bool) -> Any:
        rows = fact_index_rows(facts)
        if rows.filter(pl.col("status") == "active").height == 0:
            return None
        embed = MemoEmbed(embedder.embed) if embedder is not None else None
        if embed is not None and reuse_vectors:  # the read's fold already embedded these texts
            embed.vectors.update({t: v for t, v in tables.vectors.items() if len(v) == embedder.dim})

        store = VectorStore(self.root / f"{hashlib.sha256(key.encode()).hexdigest()[:16]}-{uuid.uuid4().hex[:8]}")
        weakref.finalize(store, shutil.rmtree, store.path, True)
        store.sync(
            FACT_INDEX, rows, base_schema=FACT_INDEX_SCHEMA, key="fact_key", scope="true",
            embed=embed,
            embedder=embedder.name if embedder is not None else NO_EMBEDDER,
            dim=embedder.dim if embedder is not None else 0,
        )
        return store


def search_facts(
    settings: Any,
    query: str,
    agent_id: str,
    overlays: FactOverlays,
    *,
    reuse_vectors: bool = True,
    **params: Any,
) -> pl.DataFrame:
    """`search_memory(scope="facts")` over what a fact read sees: now, the run's index, or the agent's overlay
    when overrides or forgets were written since the last run; with `as_of` or conversations, a view."""
    filters = params.get("filters") or Filters()
    conversations = frozenset(filters.conversation_ids)
    when = parse_as_of(params.get("as_of"), end_of_day=True, none_is_now=False)
    if when is None:  # now: as `facts()`, not a fact said to hold until a day now gone
        now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
        clauses = [f"(valid_until IS NULL OR valid_until > timestamp {quote(now)})"]
        # the run's index knows nothing of the sweeps, nor of confidence: a version a sweep evicted or superseded,
        # and a candidate (not shown: `confidence.shown`), are left out here
        facts = overlays.reads.get(agent_id).facts
        hidden = pl.concat([hidden_by_sweep(facts).select("fact_id", "version"),
                            facts.filter(~shown(settings.shown_confidence)).select("fact_id", "version")])
        if hidden.height:
            keys = (hidden["fact_id"] + "@" + hidden["version"].cast(pl.String)).unique(maintain_order=True).to_list()
            clauses.append(f"fact_key NOT IN ({', '.join(quote(k) for k in keys)})")
        params["filters"] = filters = replace(filters, extra=(*filters.extra, *clauses))
    if when is not None or conversations:
        pending = True
        store = overlays.store_view(agent_id, when, conversations, params.get("embedder"), reuse_vectors)
        if conversations:  # the view holds only those conversations' facts
            params["filters"] = replace(filters, conversation_ids=())
    else:
        pending, store = overlays.store_for(agent_id, params.get("embedder"), reuse_vectors)
    if pending:
        if store is None:
            return empty_result(FACT_SPEC)
        params["store"] = store
    return search_memory(settings, query, agent_id, scope="facts", **params)
