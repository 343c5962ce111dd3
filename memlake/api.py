"""`Memory`: the read API over one home, for notebooks, the CLI and the HTTP service.

Every read is scoped to one agent and returns Polars frames.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from memlake.access import AccessLog
from memlake.access import record_access as write_access  # Memory.record_access checks, then calls it
from memlake.embedding import configured_embedder
from memlake.lake import Lake, query
from memlake.moments import as_utc_or_none
from memlake.schemas import (
    CHUNK_INDEX,
    CHUNKS,
    EPISODE_INDEX,
    EPISODES,
    FACT_INDEX,
    FACT_TYPES,
    FACTS,
    TURNS,
    Table,
    check_agent_id,
)
from memlake.settings import Settings, existing_home, load_settings

# Imported where used, not here, so that `import memlake.api` (every CLI command, a notebook reading turns) pays
# for neither: memlake.vectors, memlake.search and memlake.facts.search load LanceDB (~1 s); memlake.facts.reads
# and memlake.facts.profile load the fact fold and the offline distiller's rules (~50 ms, ~20 ms).

# scope -> its LanceDB table, and the lake table that table is built from
INDEXES = {"chunks": (CHUNK_INDEX, CHUNKS), "episodes": (EPISODE_INDEX, EPISODES), "facts": (FACT_INDEX, FACTS)}

__all__ = ["Memory", "check_agent_id"]


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


def _check_text(name: str, value: object) -> None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{name} is a string, got {value!r}")


class Memory:
    """Read access to everything memlake remembers under one home."""

    def __init__(self, home: str | Path | None = None, settings: Settings | None = None) -> None:
        self.settings = existing_home(settings or load_settings(home))
        self.lake = Lake(self.settings.lake_dir)

    def agents(self) -> list[str]:
        """Agent ids that have at least one turn, sorted."""
        con = self.lake.connect()
        return [r[0] for r in con.execute("SELECT DISTINCT agent_id FROM transcripts.turns ORDER BY 1").fetchall()]

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
            raise ValueError(f"since ({start:%Y-%m-%d %H:%M}) is after until ({end:%Y-%m-%d %H:%M})")
        frame = self.lake.read(EPISODES).filter(pl.col("agent_id") == agent_id)
        if start is not None:
            frame = frame.filter(pl.col("conversation_ended_at") >= start)
        if end is not None:
            frame = frame.filter(pl.col("conversation_started_at") <= end)
        return frame.sort("conversation_started_at", "conversation_id")

    # Working memory (memlake.facts). Reads fold overrides and forgets written since the last run on top of the
    # tables, so a remembered or forgotten fact shows at once; `_fact_reads` keeps that until tables or logs change.

    def _fact_embed(self) -> Any:
        """The configured embedder's `embed` (remembering its vectors), loaded only when an unfolded override
        needs it."""
        if not hasattr(self, "_embedder"):
            self._embedder = configured_embedder(self.settings)
        if self._embedder is None:
            return None
        memo = getattr(self, "_fact_embed_memo", None)
        if memo is None or memo.embed != self._embedder.embed:
            from memlake.facts.reads import MemoEmbed  # deferred: the fact fold, ~50 ms

            memo = self._fact_embed_memo = MemoEmbed(self._embedder.embed)
        return memo

    def _store_to_look(self) -> Any:
        """The search's store if a search opened it, else a one-off one for a look (no snapshots)."""
        from memlake.vectors import VectorStore  # deferred: LanceDB, ~1 s

        return getattr(self, "_vectors", None) or VectorStore(self.settings.lancedb_dir, snapshot_rows=0)

    def _check_index(self, scope: str, agent_id: str) -> None:
        """A search that found nothing because its index is not there, while the lake holds what the index is
        built from for this agent (or, after a `memlake run` that stopped before it finished, the agent's turns,
        which that run had not carried that far), is an error saying how to rebuild it."""
        table, source = INDEXES[scope]
        # the tables LanceDB lists, not the store's cache of open ones: this one may have gone since
        indexed = self.settings.lancedb_dir.is_dir() and table in self._store_to_look().db.list_tables().tables
        if indexed:
            return
        if self._holds(source, agent_id):
            missing = (f"the search index {table} is missing from {self.settings.lancedb_dir}, though the lake holds "
                       f"{source.name} of agent {agent_id!r}")
            raise ValueError(f"{missing}: {_index_repair(self.settings.home)}")
        if self._holds(TURNS, agent_id) and _run_stopped(self.settings.home):
            raise ValueError(f"the search index {table} is missing from {self.settings.lancedb_dir}: the lake holds "
                             f"turns of agent {agent_id!r} that were not built that far, because "
                             f"{_index_repair(self.settings.home)}")

    def _holds(self, table: Table, agent_id: str) -> bool:
        """Whether the lake's `table` has a row of the agent."""
        files = self.lake.files(table)
        held = pl.scan_parquet(files).filter(pl.col("agent_id") == agent_id).head(1).collect() if files else None
        return held is not None and held.height > 0

    def _fact_reads(self) -> Any:
        if not hasattr(self, "_fact_reads_cache"):
            from memlake.facts.reads import FactReads  # deferred: the fact fold, ~50 ms

            self._fact_reads_cache = FactReads(self.settings, self._fact_embed)
        return self._fact_reads_cache

    def facts(
        self,
        agent_id: str,
        type: str | None = None,  # noqa: A002 - the fact type, as in the schema
        subject: str | None = None,
        as_of: datetime | str | None = None,
        include_history: bool = False,
    ) -> pl.DataFrame:
        """An agent's current facts, or those true and said by `as_of`; with every version when `include_history`."""
        from memlake.facts.reads import select_facts  # deferred: the fact fold, ~50 ms

        if not isinstance(include_history, bool):
            raise ValueError(f"include_history is True or False, got {include_history!r}")
        if type is not None:
            if type.strip().lower() not in FACT_TYPES:
                raise ValueError(f"unknown fact type {type!r}: one of {', '.join(FACT_TYPES)}")
            type = type.strip().lower()  # noqa: A001 - the parameter, as named in the schema
        tables = self._fact_reads().get(check_agent_id(agent_id))
        return select_facts(tables.facts, type=type, subject=subject, as_of=as_of, include_history=include_history,
                            edges=tables.edges)

    def history(self, fact_id: str, agent_id: str) -> pl.DataFrame:
        """Every version of one of the agent's facts (and of the facts it updated or that updated it), oldest
        first. Fact ids are derived (agent, subject, slot), so they grant nothing alone: another agent's id
        reads as an unknown one, an empty frame."""
        from memlake.facts.reads import fact_history  # deferred: the fact fold, ~50 ms

        if not isinstance(fact_id, str) or not fact_id.strip():
            raise ValueError(f"history needs a fact id (a `fact_id` of `facts()`), got {fact_id!r}")
        tables = self._fact_reads().get(check_agent_id(agent_id))
        return fact_history(tables.facts, tables.edges, fact_id)

    def profile(self, agent_id: str, version: int | None = None) -> pl.DataFrame:
        """The agent's profile (latest version unless `version`): one row with cited lines and Markdown text.

        No profile yet gives an empty frame; a `version` the agent does not have is an error. A fact forgotten
        since the last run is already gone from it, as from every other read."""
        from memlake.facts.profile import without_forgotten  # deferred: ~20 ms
        from memlake.facts.reads import profile  # deferred: the fact fold, ~50 ms

        agent_id = check_agent_id(agent_id)
        if version is not None and (isinstance(version, bool) or not isinstance(version, int) or version < 1):
            raise ValueError(f"a profile version is a whole number from 1, got {version!r}")
        frame = profile(self.settings, agent_id, version)
        if frame.height == 0 and version is not None:
            latest = profile(self.settings, agent_id)
            have = f"the latest is {latest['version'][0]}" if latest.height else "it has no profile yet"
            raise ValueError(f"agent {agent_id!r} has no profile version {version}; {have}")
        tables = self._fact_reads().get(agent_id) if frame.height else None
        if tables is not None and tables.pending_forgets:
            frame = without_forgotten(frame, set(tables.facts["fact_id"].to_list()))
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
        recognise it ("I moved to Paris" -> home_city = Paris). Returns the fact rows it made or confirmed.
        """
        from memlake.facts.reads import remember  # deferred: the fact fold, ~50 ms

        return remember(
            self.settings, check_agent_id(agent_id), content, replaces=replaces, embed_factory=self._fact_embed,
            author=author, type=type, subject=subject, slot=slot, value=value, valid_from=valid_from,
            valid_until=valid_until, importance=importance, tags=[tags] if isinstance(tags, str) else tags or [],
        )

    def reject(self, agent_id: str, fact_id: str) -> pl.DataFrame:
        """Append a user override rejecting an (extracted) fact by id; returns the rejected row."""
        from memlake.facts.reads import remember  # deferred: the fact fold, ~50 ms

        return remember(self.settings, check_agent_id(agent_id), None, reject=fact_id, embed_factory=self._fact_embed)

    def forget(
        self,
        agent_id: str,
        *,
        fact_id: str | None = None,
        conversation_id: str | None = None,
        everything: bool = False,
        reason: str | None = None,
    ) -> pl.DataFrame:
        """Forget one fact (its whole chain), one conversation's facts, or all the agent's facts (`everything`).

        Appends to the forget log; reads see it at once, the next run folds it for good. Returns the fact
        versions that went. The facts layer (facts, history, fact search, profiles) honours the log; the
        conversation's turns, chunks and episodes are kept.
        """
        from memlake.facts.reads import forget  # deferred: the fact fold, ~50 ms

        return forget(self.settings, check_agent_id(agent_id), fact_id=fact_id, conversation_id=conversation_id,
                      everything=everything, reason=reason, embed_factory=self._fact_embed)

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
        """Hybrid search of one agent's memory: one row per hit, in `rank` order (best match first, with a
        near-duplicate of a row above pushed down by MMR, so a row's score can exceed the one above it).

        `scope` is chunks (turns, with adjacent turns as `context`), episodes
        or facts. Recency counts back from `as_of` (naive = UTC, ISO string,
        None = now; a date means its end, as in `facts`). `since` and `until` keep
        rows said in [since, until); a date `until` includes that day. Columns:
        score and its parts (rrf, vector_rank, text_rank, context_lift, recency,
        importance, access, boost), which key of a turn each list matched
        (vector_match, text_match: turn, sentence, passage or question; None if that
        list did not find it), text, `excerpt` (True: `text` is the passage of a
        long turn that matched, not the whole turn: `turns(agent_id,
        conversation_id)` rows turn_start..turn_end give it whole), agent_id,
        conversation_id, message_ids (best match first), created_at, and `mode`:
        `hybrid`, or `full_text` when no embedding model is loadable (`note` says why).
        `params` override search settings (mmr_lambda, window_turns, candidates, ...).
        `record_access=True` logs the hits as used now (see `record_access`); a plain search writes nothing.
        """
        from memlake.search import SPECS, empty_result  # deferred: LanceDB, ~1 s

        agent_id, filters = self._checked_search(query, agent_id, scope, since, until, role, conversation_id)
        if "embedder" not in params and not hasattr(self, "_embedder"):  # after the checks: a model takes seconds
            self._embedder = configured_embedder(self.settings)
        if not self.settings.lancedb_dir.is_dir():  # nothing indexed yet; a search creates nothing
            self._check_index(scope, agent_id)
            return empty_result(SPECS[scope])
        self._search_tools(params)
        try:
            found = self._run_search(query, agent_id, k, scope, as_of, filters, params)
        except (RuntimeError, OSError) as exc:
            # a table deleted (and perhaps built again) since this Memory last read it: read it afresh, once
            if "not found" not in str(exc).lower() or params["store"] is not self._vectors:
                raise
            self._vectors.reset()
            found = self._run_search(query, agent_id, k, scope, as_of, filters, params)
        if found.height == 0:
            self._check_index(scope, agent_id)
        if record_access:  # keys a search just returned: no need to look them up again
            write_access(self.settings, agent_id, scope, found["key"].to_list())
        return found

    def _checked_search(
        self, query: str, agent_id: str, scope: str, since: datetime | str | None, until: datetime | str | None,
        role: str | list[str] | None, conversation_id: str | list[str] | None,
    ) -> tuple[str, Any]:
        """The agent and the filters of a search, once what was asked is known to be a search."""
        from memlake.vectors import Filters  # deferred: LanceDB, ~1 s

        if not isinstance(query, str) or not query.strip():
            raise ValueError(f"a search needs words to look for, got {query!r}")

        def as_tuple(value: str | list[str] | None) -> tuple[str, ...]:
            return () if value is None else (value,) if isinstance(value, str) else tuple(value)

        filters = Filters(
            since=as_utc_or_none(since),
            until=as_utc_or_none(until, end_of_day=True),  # a day: up to its end
            roles=as_tuple(role),
            conversation_ids=as_tuple(conversation_id),
        )
        agent_id = check_agent_id(agent_id)
        if scope not in INDEXES:
            raise ValueError(f"unknown scope {scope!r}: expected one of {', '.join(INDEXES)}")
        return agent_id, filters

    def _search_tools(self, params: dict[str, Any]) -> None:
        """The store (kept open: later reads see new versions), the embedder and the access log a search uses,
        unless the caller gave its own."""
        if not hasattr(self, "_vectors"):
            from memlake.vectors import VectorStore  # deferred: LanceDB, ~1 s

            self._vectors = VectorStore(
                self.settings.lancedb_dir,
                snapshot_rows=self.settings.search_snapshot_rows,
                background_rows=self.settings.search_snapshot_background_rows,
            )
        params.setdefault("store", self._vectors)
        params.setdefault("turn_store", self._vectors)  # a fact overlay's hits read their turns here
        params.setdefault("embedder", getattr(self, "_embedder", None))
        params.setdefault("use_embedder", params["embedder"] is not None)
        params.setdefault("access", self._access_log())

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
            raise ValueError(f"unknown scope {scope!r}: expected one of {', '.join(INDEXES)}")
        ids = [object_ids] if isinstance(object_ids, str) else list(object_ids)
        unknown = sorted(set(ids) - self._keys(agent_id, scope, ids))
        if unknown:
            shown = ", ".join(map(repr, unknown[:5])) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
            raise ValueError(f"not a {scope} key of agent {agent_id!r} (a search result's `key`): {shown}")
        return write_access(self.settings, agent_id, scope, ids, at=at)

    def _keys(self, agent_id: str, scope: str, wanted: list[str]) -> set[str]:
        """Which of `wanted` are keys a search of the agent's `scope` can return now."""
        if scope == "facts":  # what fact reads see, remembered facts included
            facts = self._fact_reads().get(agent_id).facts
            return {f"{f}@{v}" for f, v in facts.select("fact_id", "version").rows()} & set(wanted)
        from memlake.search import SPECS  # deferred: LanceDB, ~1 s
        from memlake.vectors import Filters, quote  # deferred: LanceDB, ~1 s

        table, key = INDEXES[scope][0], SPECS[scope].key
        if not wanted or not self.settings.lancedb_dir.is_dir():
            return set()
        store = self._store_to_look()
        if not store.exists(table):
            return set()
        clause = f"{key} IN ({', '.join(quote(str(w)) for w in dict.fromkeys(wanted))})"
        return set(store.rows(table, agent_id, Filters(extra=(clause,)), columns=[key])[key].to_list())

    def _access_log(self) -> Any:
        if not hasattr(self, "_access_log_cache"):
            self._access_log_cache = AccessLog(self.settings)
        return self._access_log_cache

    def _fact_overlays(self) -> Any:
        if not hasattr(self, "_fact_overlays_cache"):
            from memlake.facts.search import FactOverlays  # deferred: LanceDB, ~1 s

            self._fact_overlays_cache = FactOverlays(self._fact_reads())
        return self._fact_overlays_cache

    def context(
        self,
        query: str,
        agent_id: str,
        mode: str = "compact",
        budget: int | None = None,
        as_of: datetime | str | None = None,
        *,
        gate: str = "heuristic",
    ) -> Any:
        """The context block to put before the model for `query`: a `ContextBlock` (text, sections, token
        count, provenance of every line), within `budget` tokens of the packaged MiniLM tokenizer.

        `compact`: the date, the user's overrides, then the one section the relevance gate chose (`gate`:
        heuristic or off); budget default the `context_budget_tokens` setting. `full`: the date, the overrides,
        then profile, working memory, recent summaries, key relationships and the query's matched excerpts,
        memories and summaries, each under its own budget (`assemble.FULL_SECTIONS`), a line already in left
        out; budget default their sum, a smaller one cutting the last sections first. `as_of` gives the block
        as it would have been then."""
        from memlake.context.assemble import FULL_BUDGET, assemble  # deferred: with the fact fold it reads
        from memlake.context.gate import decide  # deferred: with the fact fold it reads
        from memlake.embedding import count_packaged_tokens

        if mode not in ("compact", "full"):
            raise ValueError(f"unknown context mode {mode!r}: compact or full")
        budget = (self.settings.context_budget_tokens if mode == "compact" else FULL_BUDGET) if budget is None \
            else budget
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise ValueError(f"a context budget is a whole number of tokens from 1, got {budget!r}")
        _check_text("query", query)
        if not query or not query.strip():
            raise ValueError(f"a context block needs a question, got {query!r}")
        moment = as_utc_or_none(as_of, end_of_day=True)
        current = self.facts(agent_id, as_of=moment)
        decision = decide(query, gate, known_subjects=current["subject"].unique().to_list())
        plans = (self._compact_plans if mode == "compact" else self._full_plans)(
            query, agent_id, decision, current, moment)
        today = (moment or datetime.now(UTC)).date()
        return assemble(today, decision, mode, plans, budget, count_packaged_tokens)

    def _compact_plans(self, query: str, agent_id: str, decision: Any, current: pl.DataFrame,
                       moment: datetime | None) -> list[Any]:
        """The overrides, then the one section the gate chose (none: the overrides alone)."""
        from memlake.context import lines as to_lines  # deferred: read with the fact fold
        from memlake.context.assemble import SectionPlan  # deferred: read with the fact fold

        plans = [SectionPlan("overrides", to_lines.override_lines(current))]
        if decision.section == "facts":
            plans.append(SectionPlan("facts", self._working_memory(query, agent_id, decision, current, moment)[0]))
        elif decision.section == "identity":
            plans.append(SectionPlan("identity", to_lines.identity_lines(current)))
        elif decision.section in ("episodes", "transcript"):
            scope, kind = ("episodes", "episode") if decision.section == "episodes" else ("chunks", "turn")
            hits = self.search(query, agent_id, k=10, scope=scope, as_of=moment, until=moment)
            plans.append(SectionPlan(decision.section, to_lines.hit_lines(hits, kind)))
        return plans

    def _working_memory(self, query: str, agent_id: str, decision: Any, current: pl.DataFrame,
                        moment: datetime | None) -> tuple[list[Any], list[str]]:
        """The facts, ordered for the question (with their past when it asks about it), and the fact search's
        hits (fact ids, best first)."""
        from memlake.context import lines as to_lines  # deferred: read with the fact fold

        hit_ids = self.search(query, agent_id, k=10, scope="facts", as_of=moment, until=moment)["fact_id"].to_list()
        history = self.facts(agent_id, as_of=moment, include_history=True) if decision.wants_history else None
        return to_lines.fact_lines(current, history, hit_ids, decision), hit_ids

    def _full_plans(self, query: str, agent_id: str, decision: Any, current: pl.DataFrame,
                    moment: datetime | None) -> list[Any]:
        """Every section of `assemble.FULL_SECTIONS`, in its order, under its budget, after the overrides."""
        from memlake.context import lines as to_lines  # deferred: read with the fact fold
        from memlake.context.assemble import FULL_SECTIONS, SectionPlan  # deferred: read with the fact fold

        working, hit_ids = self._working_memory(query, agent_id, decision, current, moment)
        by_id = {line.ref.split("@")[0]: line for line in working if line.until is None}
        recent = self.episodes(agent_id, until=moment).sort("conversation_started_at", descending=True)
        candidates = {
            "profile": to_lines.identity_lines(current),
            "working memory": working,
            "summaries": to_lines.episode_lines(recent),
            "key relationships": to_lines.relationship_lines(current),
            "matched excerpts": to_lines.hit_lines(
                self.search(query, agent_id, k=10, scope="chunks", as_of=moment, until=moment), "turn"),
            "matched memories": [by_id[fact_id] for fact_id in dict.fromkeys(hit_ids) if fact_id in by_id],
            "matched summaries": to_lines.hit_lines(
                self.search(query, agent_id, k=10, scope="episodes", as_of=moment, until=moment), "episode"),
        }
        return [SectionPlan("overrides", to_lines.override_lines(current)),
                *(SectionPlan(name, candidates[name], tokens) for name, tokens in FULL_SECTIONS)]
