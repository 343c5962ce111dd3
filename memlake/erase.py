"""Erasing what a forget names from every store of a home: landing, quarantine, the lake, LanceDB, the caches.

The forget log (`memlake.facts.overrides`) says what to forget and every rebuild filters by it; this module
removes the text already stored, at once, so that no file under the home holds it any more:

- landing: the agent's folder goes (a whole agent), or each file holding a forgotten conversation is
  rewritten without it (atomically; a file holding nothing else goes) and the manifest rows follow;
- quarantine: the copies of the agent's files (a conversation: those that name it);
- the lake: every row of the agent, of the conversation, or of a forgotten fact version, in every table and
  every partition, each file rewritten under a temporary name and renamed (its stamps kept, so a run does not
  take it for outdated); a row derived from several conversations keeps the others, with one source less; a
  profile line built on a forgotten fact goes from every profile version;
- LanceDB: the same rows, then the table compacted and its older versions removed (deleted rows stay readable
  in older versions until then);
- the embedding cache: the vectors of every removed text, by its hash.

Caches of model answers that quote fact text without naming the agent (the judge's) are dropped whole: they
only cost a model call to fill again.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
import warnings
from collections import Counter
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq

from memlake.embedding_cache import forget_texts
from memlake.errors import BadRequest, NotFound
from memlake.facts.fold import Forget
from memlake.facts.overrides import write_forget
from memlake.facts.profile import render
from memlake.facts.reads import EmbedFactory, agent_facts, folded_agent_facts, ordered
from memlake.index_rows import fact_index_rows
from memlake.inputs import append_entry, log_dir, log_files, read_log
from memlake.lake import Lake, conform, mark_changed, query
from memlake.landing import MANIFEST_STAMP, sha256_file
from memlake.landing_inbox import drop_from_inbox
from memlake.parsers import parse_file
from memlake.schemas import (
    AUDIT,
    ENTITIES,
    ENTITY_MERGES,
    FACT_EDGES,
    FACTS,
    FORGET,
    FORGET_RECEIPTS,
    JUDGE_CACHE,
    LANDING_MANIFEST,
    OVERRIDES,
    PROFILE_CACHE,
    PROFILES,
    TABLES,
    TURNS,
    Table,
    agent_folder,
)
from memlake.settings import Settings
from memlake.storage import index_store, write_parquet_whole
from memlake.transcripts import content_sha256, stable_message_id
from memlake.vectors import VectorStore, key_column, key_scope, quote

SOURCES = "source_conversation_ids"
MESSAGES = "source_message_ids"


@dataclass(frozen=True)
class Erasure:
    """What one forget erases: the whole agent, some of its conversations, some of its messages (those a
    forgotten fact was read from: their conversations are built again without them on the next run), and fact
    versions (`id@version`)."""

    agent_id: str
    whole_agent: bool = False
    conversation_ids: frozenset[str] = frozenset()
    message_ids: frozenset[str] = frozenset()
    fact_keys: frozenset[str] = frozenset()
    # the overrides log entries behind the forgotten versions: the user's own words go only with a version they
    # made (a fact forgotten, or the whole agent), never because a message the user later corrected went
    override_ids: frozenset[str] = frozenset()

    @property
    def fact_ids(self) -> set[str]:
        return {key.rsplit("@", 1)[0] for key in self.fact_keys}

    def with_facts(self, keys: set[str]) -> Erasure:
        return replace(self, fact_keys=self.fact_keys | frozenset(keys))


@dataclass
class Erased:
    """What `erase` removed: a count per store, and the ids and content hashes a check looks for afterwards."""

    removed: dict[str, int]
    message_ids: list[str]
    content_sha256: list[str]  # of each removed message's content (a fact's text may be said elsewhere too)
    fact_keys: list[str]


def erase(settings: Settings, erasure: Erasure) -> Erased:
    """Remove what `erasure` names from every store."""
    lake = Lake.of(settings)
    erasure = erasure.with_facts(_derived_facts(lake, erasure))
    removed: Counter[str] = Counter()
    rebuilt = _conversations_of(lake, erasure)  # their rows go now, and their days are built again next run
    removed.update(_erase_landing(settings, erasure, rebuilt))
    removed["quarantine"] += _erase_quarantine(settings, erasure)
    removed.update(_erase_logs(settings, erasure))
    entities_before = _entity_ids(settings, erasure.agent_id)
    hashes: list[str] = []
    messages: list[str] = []
    for table in TABLES.values():
        if table is not ENTITY_MERGES:  # after the entities: a merge goes with the entity it went into
            dropped = _erase_rows(lake, table, erasure, rebuilt)
            removed[table.path] += dropped.height
            if table is TURNS:
                hashes += dropped["content_sha256"].to_list()
                messages += dropped["message_id"].to_list()
                # every message that went leaves the sources of what is kept too
                erasure = replace(erasure, message_ids=erasure.message_ids | frozenset(messages))
    gone_entities = entities_before - _entity_ids(settings, erasure.agent_id)
    removed[ENTITY_MERGES.path] += _erase_rows(lake, ENTITY_MERGES, erasure, rebuilt, gone_entities).height
    texts, index_removed = _erase_indexes(settings, erasure, rebuilt)
    removed.update(index_removed)
    removed["embedding_cache"] += forget_texts(settings.embedding_cache_dir, texts)
    mark_changed(lake.store)
    return Erased({store: count for store, count in sorted(removed.items()) if count}, sorted(set(messages)),
                  sorted({h for h in hashes if h}), sorted(erasure.fact_keys))


def settle_agent_facts(settings: Settings, agent_id: str, facts: pl.DataFrame, edges: pl.DataFrame) -> None:
    """The agent's rows of `facts/facts` and `facts/fact_edges` replaced by those the fold gave with the forget
    applied (`facts`, `edges`), before the erase takes the forgotten versions' rows out: a version a forget took
    back makes the one before it current again in the lake now, as the next run's fold will. The files keep their
    stamps, so the forget entry still reads as pending and folding it again changes nothing."""
    lake = Lake.of(settings)
    for table, rows in ((FACTS, facts), (FACT_EDGES, edges)):
        ours = pl.from_arrow(conform(table, rows))  # the same rows for every file: conformed once
        assert isinstance(ours, pl.DataFrame)
        for path in lake.paths_of(table):
            data = lake.read_file(path)
            frame = pl.from_arrow(data)
            assert isinstance(frame, pl.DataFrame)
            settled = pl.concat([frame.filter(pl.col("agent_id") != agent_id), ours])
            lake.replace_file(path, settled.to_arrow().cast(data.schema))


def _derived_facts(lake: Lake, erasure: Erasure) -> set[str]:
    """The fact versions read only from what `erasure` takes (its conversations, its messages): they go with it."""
    facts = lake.read(FACTS).filter(pl.col("agent_id").eq(erasure.agent_id))
    gone = facts if erasure.whole_agent else facts.filter(_only_from(erasure))
    return {f"{f}@{v}" for f, v in gone.select("fact_id", "version").iter_rows()}


def _only_from(erasure: Erasure) -> pl.Expr:
    """Rows whose sources (conversations, or messages) are all forgotten."""
    gone = pl.lit(False)
    for column, forgotten in ((SOURCES, erasure.conversation_ids), (MESSAGES, erasure.message_ids)):
        if forgotten:
            gone = gone | (pl.col(column).list.len().gt(0)
                           & pl.col(column).list.set_difference(pl.lit(sorted(forgotten))).list.len().eq(0))
    return gone


def _conversations_of(lake: Lake, erasure: Erasure) -> frozenset[str]:
    """The conversations holding a forgotten message: built again without it (their other rows go meanwhile)."""
    if not erasure.message_ids:
        return frozenset()
    turns = lake.read(TURNS).filter(pl.col("agent_id").eq(erasure.agent_id)
                                    & pl.col("message_id").is_in(sorted(erasure.message_ids)))
    return frozenset(turns["conversation_id"].to_list()) - erasure.conversation_ids


# ------------------------------------------------------------------------------------------------ the lake


def _keep(table: Table, frame: pl.DataFrame, erasure: Erasure, rebuilt: frozenset[str]) -> pl.Expr:
    """The rows of `table` that `erasure` leaves (as a filter on `frame`)."""
    columns = set(frame.columns)
    if table is JUDGE_CACHE:  # answers about fact texts, no agent named: any forget that takes a fact empties it
        return pl.lit(not erasure.fact_keys)
    if "agent_id" not in columns:
        return pl.lit(True)
    ours = pl.col("agent_id").eq(erasure.agent_id)
    if erasure.whole_agent or table is PROFILE_CACHE:  # a model's profile answer quotes the facts it was given
        return ~ours
    gone = pl.lit(False)
    if "conversation_id" in columns:
        gone = gone | pl.col("conversation_id").is_in(sorted(erasure.conversation_ids))
        if "message_id" in columns:  # turns, and the graph's mentions (a name as said in the message)
            gone = gone | pl.col("message_id").is_in(sorted(erasure.message_ids))
        # the manifest keeps the rebuilt conversations: the rewritten landing file holds them still
        if table is not TURNS and table is not LANDING_MANIFEST:
            gone = gone | pl.col("conversation_id").is_in(sorted(rebuilt))
    if SOURCES in columns:
        gone = gone | _only_from(erasure)
    keys = sorted(erasure.fact_keys)
    for prefix in ("", "from_", "to_"):
        if keys and f"{prefix}fact_id" in columns and f"{prefix}version" in columns:
            key = pl.concat_str(pl.col(f"{prefix}fact_id"), pl.lit("@"), pl.col(f"{prefix}version").cast(pl.String))
            gone = gone | key.is_in(keys)
    if table is AUDIT:
        gone = gone | pl.col("object_id").is_in(keys)
    return ~(ours & gone)


def _erase_rows(lake: Lake, table: Table, erasure: Erasure, rebuilt: frozenset[str],
                gone_entities: set[str] | None = None) -> pl.DataFrame:
    """Rewrite each file of `table` without what `erasure` names; the rows dropped.

    A turns file that lost a message of a conversation built again is written without its stamp: the next run
    takes its day for unbuilt and builds it from landing, which no longer holds the message."""
    dropped = []
    for path in lake.paths_of(table):
        data = lake.read_file(path)
        frame = pl.from_arrow(data)
        assert isinstance(frame, pl.DataFrame)
        if table is ENTITY_MERGES:  # a merge goes with the entity it went into
            ours = pl.col("agent_id").eq(erasure.agent_id)
            keep = ~(ours & (pl.col("entity_id").is_in(sorted(gone_entities or ())) | erasure.whole_agent))
        else:
            keep = _keep(table, frame, erasure, rebuilt)
        kept = _fewer_sources(frame.filter(keep), erasure)
        if table is PROFILES:
            kept = profile_without(kept, erasure.agent_id, erasure.fact_ids)
        if kept.equals(frame):
            continue
        dropped.append(frame.filter(~keep))
        out = kept.to_arrow().cast(data.schema)  # the file's schema, stamps (footer metadata) included
        metadata = dict(data.schema.metadata or {})
        if table is TURNS and erasure.message_ids and kept.height < frame.height:
            # an empty stamp is older than any manifest row: the day reads as unbuilt (a missing stamp would
            # read as a file from before stamps, built), so the next run builds its chunks and episodes again
            metadata[MANIFEST_STAMP.encode()] = b""
        lake.replace_file(path, out.replace_schema_metadata(metadata))
    return pl.concat(dropped) if dropped else lake.empty(table).drop("day", strict=False)


def _fewer_sources(frame: pl.DataFrame, erasure: Erasure) -> pl.DataFrame:
    """A row derived from several conversations keeps the others: the forgotten ones leave its sources."""
    if SOURCES not in frame.columns:
        return frame
    ours = pl.col("agent_id").eq(erasure.agent_id)
    return frame.with_columns(
        pl.when(ours).then(pl.col(column).list.set_difference(pl.lit(sorted(forgotten), dtype=pl.List(pl.String))))
        .otherwise(pl.col(column)).alias(column)
        for column, forgotten in ((SOURCES, erasure.conversation_ids), (MESSAGES, erasure.message_ids)) if forgotten)


def _erase_logs(settings: Settings, erasure: Erasure) -> Counter[str]:
    """The overrides log's entries that quote text: a whole agent's, and those behind a forgotten version."""
    removed: Counter[str] = Counter()
    folder = log_dir(settings, OVERRIDES)
    override_ids = sorted(erasure.override_ids)
    for name in log_files(folder):
        data = pq.read_table(folder.file(name), filesystem=folder.filesystem)
        frame = pl.from_arrow(data)
        assert isinstance(frame, pl.DataFrame)
        ours = pl.col("agent_id").eq(erasure.agent_id)
        gone = frame.filter(ours & (pl.lit(erasure.whole_agent) | pl.col("override_id").is_in(override_ids)))
        if gone.height == 0:
            continue
        removed[f"inputs/{OVERRIDES.name}"] += gone.height
        if gone.height == frame.height:
            folder.delete(name)
        else:
            kept = frame.join(gone, on=list(OVERRIDES.key), how="anti")
            write_parquet_whole(folder, folder.file(name), kept.to_arrow().cast(data.schema))
    return removed


# ------------------------------------------------------------------------------------------------ landing


def _erase_landing(settings: Settings, erasure: Erasure, rebuilt: frozenset[str]) -> Counter[str]:
    """Remove the agent's landing folder, or the forgotten conversations and messages from the files holding
    them."""
    removed: Counter[str] = Counter()
    # sent to a replica of a shared store and not taken by a run yet (memlake.landing_inbox)
    dropped = drop_from_inbox(settings, erasure.agent_id, None if erasure.whole_agent else (
        erasure.conversation_ids | rebuilt))
    if dropped:
        removed["landing inbox"] = dropped
    folder = agent_folder(settings.landing_dir, erasure.agent_id)
    if erasure.whole_agent:
        if folder.is_dir():
            removed["landing"] = sum(1 for p in folder.rglob("*") if p.is_file())
            shutil.rmtree(folder)
        return removed
    if not (erasure.conversation_ids or rebuilt):
        return removed
    lake = Lake.of(settings)
    manifest = lake.read(LANDING_MANIFEST)
    holding = manifest.filter(pl.col("agent_id").eq(erasure.agent_id)
                              & pl.col("conversation_id").is_in(sorted(erasure.conversation_ids | rebuilt)))
    rewritten: dict[str, tuple[str, str] | None] = {}  # old relative path -> (new relative path, new sha) or gone
    for relative in sorted(set(holding["source_file"].to_list())):
        path = settings.landing_dir / relative
        if path.is_file():
            rewritten[relative] = _rewrite_without(settings, path, erasure)
            removed["landing"] += 1
    if rewritten:
        _record_rewrites(lake, erasure, rewritten)
    return removed


def erase_forgotten_landing(settings: Settings) -> int:
    """What a forget served by another host's replica could not reach: on a home whose store is shared
    (`storage_uri`), the forget log (on the store) names conversations that this host's landing files may still
    hold; each such file is rewritten without them, as the forget would have done here. Run before each landing
    scan; returns how many files were rewritten. A file is parsed only when its bytes name a forgotten
    conversation. (A home on one host: the forget erased its landing at once.)"""
    if not settings.storage_uri:
        return 0
    forgets = read_log(settings, FORGET).filter(pl.col("scope") == "conversation")
    rewritten_files = 0
    for (agent_id,), entries in forgets.group_by("agent_id"):
        folder = settings.landing_dir / str(agent_id)
        forgotten = frozenset(entries["target"].drop_nulls().to_list())
        if not folder.is_dir() or not forgotten:
            continue
        erasure = Erasure(str(agent_id), conversation_ids=forgotten)
        rewritten: dict[str, tuple[str, str] | None] = {}
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")):
            data = path.read_bytes()
            if not any(c.encode() in data for c in forgotten):
                continue
            if {c.conversation_id for c in parse_file(path).conversations} & forgotten:
                rewritten[path.relative_to(settings.landing_dir).as_posix()] = _rewrite_without(settings, path, erasure)
        if rewritten:
            _record_rewrites(Lake.of(settings), erasure, rewritten)
            rewritten_files += len(rewritten)
    return rewritten_files


def _rewrite_without(settings: Settings, path: Path, erasure: Erasure) -> tuple[str, str] | None:
    """The landing file at `path` without the forgotten conversations and messages: gone when nothing else is
    left, else written again as memlake JSONL (one line per message, the ids the lake gave them kept) under its
    name with `.jsonl`, atomically."""
    lines = []
    for conversation in parse_file(path).conversations:
        if conversation.conversation_id in erasure.conversation_ids:
            continue
        for position, message in enumerate(conversation.messages):
            message_id = message.message_id or stable_message_id(conversation.conversation_id, position)
            if message_id in erasure.message_ids:
                continue
            lines.append(json.dumps({
                "conversation_id": conversation.conversation_id, "message_id": message_id,
                "role": message.role, "speaker": message.speaker, "content": message.content,
                "created_at": message.created_at.isoformat() if message.created_at else None,
                "title": conversation.title}))
    if not lines:
        path.unlink()
        return None
    target = path.with_suffix(".jsonl")
    tmp = target.parent / f".forget-{uuid.uuid4().hex}"
    tmp.write_text("\n".join(lines) + "\n")
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, target)
    if target != path:
        path.unlink()
    return target.relative_to(settings.landing_dir).as_posix(), sha256_file(target)


def _record_rewrites(lake: Lake, erasure: Erasure, rewritten: dict[str, tuple[str, str] | None]) -> None:
    """The manifest names each rewritten file by its new path and hash (so a run does not read it as new), and
    says so in `reason`; rows of files that went are dropped with the forgotten conversations."""
    manifest = lake.read(LANDING_MANIFEST).drop("day", strict=False)
    rows = []
    for row in manifest.iter_rows(named=True):
        new = rewritten.get(row["source_file"], False)
        if row["agent_id"] == erasure.agent_id and new is not False:
            if new is None or row["conversation_id"] in erasure.conversation_ids:
                continue
            row["source_file"], row["source_sha256"] = new
            row["source_format"], row["archive"] = "jsonl", None
            row["reason"] = "rewritten without forgotten conversation(s)"
        rows.append(row)
    lake.write(LANDING_MANIFEST, rows if rows else lake.empty(LANDING_MANIFEST), stamp=lake.footer(LANDING_MANIFEST))


def _erase_quarantine(settings: Settings, erasure: Erasure) -> int:
    """Quarantine copies of the agent's files (a conversation: those whose bytes name it), with their reasons."""
    folder = settings.quarantine_dir / erasure.agent_id
    if not folder.is_dir():
        return 0
    removed = 0
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.name.endswith(".reason.json"):
            continue
        if erasure.whole_agent or any(c.encode() in path.read_bytes() for c in erasure.conversation_ids):
            path.unlink()
            path.with_name(path.name + ".reason.json").unlink(missing_ok=True)
            removed += 1
    if erasure.whole_agent:
        shutil.rmtree(folder, ignore_errors=True)
    return removed


# ------------------------------------------------------------------------------------------------ LanceDB


def _erase_indexes(settings: Settings, erasure: Erasure, rebuilt: frozenset[str]) -> tuple[list[str], Counter[str]]:
    """Delete the rows from every LanceDB table, compact it and remove its older versions; the text hashes of
    the rows deleted (their vectors leave the embedding cache too) and the count per table."""
    removed: Counter[str] = Counter()
    hashes: list[str] = []
    indexes = index_store(settings)
    if not indexes.exists():
        return hashes, removed
    db = VectorStore.of(settings).db
    for name in db.list_tables().tables:
        table = db.open_table(name)
        where = _index_filter(erasure, rebuilt, set(table.schema.names))
        if where is None:
            continue
        citing = _citing_forgotten_messages(table, erasure)  # a kept fact's row still names them: the run adds it back
        if citing is not None:
            where = f"({where}) OR ({citing})"
        found = table.search().where(where).select(["text_sha256"] if "text_sha256" in table.schema.names else [])
        rows = found.limit(None).to_arrow()
        if rows.num_rows:
            if "text_sha256" in rows.column_names:
                hashes.extend(h for h in rows.column("text_sha256").to_pylist() if h)
            table.delete(where)
            removed[f"lancedb/{name}"] += rows.num_rows
        # older versions keep deleted rows (and every version an earlier sync replaced): keep only the latest.
        # LanceDB warns that a reader of an older version then fails: a forget means exactly that.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            table.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)
    mark_changed(indexes)
    return hashes, removed


def _citing_forgotten_messages(table: Any, erasure: Erasure) -> str | None:
    """The filter of the agent's rows whose `message_ids` name a forgotten message (None: none do)."""
    key = key_column(table)
    if not erasure.message_ids or key is None or "message_ids" not in table.schema.names:
        return None
    rows = table.search().where(f"agent_id = {quote(erasure.agent_id)}").select([key, "message_ids"])
    keys = [row[key] for row in rows.limit(None).to_arrow().to_pylist()
            if set(row["message_ids"] or ()) & erasure.message_ids]
    return key_scope(key, keys) if keys else None


def _index_filter(erasure: Erasure, rebuilt: frozenset[str], columns: set[str]) -> str | None:
    """The LanceDB filter of the rows `erasure` names in a table with `columns` (None: none can be)."""
    if "agent_id" not in columns:
        return None
    ours = f"agent_id = {quote(erasure.agent_id)}"
    if erasure.whole_agent:
        return ours
    parts = []
    if (erasure.conversation_ids or rebuilt) and "conversation_id" in columns and "fact_key" not in columns:
        parts.append(key_scope("conversation_id", erasure.conversation_ids | rebuilt))
    if erasure.fact_keys and "fact_key" in columns:
        parts.append(key_scope("fact_key", erasure.fact_keys))
    return f"{ours} AND ({' OR '.join(parts)})" if parts else None


def _entity_ids(settings: Settings, agent_id: str) -> set[str]:
    frame = Lake.of(settings).read(ENTITIES)
    return set(frame.filter(pl.col("agent_id").eq(agent_id))["entity_id"].to_list())


def profile_without(frame: pl.DataFrame, agent_id: str, fact_ids: set[str]) -> pl.DataFrame:
    """Every profile version of the agent without the lines built on `fact_ids`, its text rendered again."""
    if not fact_ids or frame.is_empty():
        return frame
    rows = []
    for row in frame.iter_rows(named=True):
        if row["agent_id"] == agent_id:
            lines = [line for line in row["lines"] or [] if not set(line["fact_ids"] or []) & fact_ids]
            if len(lines) != len(row["lines"] or []):
                row = {**row, "lines": lines, "text": render(lines)}
        rows.append(row)
    return pl.DataFrame(rows, schema=frame.schema)



# ------------------------------------------------------------------------------------------------ receipts


def write_receipt(settings: Settings, entry: Forget, erased: Erased) -> dict[str, Any]:
    """Append the forget's receipt: what was asked, what each store lost, and what a check looks for."""
    row = {"forget_id": entry.forget_id, "agent_id": entry.agent_id, "scope": entry.scope, "target": entry.target,
           "asked_at": entry.written_at, "written_at": datetime.now(UTC),
           "removed": list(erased.removed.items()), "message_ids": erased.message_ids,
           "content_sha256": erased.content_sha256,
           "fact_keys": erased.fact_keys}
    append_entry(settings, FORGET_RECEIPTS, [row], entry.forget_id, row["written_at"])
    return row


def read_receipts(settings: Settings, agent_id: str | None = None) -> pl.DataFrame:
    """Every forget receipt (optionally one agent's), oldest first."""
    return read_log(settings, FORGET_RECEIPTS, agent_id)


def forgotten_content_left(settings: Settings) -> dict[str, int]:
    """Per store, how many rows or files still hold a message some receipt says was forgotten (by its id or its
    content's hash; never by text, which no receipt keeps): an empty answer is the proof. The embedding cache is
    not asked: it holds hashes of indexed texts (a chunk, a fact's wording), which another source may give again;
    the forget removed the forgotten ones, `test_forget` proves it by the text.)"""
    left: Counter[str] = Counter()
    receipts = read_receipts(settings)
    if receipts.is_empty():
        return {}
    messages = {(r["agent_id"], m) for r in receipts.iter_rows(named=True) for m in r["message_ids"] or []}
    hashes = {h for r in receipts.iter_rows(named=True) for h in r["content_sha256"] or []}
    lake = Lake.of(settings)
    for table in TABLES.values():
        frame = lake.read(table)
        if not frame.is_empty():
            left[table.path] += sum(_holds(row, messages, hashes) for row in frame.iter_rows(named=True))
    for name, rows in _index_rows(settings):
        left[f"lancedb/{name}"] += sum(_holds(row, messages, hashes) for row in rows)
    for path in sorted(settings.landing_dir.rglob("*")) if settings.landing_dir.is_dir() else []:
        if path.is_file() and not path.name.startswith("."):
            left["landing"] += _landing_holds(path, hashes)
    return {store: count for store, count in sorted(left.items()) if count}


def _holds(row: dict[str, Any], messages: set[tuple[str, str]], hashes: set[str]) -> bool:
    agent = row.get("agent_id")
    ids = [row.get("message_id"), *(row.get("message_ids") or []), *(row.get(MESSAGES) or [])]
    return (any((agent, m) in messages for m in ids if m)
            or row.get("content_sha256") in hashes or row.get("text_sha256") in hashes)


def _index_rows(settings: Settings) -> list[tuple[str, list[dict[str, Any]]]]:
    """The rows of every version of every LanceDB table (a cleaned table has one)."""
    indexes = index_store(settings)
    if not indexes.exists():
        return []
    db = VectorStore.of(settings).db
    found = []
    for name in db.list_tables().tables:
        table = db.open_table(name)
        wanted = [c for c in ("agent_id", "message_ids", "text_sha256") if c in table.schema.names]
        for version in table.list_versions():
            table.checkout(version["version"] if isinstance(version, dict) else version.version)
            found.append((f"{name}@v{table.version}", table.to_arrow().select(wanted).to_pylist()))
    return found


def _landing_holds(path: Path, hashes: set[str]) -> int:
    try:
        parsed = parse_file(path)
    except Exception:  # a bad file is the quarantine's business; a forget removed its copies
        return 0
    return sum(content_sha256(m.content) in hashes for c in parsed.conversations for m in c.messages)


# ------------------------------------------------------------------------------------------------ forget


def forget(
    settings: Settings,
    agent_id: str,
    *,
    fact_id: str | None = None,
    conversation_id: str | None = None,
    everything: bool = False,
    reason: str | None = None,
    embed_factory: EmbedFactory | None = None,
) -> pl.DataFrame:
    """Append a forget entry (a fact's chain, a conversation, or all the agent's facts) and return the fact
    versions it removes from what reads see.

    What the facts fold does with it (`memlake.facts.fold`): a fact's versions said before the forget go; a
    conversation's or the agent's statements ingested before it are dropped, with the facts they alone support
    (a user override stays unless the whole agent is forgotten). Then the text leaves every store at once
    (`memlake.erase`): landing, quarantine, every lake table, LanceDB and its older versions, the caches.
    """
    chosen = [(scope, target) for scope, target in (("fact", fact_id), ("conversation", conversation_id),
                                                    ("agent", agent_id if everything else None)) if target]
    if len(chosen) != 1:
        raise BadRequest("forget exactly one of: a fact id, a conversation id, or everything (all)")
    scope, target = chosen[0]
    before = agent_facts(settings, agent_id, embed_factory).facts
    if scope == "fact" and before.filter(pl.col("fact_id") == target).height == 0:
        raise NotFound(f"agent {agent_id!r} has no fact {target!r}")
    if scope == "conversation" and not _has_conversation(settings, agent_id, target, before):
        raise NotFound(f"agent {agent_id!r} has no conversation {target!r}")
    entry = write_forget(settings, agent_id, scope, target if scope != "agent" else None, reason=reason)
    folded = folded_agent_facts(settings, agent_id, embed_factory)
    gone = before.join(folded.facts.select("fact_id", "version"), on=["fact_id", "version"], how="anti")
    # their vectors go from the embedding cache too (every model's): a forgotten text leaves no trace there
    texts = fact_index_rows(gone)["text_sha256"].to_list()
    forget_texts(settings.embedding_cache_dir, texts)
    # a forgotten fact takes the messages it was read from (the text is in them), and what only they gave
    said_in = gone["source_message_ids"].explode().drop_nulls().to_list() if scope == "fact" else []
    settle_agent_facts(settings, agent_id, folded.facts, folded.edges)
    erased = erase(settings, Erasure(
        agent_id, whole_agent=scope == "agent",
        conversation_ids=frozenset([target]) if scope == "conversation" else frozenset(),
        message_ids=frozenset(said_in),
        fact_keys=frozenset(f"{f}@{v}" for f, v in gone.select("fact_id", "version").iter_rows()),
        override_ids=frozenset(gone["override_ids"].explode().drop_nulls().to_list())))
    write_receipt(settings, entry, erased)
    return ordered(gone)


def _has_conversation(settings: Settings, agent_id: str, conversation_id: str, facts: pl.DataFrame) -> bool:
    if facts.filter(pl.col("source_conversation_ids").list.contains(conversation_id)).height:
        return True

    found = query(
        Lake.of(settings).connect(),
        "SELECT 1 FROM transcripts.turns WHERE agent_id = ? AND conversation_id = ? LIMIT 1",
        [agent_id, conversation_id],
    )
    return found.height > 0
