"""Reads of working memory: current facts, as-of facts, histories and profiles, for one agent.

Reads see a remembered or forgotten fact at once, without waiting for a run:
the facts tables are read, and override or forget entries written since the
last fold (none when the facts table's stamp names every entry there is;
else an override whose id no fact row carries yet, and a forget whose target
is still in the tables or was written after such an override) are folded on
top of them in memory, with the configured embedder. The next run folds them for
good. `FactReads` keeps a reader's result until the tables or the logs change;
fact search reads the same facts (`memlake.facts.search`).

`as_of` returns what was true then and already said: valid_from <= as_of <
valid_until (open when null) and created_at <= as_of, where a valid_until set
by an update said after as_of counts as open (as known then). A bare date
means the end of that day (UTC); a naive datetime is UTC.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

import numpy as np
import polars as pl

from memlake.changes import lake_state
from memlake.distill.confidence import shown
from memlake.errors import NotFound
from memlake.facts.fold import Embed, FoldConfig, Folder, Forget, Override
from memlake.facts.overrides import (
    entries_unfolded,
    read_forgets,
    read_overrides,
    structure_statement,
    write_override,
)
from memlake.facts.profile import profile_versions, render
from memlake.facts.quality import HELD_BACK, held_back_agents
from memlake.inputs import log_dir, log_files
from memlake.lake import Lake
from memlake.maintenance.status import (
    hidden_by_sweep,
    latest_fact_status,
    latest_sweep_edges,
    with_conflicts,
    with_sweep_status,
)
from memlake.moments import parse_as_of
from memlake.schemas import FACT_EDGES, FACT_STATUS, FACTS, FORGET, OVERRIDES, PROFILES, SWEEP_EDGES
from memlake.settings import Settings

HIDDEN_STATUSES = ("rejected", "forgotten")
EmbedFactory = Callable[[], Embed | None]


@dataclass
class AgentFacts:
    """One agent's fact tables as a read sees them."""

    facts: pl.DataFrame
    edges: pl.DataFrame
    pending_overrides: int = 0
    pending_forgets: int = 0
    # content -> vector, from the configured embedder, of every version the read folded (empty otherwise)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    # the profile versions built from these tables when entries are pending (`profile`), once a read asked
    profiles: pl.DataFrame | None = None

    @property
    def pending(self) -> bool:
        """Whether log entries written since the last run were folded on top of the tables."""
        return bool(self.pending_overrides or self.pending_forgets)


def _pending(
    facts: pl.DataFrame, overrides: list[Override], forgets: list[Forget]
) -> tuple[list[Override], list[Forget]]:
    """The log entries the tables do not reflect yet.

    An override is pending when no fact row carries its id. A forget is pending when its target is still in the
    tables (what it would remove was said or ingested before it), or when it was written after a pending
    override (it may remove what that override adds). Applying a forget again is harmless (see
    `Folder._apply_forget`), so an override a run folded and a later forget removed comes back and goes again.
    """
    folded = set(facts["override_ids"].explode().drop_nulls().to_list()) if facts.height else set()
    pending_overrides = [o for o in overrides if o.override_id not in folded]
    first_pending = min((o.written_at for o in pending_overrides), default=None)
    pending_forgets = []
    for f in forgets:
        at = f.written_at
        if f.scope == "fact":
            hit = facts.filter((pl.col("fact_id") == f.target) & (pl.col("created_at") <= at))
        elif f.scope == "conversation":
            hit = facts.filter(
                pl.col("source_conversation_ids").list.contains(f.target or "")
                & (pl.col("ingested_at").is_null() | (pl.col("ingested_at") <= at))
            )
        else:
            hit = facts.filter(pl.col("ingested_at").is_null() | (pl.col("ingested_at") <= at))
        if hit.height or (first_pending is not None and at >= first_pending):
            pending_forgets.append(f)
    return pending_overrides, pending_forgets


def agent_facts(settings: Settings, agent_id: str, embed_factory: EmbedFactory | None = None) -> AgentFacts:
    """The agent's facts and edges, with overrides and forgets not yet folded merged in."""
    tables = folded_agent_facts(settings, agent_id, embed_factory)
    # the maintenance sweeps never rewrite facts/*: their verdicts (evicted, conflicting, ...) join here
    lake = Lake.of(settings)
    latest = latest_fact_status(lake, agent_id)
    tables.facts = with_conflicts(with_sweep_status(tables.facts, latest), latest_sweep_edges(lake, latest))
    return tables


def folded_agent_facts(settings: Settings, agent_id: str, embed_factory: EmbedFactory | None = None) -> AgentFacts:
    """The agent's rows of the facts tables with the overrides and forgets not yet folded folded in, as the next
    run's fold writes them (no sweep verdict joined)."""
    lake = Lake.of(settings)
    facts = lake.read(FACTS).filter(pl.col("agent_id") == agent_id)
    edges = lake.read(FACT_EDGES).filter(pl.col("agent_id") == agent_id)
    # a held-back agent's rows are those of an earlier fold: entries the last run read may not be in them
    held_back = agent_id in held_back_agents(lake.stamp(FACTS, HELD_BACK))
    return _merge_pending(settings, facts, edges, read_overrides(settings, agent_id),
                          read_forgets(settings, agent_id), embed_factory, held_back)


def _merge_pending(
    settings: Settings,
    facts: pl.DataFrame,
    edges: pl.DataFrame,
    overrides: list[Override],
    forgets: list[Forget],
    embed_factory: EmbedFactory | None,
    held_back: bool = False,
) -> AgentFacts:
    if not held_back and not entries_unfolded(settings, Lake.of(settings)):
        # the last run folded every entry there is: nothing is pending, even an override whose fact a later
        # forget removed (no row carries its id, which `_pending` would take for an override never folded)
        return AgentFacts(facts, edges)
    overrides, forgets = _pending(facts, overrides, forgets)
    if not overrides and not forgets:
        return AgentFacts(facts, edges)
    embed = embed_factory() if embed_factory is not None else None
    folder = Folder.from_tables(facts, edges, FoldConfig.from_settings(settings), embed)
    folder.add([*overrides, *forgets])
    return AgentFacts(folder.facts_frame(), folder.edges_frame(), len(overrides), len(forgets),
                      dict(folder.vectors) if embed is not None else {})


class MemoEmbed:
    """An `embed` that remembers its vectors by text, so the folds of one reader embed each fact once."""

    def __init__(self, embed: Embed, max_texts: int = 200_000) -> None:
        self.embed = embed
        self.max_texts = max_texts
        self.vectors: dict[str, np.ndarray] = {}

    def __call__(self, texts: list[str]) -> np.ndarray:
        missing = sorted({t for t in texts if t not in self.vectors})
        if missing:
            if len(self.vectors) + len(missing) > self.max_texts:
                self.vectors.clear()
            self.vectors.update(zip(missing, np.asarray(self.embed(missing), dtype=np.float32), strict=True))
        return np.stack([self.vectors[t] for t in texts]) if texts else np.asarray(self.embed([]), dtype=np.float32)


class FactReads:
    """`agent_facts` for one long-lived reader (a `Memory`), kept until the tables or the logs change.

    The key is what a read depends on: the facts tables' files (a run replaces them by a rename) and the
    names of the log files (append-only, one uniquely named file per write). Unchanged, a read costs a few
    `stat` calls instead of reading the tables and folding the pending entries again.
    """

    def __init__(self, settings: Settings, embed_factory: EmbedFactory | None = None, size: int = 16) -> None:
        self.settings = settings
        self.embed_factory = embed_factory
        self.size = size
        self._cache: dict[str, tuple[tuple[Any, ...], AgentFacts]] = {}
        self._fills = threading.Lock()  # threads of a served Memory fold an agent's facts once per change

    def state(self) -> tuple[Any, ...]:
        """What the reads depend on, cheaply: the lake's change mark (a fresh token per write, where a file's
        time may not tell two writes apart), its table files (name, size, mtime) and the logs' file names."""
        lake = Lake.of(self.settings)
        files: list[Any] = [lake_state(self.settings)]
        for table in (FACTS, FACT_EDGES, FACT_STATUS, SWEEP_EDGES):
            files.extend(lake.file_states(table))
        logs = []
        for table in (OVERRIDES, FORGET):
            logs.append(tuple(log_files(log_dir(self.settings, table))))
        return (tuple(files), tuple(logs))

    def get(self, agent_id: str) -> AgentFacts:
        state = self.state()
        cached = self._cache.get(agent_id)
        if cached is not None and cached[0] == state:
            return cached[1]
        with self._fills:
            cached = self._cache.get(agent_id)
            if cached is not None and cached[0] == state:
                return cached[1]
            tables = agent_facts(self.settings, agent_id, self.embed_factory)
            self._cache.pop(agent_id, None)
            while len(self._cache) >= self.size:
                self._cache.pop(next(iter(self._cache)))
            self._cache[agent_id] = (state, tables)
            return tables


def ordered(frame: pl.DataFrame) -> pl.DataFrame:
    """Current versions first, newest said first; versions of a chain newest first."""
    if frame.height == 0:
        return frame
    return (
        frame.with_columns((pl.col("status") != "active").alias("_not_active"))
        .sort(["_not_active", "created_at", "fact_id", "version"], descending=[False, True, False, True])
        .drop("_not_active")
    )


def _closed_after(frame: pl.DataFrame, edges: pl.DataFrame | None, when: datetime) -> pl.DataFrame:
    """`frame` with `_closed_after`: whether the update that closed a version was said after `when` (the user
    said on June 10 that they had moved on June 3). As known at `when`, such a version was still open."""
    if edges is None or edges.height == 0:
        return frame.with_columns(pl.lit(False).alias("_closed_after"))
    later = (
        edges.filter(pl.col("edge_type") == "update")
        .group_by(pl.col("to_fact_id").alias("fact_id"), pl.col("to_version").alias("version"))
        .agg((pl.col("created_at").min() > when).alias("_closed_after"))
    )
    return frame.join(later, on=["fact_id", "version"], how="left").with_columns(
        pl.col("_closed_after").fill_null(False))


def select_facts(
    facts: pl.DataFrame,
    type: str | None = None,  # noqa: A002 - the fact type, as in the schema
    subject: str | None = None,
    as_of: datetime | date | str | None = None,
    include_history: bool = False,
    edges: pl.DataFrame | None = None,
    shown_confidence: float | None = None,
    candidates: bool = False,
) -> pl.DataFrame:
    """Facts that are current (or were true at `as_of`, as known then: `edges` date the updates that closed a
    version), optionally with every version of their chains. With `shown_confidence`, the current ones are those
    shown to the agent (`confidence.shown`), or with `candidates` those held back; history keeps every version."""
    when = parse_as_of(as_of, end_of_day=True, none_is_now=False)  # no as_of: the current facts
    frame = facts
    if type is not None:
        frame = frame.filter(pl.col("type") == type)
    if subject is not None:
        frame = frame.filter(pl.col("subject").str.to_lowercase() == subject.strip().lower())
    if when is None:  # active, and not past the end of its validity (said to hold until a day now gone)
        ended = pl.col("valid_until").is_not_null() & (pl.col("valid_until") <= datetime.now(UTC))
        current = frame.filter((pl.col("status") == "active") & ~ended)
    else:
        open_then = pl.col("valid_until").is_null() | (pl.col("valid_until") > when) | pl.col("_closed_after")
        # a fact a sweep evicted by then is hidden then; before the sweep it was still there
        swept = pl.col("swept_at").is_not_null() & (pl.col("swept_at") <= when) if "swept_at" in frame.columns \
            else pl.lit(False)
        current = _closed_after(frame, edges, when).filter(
            ~pl.col("status").is_in(HIDDEN_STATUSES)
            & ~((pl.col("status") == "evicted") & swept)
            & (pl.col("valid_from") <= when)
            & open_then
            & (pl.col("created_at") <= when)
        ).drop("_closed_after").with_columns(pl.lit("active").alias("status"))  # in force then: active then,
        # whatever became of it since (superseded, evicted later)
    if shown_confidence is not None:
        current = current.filter(shown(shown_confidence) != candidates)
    if not include_history:
        return ordered(current)
    # every chain with a version that was true (said by `as_of`): one with no active version left is history too,
    # as a plan carried out or a state another fact ended ("is interviewing at X" once the user started at X)
    told = frame if when is None else frame.filter(pl.col("created_at") <= when)
    chains = set(told.filter(~pl.col("status").is_in(HIDDEN_STATUSES))["fact_id"].to_list())
    history = facts.filter(pl.col("fact_id").is_in(sorted(chains)))
    if when is not None:  # the versions in force then with their status then, and those closed by then
        in_force = current.select("fact_id", "version")
        closed = history.filter(pl.col("created_at") <= when).join(in_force, on=["fact_id", "version"], how="anti")
        history = pl.concat([current, closed])
    return ordered(history)


def fact_history(facts: pl.DataFrame, edges: pl.DataFrame, fact_id: str) -> pl.DataFrame:
    """Every version of a fact's chain, and of the chains `update` edges link to it, oldest first."""
    chains = {fact_id}
    updates = edges.filter(pl.col("edge_type") == "update").select("from_fact_id", "to_fact_id").rows()
    grew = True
    while grew:
        linked = {b for a, b in updates if a in chains} | {a for a, b in updates if b in chains}
        grew = not linked <= chains
        chains |= linked
    history = facts.filter(pl.col("fact_id").is_in(sorted(chains)))
    return history.sort("created_at", "fact_id", "version")


def profile(
    settings: Settings, agent_id: str, version: int | None = None, tables: AgentFacts | None = None
) -> pl.DataFrame:
    """One profile version of the agent (the latest unless `version`), as a one-row frame (empty if none).

    With the agent's `tables` as reads see them, and log entries pending in them (a fact remembered, rejected
    or forgotten since the last run), the versions are those the next run will write from those tables:
    a remembered fact shows at once, a rejected or forgotten one is gone at once. They are assembled (with a
    core model configured, the run writes them with it). An agent the runs wrote no profile for has none yet.
    The latest version leaves out the lines of facts a maintenance sweep evicted or superseded."""
    frame = _profile_versions_read(settings, agent_id, tables)
    latest = frame["version"].max() if frame.height else None
    chosen = frame.filter(pl.col("version") == version) if version is not None else frame.sort("version").tail(1)
    if tables is not None and chosen.height and chosen["version"][0] == latest:
        return _without_swept_lines(chosen, tables.facts)
    return chosen


def profiles_as_read(settings: Settings, tables: AgentFacts, agent_id: str) -> pl.DataFrame:
    """Every profile version of the agent as `profile` reads each one (the latest without swept lines), oldest
    first: what `Memory.sql` shows as `profile.profiles`."""
    frame = _profile_versions_read(settings, agent_id, tables).sort("version")
    if frame.height == 0:
        return frame
    latest = frame["version"].max()
    return pl.concat([frame.filter(pl.col("version") != latest),
                      _without_swept_lines(frame.filter(pl.col("version") == latest), tables.facts)])


def _profile_versions_read(settings: Settings, agent_id: str, tables: AgentFacts | None) -> pl.DataFrame:
    """The agent's profile versions: the lake's, or, with log entries pending in `tables`, those the next run
    will write from them."""
    frame = Lake.of(settings).read(PROFILES).filter(pl.col("agent_id") == agent_id)
    if tables is not None and tables.pending and frame.height:
        if tables.profiles is None:
            tables.profiles = profile_versions(tables.facts, tables.edges, settings.profile_regenerate_threshold,
                                               shown_confidence=settings.shown_confidence)
        frame = tables.profiles
    return frame


def _without_swept_lines(version: pl.DataFrame, facts: pl.DataFrame) -> pl.DataFrame:
    """The latest profile version (a one-row frame) without the lines whose facts a sweep evicted or superseded:
    the latest version is the profile now, and a fact hidden from "now" reads is hidden from it too. Earlier
    versions are history and keep every line (as `history` keeps the versions)."""
    hidden = hidden_by_sweep(facts)
    if hidden.height == 0:
        return version
    still_active = set(facts.filter(pl.col("status") == "active")["fact_id"].to_list())
    gone = set(hidden["fact_id"].to_list()) - still_active
    lines = version["lines"][0].to_list()
    kept = [line for line in lines if not set(line["fact_ids"]) <= gone]
    if len(kept) == len(lines):
        return version
    return version.with_columns(pl.Series("lines", [kept], dtype=version.schema["lines"]),
                                pl.lit(render(kept)).alias("text"))


def remember(
    settings: Settings,
    agent_id: str,
    content: str | None,
    *,
    replaces: str | None = None,
    reject: str | None = None,
    embed_factory: EmbedFactory | None = None,
    author: str = "api",
    **fields: Any,
) -> pl.DataFrame:
    """Append an override (add, correct `replaces`, or `reject`) and return the fact rows it made or touched."""
    target_id = replaces or reject
    target: dict[str, Any] | None = None
    if target_id is not None:
        known = agent_facts(settings, agent_id, embed_factory).facts.filter(pl.col("fact_id") == target_id)
        if known.height == 0:
            raise NotFound(f"agent {agent_id!r} has no fact {target_id!r}")
        target = known.sort("version").row(-1, named=True)
    action = "reject" if reject is not None else "correct" if replaces is not None else "add"
    now = datetime.now(UTC)
    statements = [(fields, content)]
    if content and action != "reject" and not fields.get("slot") and not fields.get("type"):
        statements = _structured(content, now, target, fields)
    overrides = [
        write_override(settings, agent_id, action, content=text, fact_id=target_id, target=target, author=author,
                       at=now, **statement)
        for statement, text in statements
    ]
    tables = agent_facts(settings, agent_id, embed_factory)
    return pl.concat([what_it_wrote(tables.facts, tables.edges, o.override_id, action) for o in overrides])


# What `remember` reports per row: the change it made, what that version replaced in its chain, what it closed.
CHANGES = ("new fact", "new version", "confirmed", "rejected")


def what_it_wrote(facts: pl.DataFrame, edges: pl.DataFrame, override_id: str, action: str) -> pl.DataFrame:
    """The fact rows an override made or touched, with what it did to each: `change` (a new fact, a new version of
    its chain, a confirmation of the value there, or a rejection), the version it replaced in the chain
    (`previous_version`, `previous_value`, `previous_content`) and the versions of other chains it closed
    (`closed`: "fact_id vN: content (why)", a plan it carried out or a state it ended)."""
    rows = facts.filter(pl.col("override_ids").list.contains(override_id))
    by_key = {(r["fact_id"], r["version"]): r for r in facts.iter_rows(named=True)}
    replaced = edges.filter(pl.col("edge_type") == "update")
    reports = []
    for row in rows.iter_rows(named=True):
        made_here = row["source_interface"] == "override" and (row["override_ids"] or [None])[0] == override_id
        change = "rejected" if action == "reject" else (
            ("new fact" if row["version"] == 1 else "new version") if made_here else "confirmed")
        previous: dict[str, Any] | None = None
        closed = []
        if made_here and action != "reject":
            for edge in replaced.filter((pl.col("from_fact_id") == row["fact_id"])
                                        & (pl.col("from_version") == row["version"])).iter_rows(named=True):
                old = by_key.get((edge["to_fact_id"], edge["to_version"]))
                if old is None:
                    continue
                if old["fact_id"] == row["fact_id"]:
                    previous = old
                else:
                    closed.append(f"{old['fact_id']} v{old['version']}: {old['content']} ({edge['reason']})")
        reports.append({"change": change, "previous_version": previous["version"] if previous else None,
                        "previous_value": previous["value"] if previous else None,
                        "previous_content": previous["content"] if previous else None, "closed": sorted(closed)})
    report = pl.DataFrame(reports, schema={"change": pl.String, "previous_version": pl.Int32,
                                           "previous_value": pl.String, "previous_content": pl.String,
                                           "closed": pl.List(pl.String)})
    return pl.concat([rows, report], how="horizontal")


def _structured(
    content: str, now: datetime, target: dict[str, Any] | None, fields: dict[str, Any]
) -> list[tuple[dict[str, Any], str | None]]:
    """The fields and content of each fact a remembered statement holds, by the offline rules (the statement as
    said when they recognise none). A correction is one fact: the one of the attribute it corrects."""
    found = structure_statement(content, now)
    if target is not None:
        found = [f for f in found if f["slot"] == target.get("slot")][:1]  # else another attribute: as said
        if not _corrects_a_mistake(content, found):
            # a new value told as such ("I live in Montreal now") starts when it is said, and the old one ends then;
            # only a mistake corrected ("Actually it's Porto, not Lisbon") replaces the old value from its start
            fields = {"valid_from": now.isoformat(), **{k: v for k, v in fields.items() if v is not None}}
    if not found:
        return [(fields, content)]
    return [(_filled(fields, one, now, target), one["content"]) for one in found]


def _corrects_a_mistake(content: str, found: list[dict[str, Any]]) -> bool:
    """Whether a statement replacing a fact says the fact was wrong, rather than that it changed."""
    return any(f["type"] == "correction" for f in found) or bool(_A_MISTAKE.search(content))


# Words saying the old value was never right: "actually", "I meant", "not Lisbon", "that was wrong", "a typo".
_A_MISTAKE = re.compile(r"\b(?:actually|i meant|meant to say|wrong|mistake|typo|not|never|correction)\b", re.I)


def _filled(
    fields: dict[str, Any], found: dict[str, Any], now: datetime, target: dict[str, Any] | None
) -> dict[str, Any]:
    """`fields` with type, subject, slot, value and dates the offline rules found where none was given."""
    out = dict(fields)
    for name in ("type", "subject", "slot", "value"):
        if out.get(name) is None and found.get(name) is not None and (target is None or name == "value"):
            out[name] = found[name]
    stated_from = found.get("valid_from")
    if out.get("valid_from") is None and stated_from and stated_from != now.date().isoformat():
        out["valid_from"] = stated_from
    if out.get("valid_until") is None and found.get("valid_until"):
        out["valid_until"] = found["valid_until"]
    return out
