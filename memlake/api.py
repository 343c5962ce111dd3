"""`Memory`: the read API over one home, for notebooks, the CLI and the HTTP service.

Every read is scoped to one agent and returns Polars frames.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np
import polars as pl

from memlake.access import AccessLog
from memlake.access import record_access as write_access  # Memory.record_access checks, then calls it
from memlake.changes import folder_state, memory_state
from memlake.context.cache import BlockCache
from memlake.embedding import QuestionMemo, TextEmbedder, configured_embedder
from memlake.errors import BadRequest, Conflict, NotFound, Unavailable
from memlake.graph.links import GraphLinks
from memlake.lake import Lake, query
from memlake.moments import as_utc_or_none
from memlake.requests import (
    FULL_BUDGET,
    ContextRequest,
    FactsRequest,
    HistoryRequest,
    ProfileRequest,
    SearchRequest,
    checked,
)
from memlake.schemas import (
    CHUNK_INDEX,
    CHUNKS,
    ENTITIES,
    ENTITY_MERGES,
    EPISODE_INDEX,
    EPISODES,
    FACT_INDEX,
    FACT_TYPES,
    FACTS,
    FORGET,
    OVERRIDES,
    RELATIONS,
    TURNS,
    Table,
    check_agent_id,
)
from memlake.settings import Settings, existing_home, load_settings
from memlake.storage import index_store
from memlake.text import content_words

# Imported where used, not here, so that `import memlake.api` (every CLI command, a notebook reading turns) pays
# for neither: memlake.vectors, memlake.search and memlake.facts.search load LanceDB (~1 s); memlake.facts.reads
# and memlake.facts.profile load the fact fold and the offline distiller's rules (~50 ms, ~20 ms).

# scope -> its LanceDB table, and the lake table that table is built from
INDEXES = {"chunks": (CHUNK_INDEX, CHUNKS), "episodes": (EPISODE_INDEX, EPISODES), "facts": (FACT_INDEX, FACTS)}
GRAPH_SCOPE = "graph"  # searched in the lake's graph tables: no index (the scopes: memlake.requests.SearchScope)

__all__ = ["Memory", "check_agent_id"]

T = TypeVar("T")


def _index_repair(home: Path) -> str:
    """What rebuilds a missing index: `memlake run` when a run stopped before building it (it redoes that
    run's days), else `memlake reindex` (the index was lost on its own: the lake has what it is built from)."""
    from memlake.run_lock import last_run_trace  # deferred: filelock, ~7 ms, for an error message

    trace = last_run_trace(home)
    if trace is None:
        return "run `memlake reindex`"
    if trace.is_going():
        return f"a `memlake run` ({trace.describe()}) is building it; search again once it has ended"
    return f"the last `memlake run` ({trace.describe()}) stopped before it finished: run `memlake run`"


def _run_stopped(home: Path) -> bool:
    """Whether the last `memlake run` stopped before it finished (and is not going now)."""
    from memlake.run_lock import last_run_trace  # deferred: filelock, ~7 ms, for an error message

    trace = last_run_trace(home)
    return trace is not None and not trace.is_going()


def _is_agent_id(name: str) -> bool:
    """Whether a landing folder's name is an agent id (other folders are quarantined, not an agent's memory)."""
    try:
        check_agent_id(name)
    except ValueError:
        return False
    return True


def _check_text(name: str, value: object) -> None:
    if value is not None and not isinstance(value, str):
        raise BadRequest(f"{name} is a string, got {value!r}")


class Memory:
    """Read access to everything memlake remembers under one home."""

    def __init__(self, home: str | Path | None = None, settings: Settings | None = None) -> None:
        self.settings = existing_home(settings or load_settings(home))
        self.lake = Lake.of(self.settings)
        self.indexes = index_store(self.settings)  # where the indexes are: built once, asked on every search
        # Reads may come from many threads at once (`memlake serve`): the helpers and caches a read fills are
        # filled under this lock, one fill at a time, and read without it once they are there.
        self._fills = threading.RLock()
        self._lake_reads: dict[str, tuple[object, Any]] = {}

    def _once(self, name: str, make: Callable[[], T]) -> T:
        """The helper kept as attribute `name` (the store, the embedder, a cache), made by the first read that
        needs it: threads asking at once get the same one, not one each."""
        if name not in self.__dict__:
            with self._fills:
                if name not in self.__dict__:
                    self.__dict__[name] = make()
        return cast(T, self.__dict__[name])

    def agents(self) -> list[str]:
        """Agent ids with memory here, sorted: a turn or a fact in the lake, a fact remembered or forgotten since
        the last run, or files landed for it that wait for a run (read again only after one of those changed:
        the service asks on every read whether the agent has memory)."""
        from memlake.inputs import log_dir, log_files, read_log  # deferred: only a change reads the logs

        logs = {table: log_dir(self.settings, table) for table in (OVERRIDES, FORGET)}
        landed = self.settings.landing_dir
        folders = tuple(sorted(e.name for e in os.scandir(landed) if e.is_dir())) if landed.is_dir() else ()

        def read() -> list[str]:
            told = {a for table in logs for a in read_log(self.settings, table)["agent_id"].to_list()}
            folded = set(self.lake.read(FACTS)["agent_id"].to_list())
            return sorted({*self.agents_with_turns(), *told, *folded, *filter(_is_agent_id, folders)} - {None})

        return list(self._on_lake("agents", read, also=(folders, *(tuple(log_files(d)) for d in logs.values()))))

    def agents_with_turns(self) -> list[str]:
        """Agent ids that have at least one turn, sorted."""

        def read() -> list[str]:
            con = self.lake.connect()
            return [r[0] for r in con.execute("SELECT DISTINCT agent_id FROM transcripts.turns ORDER BY 1").fetchall()]

        return list(self._on_lake("agents_with_turns", read))

    def has_memory(self, agent_id: str) -> bool:
        """Whether the agent has any memory here (see `agents`). A read of an agent without is most likely of a
        mistyped id, and says so."""
        return check_agent_id(agent_id) in self.agents()

    def turns(self, agent_id: str, conversation_id: str | None = None) -> pl.DataFrame:
        """An agent's turns in conversation order, optionally of one conversation."""
        check_agent_id(agent_id)
        _check_text("conversation_id", conversation_id)
        con = self.lake.connect()
        sql = "SELECT * FROM transcripts.turns WHERE agent_id = ?"
        params: list[str] = [agent_id]
        if conversation_id is not None:
            sql += " AND conversation_id = ?"
            params.append(conversation_id)
        sql += " ORDER BY conversation_started_at, conversation_id, turn_index"
        frame = query(con, sql, params)
        return frame.select([*TURNS.schema.names, "day"]) if frame.height else frame

    def episodes(
        self, agent_id: str, since: datetime | str | None = None, until: datetime | str | None = None
    ) -> pl.DataFrame:
        """An agent's episodes (one per distilled conversation), oldest first.

        `since` / `until` (datetimes, or ISO dates or times, UTC) keep the
        conversations that overlap the window: ended at or after `since` and
        started at or before `until`.
        """
        check_agent_id(agent_id)
        start = as_utc_or_none(since)
        end = as_utc_or_none(until, end_of_day=True)
        if start is not None and end is not None and start > end:  # as a search says it
            raise BadRequest(f"since ({start:%Y-%m-%d %H:%M}) is after until ({end:%Y-%m-%d %H:%M})")
        frame = self._lake_table(EPISODES).filter(pl.col("agent_id") == agent_id)
        if start is not None:
            frame = frame.filter(pl.col("conversation_ended_at") >= start)
        if end is not None:
            frame = frame.filter(pl.col("conversation_started_at") <= end)
        return frame.sort("conversation_started_at", "conversation_id")

    def _lake_table(self, table: Table) -> pl.DataFrame:
        """A lake table whole, read again only after a lake write (`_on_lake`): graph and episode reads of
        several agents, or of one agent many times (the context block), share one read."""
        return self._on_lake(table.path, lambda: self.lake.read(table))

    def _on_lake(self, name: str, build: Callable[[], T], also: object = None) -> T:
        """`build()` (a read of lake tables), computed again only after a lake write by any process (or a change
        of `also`, what else it reads): a context block reads the episodes twice, and a whole table read costs
        ~1 s at LoCoMo's 272 conversations."""
        # before the read: a write during it makes the next call read again
        state = (folder_state(self.lake.store), also)
        cached = self._lake_reads.get(name)
        if cached is None or cached[0] != state:
            with self._fills:  # threads that find it stale at once read it once
                cached = self._lake_reads.get(name)
                if cached is None or cached[0] != state:
                    cached = self._lake_reads[name] = (state, build())
        return cast(T, cached[1])

    def sql(
        self, query: str, params: list[Any] | None = None, *, agent_id: str | None = None, all_agents: bool = False
    ) -> pl.DataFrame:
        """`query` in DuckDB SQL over every lake table as this API reads it, as a Polars frame: each table a view
        `<layer>.<table>` (`facts.facts`, `transcripts.turns`, ...), values bound to its `?` from `params`.

        Rows of one agent (`agent_id`), or of every agent (`all_agents=True`, for an operator); one of the two.
        The facts layer is what `facts`, `history` and `profile` read: remembered and forgotten facts since the
        last run applied, a sweep's evictions as status `evicted`. The views are all a query reaches: no files.
        README "Querying with SQL" lists the columns and what each time means."""
        from memlake.sql import run_sql  # deferred: the views read the fact fold, ~50 ms

        if not isinstance(all_agents, bool) or (agent_id is None) == (not all_agents):
            raise BadRequest("Memory.sql reads one agent's rows or every agent's: give agent_id or all_agents=True, "
                             "not both")
        agents = self.agents() if agent_id is None else [check_agent_id(agent_id)]
        return run_sql(self.settings, self.lake, self._fact_reads().get, query, params, agents, all_agents)

    # Working memory (memlake.facts). Reads fold overrides and forgets written since the last run on top of the
    # tables, so a remembered or forgotten fact shows at once; `_fact_reads` keeps that until tables or logs change.

    def _remembering_embed(self) -> Any:
        """The configured embedder's `embed`, remembering its vectors by text (`MemoEmbed`), loaded only when an
        unfolded override or `relevance` needs it."""
        embedder = self._once("_embedder", self._load_embedder)
        if embedder is None:
            return None
        from memlake.facts.reads import MemoEmbed  # deferred: the fact fold, ~50 ms

        return self._once("_embed_memo", lambda: MemoEmbed(embedder.embed))  # the embedder is kept once too

    def _load_embedder(self) -> TextEmbedder | None:
        """The configured embedder, remembering the questions this reader embedded (`QuestionMemo`)."""
        embedder = configured_embedder(self.settings)
        return QuestionMemo(embedder) if embedder is not None else None

    def _store_to_look(self) -> Any:
        """The search's store if a search opened it, else a one-off one for a look (no snapshots)."""
        from memlake.vectors import VectorStore  # deferred: LanceDB, ~1 s

        return getattr(self, "_vectors", None) or VectorStore.of(self.settings)

    def _check_index(self, scope: str, agent_id: str) -> None:
        """A search that found nothing because its index is not there, while the lake holds what the index is
        built from for this agent (or, after a `memlake run` that stopped before it finished, the agent's turns,
        which that run had not carried that far), is an error saying how to rebuild it."""
        table, source = INDEXES[scope]
        # the tables LanceDB lists, not the store's cache of open ones: this one may have gone since
        indexes = self.indexes
        indexed = indexes.exists() and table in self._store_to_look().db.list_tables().tables
        if indexed:
            return
        if self._holds(source, agent_id):
            missing = (f"the search index {table} is missing from {indexes.uri}, though the lake holds "
                       f"{source.name} of agent {agent_id!r}")
            raise Unavailable(f"{missing}: {_index_repair(self.settings.home)}")
        if self._holds(TURNS, agent_id) and _run_stopped(self.settings.home):
            raise Unavailable(f"the search index {table} is missing from {indexes.uri}: the lake holds "
                             f"turns of agent {agent_id!r} that were not built that far, because "
                             f"{_index_repair(self.settings.home)}")

    def _holds(self, table: Table, agent_id: str) -> bool:
        """Whether the lake's `table` has a row of the agent."""
        return self.lake.holds(table, "agent_id", agent_id)

    def _fact_reads(self) -> Any:
        from memlake.facts.reads import FactReads  # deferred: the fact fold, ~50 ms

        return self._once("_fact_reads_cache", lambda: FactReads(self.settings, self._remembering_embed))

    def facts(
        self,
        agent_id: str,
        type: str | None = None,  # noqa: A002 - the fact type, as in the schema
        subject: str | None = None,
        as_of: datetime | str | None = None,
        include_history: bool = False,
        *,
        candidates: bool = False,
    ) -> pl.DataFrame:
        """An agent's current facts shown to it (confidence at least the `shown_confidence` setting, or the user's
        own), or those true and said by `as_of`; with every version, candidates too, when `include_history`.
        `candidates`: the current facts held back instead (below the threshold, kept until said again)."""
        from memlake.facts.reads import select_facts  # deferred: the fact fold, ~50 ms

        checked(FactsRequest, type=type, subject=subject, include_history=include_history, candidates=candidates)
        if include_history and candidates:
            raise BadRequest("candidates are the current facts held back: ask for them or for history, not both")
        if type is not None:
            if type.strip().lower() not in FACT_TYPES:
                raise BadRequest(f"unknown fact type {type!r}: one of {', '.join(FACT_TYPES)}")
            type = type.strip().lower()  # noqa: A001 - the parameter, as named in the schema
        tables = self._fact_reads().get(check_agent_id(agent_id))
        return select_facts(tables.facts, type=type, subject=subject, as_of=as_of, include_history=include_history,
                            edges=tables.edges, shown_confidence=self.settings.shown_confidence, candidates=candidates)

    def history(self, fact_id: str, agent_id: str) -> pl.DataFrame:
        """Every version of one of the agent's facts (and of the facts it updated or that updated it), oldest
        first. Fact ids are derived (agent, subject, slot), so they grant nothing alone: another agent's id
        reads as an unknown one, an empty frame."""
        from memlake.facts.reads import fact_history  # deferred: the fact fold, ~50 ms

        if not isinstance(fact_id, str) or not fact_id.strip():
            raise BadRequest(f"history needs a fact id (a `fact_id` of `facts()`), got {fact_id!r}")
        checked(HistoryRequest, fact_id=fact_id)
        tables = self._fact_reads().get(check_agent_id(agent_id))
        return fact_history(tables.facts, tables.edges, fact_id)

    def profile(self, agent_id: str, version: int | None = None) -> pl.DataFrame:
        """The agent's profile (latest version unless `version`): one row with cited lines and Markdown text.

        No profile yet gives an empty frame; a `version` the agent does not have is an error. A fact remembered,
        rejected or forgotten since the last run already shows in it, as in every other read."""
        from memlake.facts.reads import profile  # deferred: the fact fold, ~50 ms

        agent_id = check_agent_id(agent_id)
        checked(ProfileRequest, version=version)
        tables = self._fact_reads().get(agent_id)
        frame = profile(self.settings, agent_id, version, tables)
        if frame.height == 0 and version is not None:
            latest = profile(self.settings, agent_id, tables=tables)
            have = f"the latest is {latest['version'][0]}" if latest.height else "it has no profile yet"
            raise NotFound(f"agent {agent_id!r} has no profile version {version}; {have}")
        return frame

    def remember(
        self,
        agent_id: str,
        content: str,
        *,
        replaces: str | None = None,
        type: str | None = None,  # noqa: A002 - the fact type, as in the schema
        subject: str | None = None,
        slot: str | None = None,
        value: str | None = None,
        valid_from: datetime | str | None = None,
        valid_until: datetime | str | None = None,
        importance: float | None = None,
        tags: str | list[str] | None = None,
        author: str = "api",
    ) -> pl.DataFrame:
        """Append a user override: a new fact, or a correction of `replaces` (a fact id). Overrides always win.

        Without type/slot, the statement is structured by the offline distiller's rules when they
        recognise it ("I moved to Paris" -> home_city = Paris). It always writes: returns the fact rows it made or
        confirmed, each with `change` (new fact, new version, confirmed), what a new version replaced in its chain
        (`previous_version`, `previous_value`, `previous_content`) and the plans or states it closed (`closed`).
        """
        from memlake.facts.reads import remember  # deferred: the fact fold, ~50 ms

        return remember(
            self.settings, check_agent_id(agent_id), content, replaces=replaces, embed_factory=self._remembering_embed,
            author=author, type=type, subject=subject, slot=slot, value=value, valid_from=valid_from,
            valid_until=valid_until, importance=importance, tags=[tags] if isinstance(tags, str) else tags or [],
        )

    def reject(self, agent_id: str, fact_id: str) -> pl.DataFrame:
        """Append a user override rejecting an (extracted) fact by id; returns the rejected row (`change`
        rejected)."""
        from memlake.facts.reads import remember  # deferred: the fact fold, ~50 ms

        return remember(self.settings, check_agent_id(agent_id), None, reject=fact_id,
                        embed_factory=self._remembering_embed)

    def forget(
        self,
        agent_id: str,
        *,
        fact_id: str | None = None,
        conversation_id: str | None = None,
        everything: bool = False,
        reason: str | None = None,
    ) -> pl.DataFrame:
        """Forget one fact (its whole chain, and the messages it was read from), one conversation, or the whole
        agent (`everything`).

        Appends to the forget log (ids only), removes the text from every store at once (landing, quarantine,
        every lake table, every LanceDB version, the caches; see `memlake.erase`) with what only it gave, and
        writes a receipt (`forget_receipts`). Returns the fact versions that went.
        """
        from memlake.erase import forget  # deferred: the fact fold, ~50 ms

        return forget(self.settings, check_agent_id(agent_id), fact_id=fact_id, conversation_id=conversation_id,
                      everything=everything, reason=reason, embed_factory=self._remembering_embed)

    def export(self, agent_id: str, path: str | Path, *, archive: bool = False) -> dict[str, Any]:
        """Write the agent's memory to `path`: a new folder of Parquet per table (the agent's rows, what it forgot
        left out) and `manifest.json` (schema versions, row counts, memlake version, export time); with `archive`,
        one .tar.gz, .tgz or .zip file. Returns the manifest."""
        from memlake.agent_export import export_agent  # deferred: the fact fold, ~50 ms

        return export_agent(self.settings, agent_id, path, archive=archive)

    def import_(self, path: str | Path, agent_id: str, *, merge: bool = False) -> dict[str, Any]:
        """Import an export (a folder or an archive) as agent `agent_id` of this home, through landing and the
        inputs logs: the next run derives every layer again. An agent with memory here already is refused unless
        `merge`. Returns what was written (`landing_file`, counts of turns and log entries)."""
        from memlake.agent_export import import_agent  # deferred: the fact fold, ~50 ms

        return import_agent(self.settings, path, agent_id, merge=merge)

    def forget_preview(self, agent_id: str, query: str, k: int = 20) -> pl.DataFrame:
        """What forgetting by `query` would take, forgetting nothing: every version of the (at most `k`) current
        facts whose words the query matches (full text, not mere vector nearness: a deletion goes by what was
        asked), best match first. Forget exactly those with `forget(agent_id, fact_id=...)` per id."""
        hits = self.search(query, agent_id, k=k, scope="facts")
        ids = list(dict.fromkeys(hits.filter(pl.col("text_rank").is_not_null())["fact_id"].to_list()))
        versions = self.facts(agent_id, include_history=True).filter(pl.col("fact_id").is_in(ids))
        order = {fact_id: place for place, fact_id in enumerate(ids)}
        return versions.sort(pl.col("fact_id").replace_strict(order, return_dtype=pl.Int64), "version")

    def forget_receipts(self, agent_id: str) -> pl.DataFrame:
        """One row per forget of the agent, oldest first: what was asked, what each store lost (`removed`), and
        the ids and content hashes of what went (never text)."""
        from memlake.erase import read_receipts  # deferred: the fact fold, ~50 ms

        return read_receipts(self.settings, check_agent_id(agent_id))

    def search(
        self,
        query: str,
        agent_id: str,
        k: int = 10,
        scope: str = "chunks",
        as_of: datetime | str | None = None,
        *,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        role: str | list[str] | None = None,
        conversation_id: str | list[str] | None = None,
        record_access: bool = False,
        **params: Any,
    ) -> pl.DataFrame:
        """Hybrid search of one agent's memory: one row per hit, in `rank` order, best first by `score`, the score
        the list is ordered by (a near-duplicate of a row above, or a conversation's fifth turn, lowered by MMR and
        the spread; `own_score` is the hit's before them). For a question about now, a turn that said only facts
        since replaced gives way to the turn that said what replaced them (`standing`, memlake.search.current).

        `scope` is chunks (turns, with adjacent turns as `context`), episodes
        or facts. Recency counts back from `as_of` (naive = UTC, ISO string,
        None = now; a date means its end, as in `facts`). `since` and `until` keep
        rows said in [since, until); a date `until` includes that day. Columns:
        score, own_score and its parts (rrf, vector_rank, text_rank, context_lift, standing, recency,
        importance, access, boost), which key of a turn each list matched
        (vector_match, text_match: turn, sentence, passage or question; None if that
        list did not find it), text, `excerpt` (True: `text` is the passage of a
        long turn that matched, not the whole turn: `turns(agent_id,
        conversation_id)` rows turn_start..turn_end give it whole), agent_id,
        conversation_id, message_ids (best match first), created_at, and `mode`:
        `hybrid`, or `full_text` when no embedding model is loadable (`note` says why).
        `params` override search settings (mmr_lambda, window_turns, candidates, ...).
        `record_access=True` logs the hits as used now (see `record_access`); a plain search writes nothing.
        `graph_hop_weight` and `graph_hop_seeds` (settings `search_graph_hop_*`; weight 0 = off, the default)
        order the turn hits again by the sessions that share rare entities with the first ones
        (`memlake.graph.hop`); each row then has `graph_hop`, its session's share.

        Scope `graph` matches entity names and aliases and the text of relations in force at `as_of` instead
        (`memlake.graph.reads.search_graph`): rank, score, kind (entity or relation), key (entity id, or
        relation_id@version), text, conversation_id, conversation_ids, message_ids, mode.
        """
        from memlake.search import SPECS, empty_result  # deferred: LanceDB, ~1 s

        agent_id, filters = self._checked_search(query, agent_id, k, scope, since, until, role, conversation_id)
        if scope == GRAPH_SCOPE:
            return self._search_graph(query, agent_id, k, as_of, params)
        hop_weight, hop_seeds = self._graph_hop_settings(scope, params)
        if "embedder" not in params:  # after the checks: a model takes seconds
            self._once("_embedder", self._load_embedder)
        if not self.indexes.exists():  # nothing indexed yet; a search creates nothing
            self._check_index(scope, agent_id)
            return empty_result(SPECS[scope])
        self._search_tools(params)
        if scope == "chunks" and "replaced" not in params:  # a question about now: stale turns give way
            params["replaced"] = self._replaced(query, agent_id, as_of)
        if scope == "chunks" and params.get("graph_weight", self.settings.search_graph_weight):
            params["graph"] = self._on_lake(f"graph_links/{agent_id}", lambda: GraphLinks.of_agent(
                self._lake_table, agent_id))  # the turns the query's entities pull (search_graph_weight)
        try:
            found = self._run_search(query, agent_id, k, scope, as_of, filters, params)
        except (RuntimeError, OSError) as exc:
            # a table deleted (and perhaps built again) since this Memory last read it: read it afresh, once
            if "not found" not in str(exc).lower() or params["store"] is not self.__dict__["_vectors"]:
                raise
            params["store"].reset()
            found = self._run_search(query, agent_id, k, scope, as_of, filters, params)
        if found.height == 0:
            self._check_index(scope, agent_id)
        elif hop_weight > 0:
            found = self._graph_hop(found, agent_id, hop_weight, hop_seeds)
        if record_access:  # keys a search just returned: no need to look them up again
            write_access(self.settings, agent_id, scope, found["key"].to_list())
        return found

    def _replaced(self, query: str, agent_id: str, as_of: datetime | str | None) -> Any:
        """The turns that said only facts replaced by `as_of`, with those that said what replaced them, when `query`
        asks about now (memlake.search.current); None otherwise."""
        from memlake.search.current import replaced_turns  # deferred: LanceDB, ~1 s

        moment = as_utc_or_none(as_of, end_of_day=True)
        return replaced_turns(agent_id, query, self.facts(agent_id, as_of=moment, include_history=True),
                              lambda: pl.concat([self.facts(agent_id, as_of=moment, candidates=held)
                                                 for held in (False, True)]),  # shown and held back: in force
                              lambda ids: self.turns(agent_id).filter(pl.col("message_id").is_in(ids)))

    def _checked_search(
        self, query: str, agent_id: str, k: int, scope: str, since: datetime | str | None, until: datetime | str | None,
        role: str | list[str] | None, conversation_id: str | list[str] | None,
    ) -> tuple[str, Any]:
        """The agent and the filters of a search, once what was asked is known to be a search."""
        from memlake.vectors import Filters  # deferred: LanceDB, ~1 s

        if not isinstance(query, str) or not query.strip():
            raise BadRequest(f"a search needs words to look for, got {query!r}")

        def as_tuple(value: str | list[str] | None) -> tuple[str, ...]:
            return () if value is None else (value,) if isinstance(value, str) else tuple(value)

        filters = Filters(
            since=as_utc_or_none(since),
            until=as_utc_or_none(until, end_of_day=True),  # a day: up to its end
            roles=as_tuple(role),
            conversation_ids=as_tuple(conversation_id),
        )
        agent_id = check_agent_id(agent_id)
        checked(SearchRequest, query=query, k=k, scope=scope)
        if scope == GRAPH_SCOPE and (since or until or role or conversation_id):
            raise BadRequest("a graph search takes no since, until, role or conversation_id: the graph holds "
                             "entities and relations, not turns (use as_of for the relations in force then)")
        return agent_id, filters

    def _search_tools(self, params: dict[str, Any]) -> None:
        """The store (kept open: later reads see new versions), the embedder and the access log a search uses,
        unless the caller gave its own."""
        from memlake.vectors import VectorStore  # deferred: LanceDB, ~1 s

        store = self._once("_vectors", lambda: VectorStore.serving(self.indexes, self.settings.serving))
        params.setdefault("store", store)
        params.setdefault("turn_store", store)  # a fact overlay's hits read their turns here
        params.setdefault("embedder", getattr(self, "_embedder", None))
        params.setdefault("use_embedder", params["embedder"] is not None)
        params.setdefault("access", self._access_log())

    def _graph_hop_settings(self, scope: str, params: dict[str, Any]) -> tuple[float, int]:
        """The graph hop's weight and seeds for this search (taken out of `params`): settings, or the call's."""
        weight = params.pop("graph_hop_weight", None)
        seeds = params.pop("graph_hop_seeds", None)
        weight = self.settings.search_graph_hop_weight if weight is None else weight
        seeds = self.settings.search_graph_hop_seeds if seeds is None else seeds
        if isinstance(weight, bool) or not isinstance(weight, int | float) or weight < 0:
            raise BadRequest(f"graph_hop_weight must be a number of at least 0, got {weight!r}")
        if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
            raise BadRequest(f"graph_hop_seeds must be a whole number of at least 1, got {seeds!r}")
        return (float(weight), seeds) if scope == "chunks" else (0.0, seeds)

    def _graph_hop(self, found: pl.DataFrame, agent_id: str, weight: float, seeds: int) -> pl.DataFrame:
        """Turn hits ordered again by the sessions that share rare entities with the first ones (graph.hop)."""
        from memlake.graph.hop import hop_scores, lift_by_hop, seed_sessions  # deferred: with the graph's rules

        entities = self._graph(agent_id)[0]
        scores = hop_scores(entities, seed_sessions(found["conversation_id"].to_list(), seeds))
        return lift_by_hop(found, scores, weight)

    def _run_search(
        self, query: str, agent_id: str, k: int, scope: str, as_of: datetime | str | None, filters: Any,
        params: dict[str, Any],
    ) -> pl.DataFrame:
        if scope == "facts":  # what fact reads see: overrides and forgets written since the last run included
            from memlake.facts.search import search_facts  # deferred: LanceDB, ~1 s

            return search_facts(
                self.settings, query, agent_id, self._fact_overlays(), k=k, as_of=as_of, filters=filters,
                reuse_vectors=params["embedder"] is getattr(self, "_embedder", None), **params
            )
        from memlake.search import search_memory  # deferred: LanceDB, ~1 s

        return search_memory(self.settings, query, agent_id, k=k, scope=scope, as_of=as_of, filters=filters,
                             **params)

    def relevance(self, query: str, texts: list[str]) -> list[float]:
        """How near each text is to `query`, measured one way whatever index a text came from: the cosine
        similarity under the configured embedder, or with none, the share of the query's content words the text
        has. Search scores compare only within one index (rank fusion and boosts); this orders hits of several
        indexes together. Texts are embedded through the reader's remembering `embed`: the hits a recall
        returns come back on the next one, and each is embedded once per reader."""
        embed = self._remembering_embed()
        if embed is None:
            wanted = content_words(query)
            return [len(wanted & content_words(text)) / len(wanted) if wanted else 0.0 for text in texts]
        vectors = np.asarray(embed([query, *texts]), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1)
        norms[norms == 0] = 1.0
        unit = vectors / norms[:, None]
        return [float(value) for value in unit[1:] @ unit[0]]

    def record_access(
        self, agent_id: str, object_ids: str | list[str], scope: str = "chunks", at: datetime | str | None = None
    ) -> int:
        """Log that the agent used these objects (search results' `key`s; one key or a list) at `at` (default now).

        The access-frequency boost of later searches counts them, up to each search's `as_of`.
        Returns how many objects were logged (repeats once); none, nothing is written. A key that is
        not one of the agent's in `scope` is an error, and nothing is written: the log is append-only.
        """
        agent_id = check_agent_id(agent_id)
        if scope not in INDEXES:
            raise BadRequest(f"unknown scope {scope!r}: expected one of {', '.join(INDEXES)}")
        ids = [object_ids] if isinstance(object_ids, str) else list(object_ids)
        unknown = sorted(set(ids) - self._keys(agent_id, scope, ids))
        if unknown:
            shown = ", ".join(map(repr, unknown[:5])) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
            raise NotFound(f"not a {scope} key of agent {agent_id!r} (a search result's `key`): {shown}")
        return write_access(self.settings, agent_id, scope, ids, at=at)

    def _keys(self, agent_id: str, scope: str, wanted: list[str]) -> set[str]:
        """Which of `wanted` are keys a search of the agent's `scope` can return now."""
        if scope == "facts":  # what fact reads see, remembered facts included
            facts = self._fact_reads().get(agent_id).facts
            return {f"{f}@{v}" for f, v in facts.select("fact_id", "version").rows()} & set(wanted)
        from memlake.search import SPECS  # deferred: LanceDB, ~1 s
        from memlake.vectors import Filters, quote  # deferred: LanceDB, ~1 s

        table, key = INDEXES[scope][0], SPECS[scope].key
        if not wanted or not self.indexes.exists():
            return set()
        store = self._store_to_look()
        if not store.exists(table):
            return set()
        clause = f"{key} IN ({', '.join(quote(str(w)) for w in dict.fromkeys(wanted))})"
        return set(store.rows(table, agent_id, Filters(extra=(clause,)), columns=[key])[key].to_list())

    def _access_log(self) -> Any:
        return self._once("_access_log_cache", lambda: AccessLog(self.settings))

    def _fact_overlays(self) -> Any:
        from memlake.facts.search import FactOverlays  # deferred: LanceDB, ~1 s

        return self._once("_fact_overlays_cache", lambda: FactOverlays(self._fact_reads()))

    # The knowledge graph (memlake.graph): what the last run built; a split shows once a run has built it again.

    def _graph(self, agent_id: str) -> tuple[pl.DataFrame, pl.DataFrame]:
        """The agent's entities and relation versions."""
        agent_id = check_agent_id(agent_id)
        return tuple(  # type: ignore[return-value]
            self._lake_table(table).filter(pl.col("agent_id") == agent_id) for table in (ENTITIES, RELATIONS))

    def entities(
        self,
        agent_id: str,
        name: str | None = None,
        type: str | None = None,  # noqa: A002 - the entity type, as in the schema
    ) -> pl.DataFrame:
        """The agent's resolved entities, optionally those called `name` (canonical or an alias, case and accents
        aside) or of one `type` (person, organization, place, project, tool, concept, event, animal)."""
        from memlake.graph.reads import select_entities  # deferred: with the graph's rules

        _check_text("name", name)
        _check_text("type", type)
        return select_entities(self._graph(agent_id)[0], name, type)

    def relations(
        self, agent_id: str, entity: str | None = None, relation: str | None = None,
        as_of: datetime | str | None = None,
    ) -> pl.DataFrame:
        """The agent's relation versions, closed ones included (`status`, `valid_until`), newest first; with
        `as_of`, only those in force then. `entity` (a name, an alias or an entity id) keeps the relations it is
        an end of; `relation` one relation ("works_at"; "works for" is read as it). Ends by name and by id."""
        from memlake.graph.reads import select_relations  # deferred: with the graph's rules

        _check_text("entity", entity)
        _check_text("relation", relation)
        entities, relations = self._graph(agent_id)
        return select_relations(relations, entities, entity, relation, as_utc_or_none(as_of, end_of_day=True))

    def neighborhood(
        self, agent_id: str, entity: str, depth: int = 2, as_of: datetime | str | None = None
    ) -> pl.DataFrame:
        """The relations within `depth` hops (1-5) of `entity` (a name, an alias or an entity id), either way,
        in force at `as_of` (None: the current ones); `depth` says at which hop each was reached."""
        from memlake.graph.reads import neighborhood  # deferred: with the graph's rules

        _check_text("entity", entity)
        if not entity or not entity.strip():
            raise BadRequest(f"a neighbourhood needs an entity: a name, an alias or an entity id, got {entity!r}")
        entities, relations = self._graph(agent_id)
        return neighborhood(relations, entities, entity, depth, as_utc_or_none(as_of, end_of_day=True))

    def entity_merges(self, agent_id: str) -> pl.DataFrame:
        """The merges entity resolution made for the agent (rule, reason, score), those a user undid included."""
        agent_id = check_agent_id(agent_id)
        return self._lake_table(ENTITY_MERGES).filter(pl.col("agent_id") == agent_id).sort("score", "merge_id")

    def split(self, agent_id: str, merge_id: str, author: str = "api") -> pl.DataFrame:
        """Undo one merge of the agent's (a `merge_id` of `entity_merges`): logged for good, so every build from
        the next run on keeps the two apart. Returns the merge undone."""
        from memlake.graph.splits import write_split  # deferred: with the graph's rules

        _check_text("merge_id", merge_id)
        merges = self.entity_merges(agent_id)
        merge = merges.filter(pl.col("merge_id") == merge_id)
        if merge.height == 0:
            raise NotFound(f"agent {agent_id!r} has no merge {merge_id!r}: see `entity_merges` for the ids")
        if merge["undone_by"][0] is not None:
            raise Conflict(f"merge {merge_id!r} is already undone (by {merge['undone_by'][0]})")
        write_split(self.settings, agent_id, merge, author=author)
        return merge

    def _search_graph(self, query: str, agent_id: str, k: int, as_of: datetime | str | None,
                      params: dict[str, Any]) -> pl.DataFrame:
        """Entities and relations whose names, aliases or "source relation target" text match the query."""
        from memlake.graph.reads import search_graph  # deferred: with the graph's rules

        if set(params) - {"embedder"}:
            raise BadRequest(f"a graph search has no setting {', '.join(sorted(set(params) - {'embedder'}))}")
        embedder = params["embedder"] if "embedder" in params else self._once("_embedder", self._load_embedder)
        entities, relations = self._graph(agent_id)
        return search_graph(entities, relations, query, k, embedder.embed if embedder is not None else None,
                            as_utc_or_none(as_of, end_of_day=True))

    def context(
        self,
        query: str,
        agent_id: str,
        mode: str = "compact",
        budget: int | None = None,
        as_of: datetime | str | None = None,
        *,
        gate: str | None = None,
    ) -> Any:
        """The context block to put before the model for `query`: a `ContextBlock` (text, sections, token
        count, provenance of every line), within `budget` tokens of the packaged MiniLM tokenizer (50 to 100,000:
        `memlake.requests.ContextRequest`, the bounds HTTP and MCP take too).

        `compact`: the date, the user's overrides, then the one section the relevance gate chose; budget default
        the `context_budget_tokens` setting. `full`: the date, the overrides, then profile, working memory,
        recent summaries, key relationships and the query's matched excerpts, memories and summaries, each under
        its own budget (`memlake.requests.FULL_SECTIONS`), a line already in left out; budget default their sum, a
        smaller one cutting the last sections first. `gate`: heuristic, llm (the core model; the heuristic when
        none is set or it fails) or off; default the `context_gate` setting. `as_of` gives the block as it would
        have been then (what was said at that instant included). The same request within
        `context_cache_seconds` gets the same block, unless the agent's memory was written since."""
        _check_text("query", query)
        if not query or not query.strip():
            raise BadRequest(f"a context block needs a question, got {query!r}")
        asked = checked(ContextRequest, query=query, mode=mode, budget=budget, gate=gate)
        budget = asked.budget or (self.settings.context_budget_tokens if mode == "compact" else FULL_BUDGET)
        gate = asked.gate or self.settings.context_gate
        agent_id = check_agent_id(agent_id)
        moment = as_utc_or_none(as_of, end_of_day=True)
        request = (agent_id, query, mode, budget, moment, gate)
        return self._context_blocks().get(request, agent_id, lambda: self._build_context(*request))

    def _context_blocks(self) -> Any:
        return self._once("_context_cache", lambda: BlockCache(self.settings.context_cache_seconds,
                                                               lambda agent_id: memory_state(self.settings, agent_id)))

    def _build_context(self, agent_id: str, query: str, mode: str, budget: int, moment: datetime | None,
                       gate: str) -> Any:
        from memlake.context.assemble import assemble  # deferred: with the fact fold it reads
        from memlake.context.gate import decide  # deferred: with the fact fold it reads
        from memlake.context.plans import (  # deferred: with the fact fold it reads
            Ask,
            compact_plans,
            full_plans,
            names_said,
        )
        from memlake.embedding import count_packaged_tokens

        current = self.facts(agent_id, as_of=moment)
        subjects, names = current["subject"].unique().to_list(), names_said(self, agent_id, moment)
        model_gate = self._model_gate() if gate == "llm" else None
        if model_gate is not None:
            decision = model_gate.decide(query, subjects, names)
        else:
            decision = decide(query, "off" if gate == "off" else "heuristic", subjects, names)
            if gate == "llm":
                decision = replace(decision, reason=f"{decision.reason} (heuristic: no core model is configured)")
        ask = Ask(self, query, agent_id, decision, current, moment)
        plans = compact_plans(ask) if mode == "compact" else full_plans(ask)
        today = (moment or datetime.now(UTC)).date()
        return assemble(today, decision, mode, plans, budget, count_packaged_tokens)

    def _model_gate(self) -> Any:
        """The llm gate of the home's core model (one per Memory: its answers are cached), None without one."""
        from memlake.context.llm_gate import ModelGate  # deferred: openai and instructor, ~1 s

        return self._once("_model_gate_cache", lambda: ModelGate.for_settings(self.settings))
