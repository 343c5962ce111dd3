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
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import lancedb
import polars as pl
import pyarrow.parquet as pq

from memlake.embedding_cache import forget_texts
from memlake.facts.profile import render
from memlake.lake import Lake, mark_changed, write_then_rename
from memlake.parsers import parse_file
from memlake.schemas import (
    AUDIT,
    ENTITIES,
    ENTITY_MERGES,
    JUDGE_CACHE,
    LANDING_MANIFEST,
    PROFILE_CACHE,
    PROFILES,
    TABLES,
    Table,
    agent_folder,
)
from memlake.settings import Settings
from memlake.vectors import key_scope, quote

SOURCES = "source_conversation_ids"


@dataclass(frozen=True)
class Erasure:
    """What one forget erases: the whole agent, some of its conversations, and fact versions (`id@version`)."""

    agent_id: str
    whole_agent: bool = False
    conversation_ids: frozenset[str] = frozenset()
    fact_keys: frozenset[str] = frozenset()

    @property
    def fact_ids(self) -> set[str]:
        return {key.rsplit("@", 1)[0] for key in self.fact_keys}


def erase(settings: Settings, erasure: Erasure) -> dict[str, int]:
    """Remove what `erasure` names from every store; the count removed per store (stores with none left out)."""
    removed: Counter[str] = Counter()
    removed.update(_erase_landing(settings, erasure))
    removed["quarantine"] += _erase_quarantine(settings, erasure)
    entities_before = _entity_ids(settings, erasure.agent_id)
    lake = Lake(settings.lake_dir)
    for table in TABLES.values():
        if table is not ENTITY_MERGES:  # after the entities: a merge goes with the entity it went into
            removed[table.path] += _erase_rows(lake, table, erasure)
    gone_entities = entities_before - _entity_ids(settings, erasure.agent_id)
    removed[ENTITY_MERGES.path] += _erase_rows(lake, ENTITY_MERGES, erasure, gone_entities)
    hashes, index_removed = _erase_indexes(settings, erasure)
    removed.update(index_removed)
    removed["embedding_cache"] += forget_texts(settings.embedding_cache_dir, hashes)
    mark_changed(lake.root)
    return {store: count for store, count in sorted(removed.items()) if count}


# ------------------------------------------------------------------------------------------------ the lake


def _keep(table: Table, frame: pl.DataFrame, erasure: Erasure) -> pl.Expr:
    """The rows of `table` that `erasure` leaves (as a filter on `frame`)."""
    columns = set(frame.columns)
    if table is JUDGE_CACHE:  # answers about fact texts, no agent named: any forget that takes a fact empties it
        return pl.lit(not (erasure.fact_keys or erasure.whole_agent or erasure.conversation_ids))
    if "agent_id" not in columns:
        return pl.lit(True)
    ours = pl.col("agent_id").eq(erasure.agent_id)
    if erasure.whole_agent:
        return ~ours
    if table is PROFILE_CACHE:  # a model's profile answer quotes the facts it was given
        return ~ours
    gone = pl.lit(False)
    conversations = list(erasure.conversation_ids)
    if "conversation_id" in columns and conversations:
        gone = gone | pl.col("conversation_id").is_in(conversations)
    if SOURCES in columns and conversations:
        gone = gone | (pl.col(SOURCES).list.len().gt(0)
                       & pl.col(SOURCES).list.set_difference(pl.lit(conversations)).list.len().eq(0))
    keys = list(erasure.fact_keys)
    if keys:
        for prefix in ("", "from_", "to_"):
            if f"{prefix}fact_id" in columns and f"{prefix}version" in columns:
                key = pl.concat_str(pl.col(f"{prefix}fact_id"), pl.lit("@"), pl.col(f"{prefix}version").cast(pl.String))
                gone = gone | key.is_in(keys)
        if table is AUDIT:
            gone = gone | pl.col("object_id").is_in(keys)
    return ~(ours & gone)


def _erase_rows(lake: Lake, table: Table, erasure: Erasure, gone_entities: set[str] | None = None) -> int:
    """Rewrite each file of `table` without what `erasure` names; the number of rows dropped."""
    removed = 0
    for path in lake.files(table):
        data = pq.read_table(path)
        frame = pl.from_arrow(data)
        assert isinstance(frame, pl.DataFrame)
        if table is ENTITY_MERGES:  # a merge goes with the entity it went into
            ours = pl.col("agent_id").eq(erasure.agent_id)
            kept = frame.filter(~(ours & (pl.col("entity_id").is_in(list(gone_entities or ())) | erasure.whole_agent)))
        else:
            kept = _fewer_sources(frame.filter(_keep(table, frame, erasure)), erasure)
        if table is PROFILES:
            kept = profile_without(kept, erasure.agent_id, erasure.fact_ids)
        if kept.equals(frame):
            continue
        removed += frame.height - kept.height
        out = kept.to_arrow().cast(data.schema)  # the file's schema, stamps (footer metadata) included
        write_then_rename(path, out.replace_schema_metadata(data.schema.metadata))
    return removed


def _fewer_sources(frame: pl.DataFrame, erasure: Erasure) -> pl.DataFrame:
    """A row derived from several conversations keeps the others: the forgotten ones leave its sources."""
    if SOURCES not in frame.columns or not erasure.conversation_ids:
        return frame
    ours = pl.col("agent_id").eq(erasure.agent_id)
    fewer = pl.col(SOURCES).list.set_difference(pl.lit(sorted(erasure.conversation_ids)))
    return frame.with_columns(pl.when(ours).then(fewer).otherwise(pl.col(SOURCES)).alias(SOURCES))


# ------------------------------------------------------------------------------------------------ landing


def _erase_landing(settings: Settings, erasure: Erasure) -> Counter[str]:
    """Remove the agent's landing folder, or the forgotten conversations from the files holding them."""
    removed: Counter[str] = Counter()
    folder = agent_folder(settings.landing_dir, erasure.agent_id)
    if erasure.whole_agent:
        if folder.is_dir():
            removed["landing"] = sum(1 for p in folder.rglob("*") if p.is_file())
            shutil.rmtree(folder)
        return removed
    if not erasure.conversation_ids:
        return removed
    lake = Lake(settings.lake_dir)
    manifest = lake.read(LANDING_MANIFEST)
    holding = manifest.filter(pl.col("agent_id").eq(erasure.agent_id)
                              & pl.col("conversation_id").is_in(list(erasure.conversation_ids)))
    rewritten: dict[str, tuple[str, str] | None] = {}  # old relative path -> (new relative path, new sha) or gone
    for relative in sorted(set(holding["source_file"].to_list())):
        path = settings.landing_dir / relative
        if path.is_file():
            rewritten[relative] = _rewrite_without(settings, path, erasure.conversation_ids)
            removed["landing"] += 1
    if rewritten:
        _record_rewrites(lake, erasure, rewritten)
    return removed


def _rewrite_without(settings: Settings, path: Path, conversations: frozenset[str]) -> tuple[str, str] | None:
    """The landing file at `path` without `conversations`: gone when it holds nothing else, else written again
    as memlake JSONL (one line per message, the source's ids kept) under its name with `.jsonl`, atomically."""
    from memlake.landing import sha256_file  # deferred: landing imports the lake and parsers
    from memlake.transcripts import stable_message_id  # the ids the lake gave messages without one

    parsed = parse_file(path)
    left = [c for c in parsed.conversations if c.conversation_id not in conversations]
    if not left:
        path.unlink()
        return None
    target = path.with_suffix(".jsonl")
    lines = []
    for conversation in left:
        for position, message in enumerate(conversation.messages):
            lines.append(json.dumps({
                "conversation_id": conversation.conversation_id,
                "message_id": message.message_id or stable_message_id(conversation.conversation_id, position),
                "role": message.role, "speaker": message.speaker, "content": message.content,
                "created_at": message.created_at.isoformat() if message.created_at else None,
                "title": conversation.title}))
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
    stamp = {k.decode(): v.decode() for k, v in (pq.read_schema(lake.files(LANDING_MANIFEST)[0]).metadata or {}).items()
             if not k.startswith(b"ARROW")} if lake.files(LANDING_MANIFEST) else None
    lake.write(LANDING_MANIFEST, rows if rows else lake.empty(LANDING_MANIFEST), stamp=stamp)


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


def _erase_indexes(settings: Settings, erasure: Erasure) -> tuple[list[str], Counter[str]]:
    """Delete the rows from every LanceDB table, compact it and remove its older versions; the text hashes of
    the rows deleted (their vectors leave the embedding cache too) and the count per table."""
    removed: Counter[str] = Counter()
    hashes: list[str] = []
    if not settings.lancedb_dir.is_dir():
        return hashes, removed
    db = lancedb.connect(str(settings.lancedb_dir))
    for name in db.list_tables().tables:
        table = db.open_table(name)
        where = _index_filter(erasure, set(table.schema.names))
        if where is None:
            continue
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
    mark_changed(settings.lancedb_dir)
    return hashes, removed


def _index_filter(erasure: Erasure, columns: set[str]) -> str | None:
    """The LanceDB filter of the rows `erasure` names in a table with `columns` (None: none can be)."""
    if "agent_id" not in columns:
        return None
    ours = f"agent_id = {quote(erasure.agent_id)}"
    if erasure.whole_agent:
        return ours
    parts = []
    if erasure.conversation_ids and "conversation_id" in columns and "fact_key" not in columns:
        parts.append(key_scope("conversation_id", erasure.conversation_ids))
    if erasure.fact_keys and "fact_key" in columns:
        parts.append(key_scope("fact_key", erasure.fact_keys))
    return f"{ours} AND ({' OR '.join(parts)})" if parts else None


def _entity_ids(settings: Settings, agent_id: str) -> set[str]:
    frame = Lake(settings.lake_dir).read(ENTITIES)
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

