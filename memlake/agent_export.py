"""One agent's memory exported to a folder or an archive, and imported as another agent into any home.

An export is Parquet per table (the agent's rows of every lake table and of every inputs log) and a
`manifest.json` naming each file with its table's schema version and row count, the memlake version and the
export time. What the user had forgotten is not in it: turns of a forgotten conversation (or agent) ingested
before the forget stay behind, with the rows of the other conversation tables of conversations left with none.

An import writes inputs only, never a lake table: the conversations as one landing file (the message-table
Parquet the landing reads, one row per turn, with the turn's ids and times) and the inputs logs' entries
(overrides, rejections, remembered facts, forgets, splits, accesses) re-keyed to the new agent, with their
original times, so the next `memlake run` derives every layer again in the same order. Everything is read and
checked before the first write: a bad export is a one-line error and writes nothing.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import shutil
import tarfile
import tempfile
import uuid
import zipfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path, PurePosixPath
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from memlake.atomic_files import write_parquet_atomically
from memlake.chunks import chunk_id
from memlake.errors import BadRequest, Conflict, NotFound, UnknownAgent
from memlake.facts.fold import chain_id, slot_of
from memlake.inputs import append_entry, entry_time, read_log
from memlake.lake import Lake, conform
from memlake.schemas import (
    ACCESS,
    CHUNKS,
    EPISODES,
    FACTS,
    FORGET,
    GRAPH_SPLITS,
    OVERRIDES,
    TABLES,
    TURNS,
    Table,
    check_agent_id,
    schema_version,
)
from memlake.settings import Settings

EXPORT_FORMAT = "memlake-export"
EXPORT_FORMAT_VERSION = 1
MANIFEST_NAME = "manifest.json"
ARCHIVE_SUFFIXES = {".zip": "zip", ".tar.gz": "tar.gz", ".tgz": "tar.gz"}

# The inputs logs, each with the column that names one write (an entry) of it.
INPUT_LOGS: dict[str, tuple[Table, str]] = {
    t.path: (t, key) for t, key in ((OVERRIDES, "override_id"), (FORGET, "forget_id"), (GRAPH_SPLITS, "split_id"),
                                    (ACCESS, "access_id"))
}
# The lake tables an export carries: those with the agent's rows. Caches keyed by content hash hold no agent.
EXPORTED_TABLES = [t for t in TABLES.values() if "agent_id" in t.schema.names]
# Of those, the ones whose rows belong to a conversation: a forgotten conversation's rows stay behind.
CONVERSATION_LAYERS = ("transcripts", "episodes")
# What an import reads: the turns (to land), and what re-keys the logs' fact and chunk ids.
IMPORTED_TABLES = (TURNS, EPISODES, FACTS, CHUNKS)
# The columns of the landing file: the message-table Parquet `memlake.parsers.rows` reads.
LANDING_COLUMNS = ("conversation_id", "message_id", "role", "speaker", "content", "created_at", "title",
                   "conversation_started_at")


def memlake_version() -> str:
    try:
        return version("memlake")
    except PackageNotFoundError:  # a checkout run without installing
        return "unknown"


def _file_of(path: str) -> str:
    return f"{path}.parquet"


# ---------------------------------------------------------------- export


def export_agent(settings: Settings, agent_id: str, target: str | Path, *, archive: bool = False) -> dict[str, Any]:
    """Write the agent's memory to `target` (a new folder; with `archive`, one .tar.gz, .tgz or .zip file);
    returns the manifest."""
    agent_id = check_agent_id(agent_id)
    target = Path(target)
    kind = _archive_kind(target) if archive else None
    if target.exists():
        raise Conflict(f"{target} already exists: an export writes a new {'file' if archive else 'folder'}")
    if not target.parent.is_dir():
        raise BadRequest(f"no folder {target.parent} to write the export into")
    frames = _agent_frames(settings, agent_id)
    if not any(frame.height for frame in frames.values()):
        raise UnknownAgent(f"agent {agent_id!r} has no memory in {settings.home}: nothing to export")
    manifest = {
        "format": EXPORT_FORMAT,
        "format_version": EXPORT_FORMAT_VERSION,
        "export_id": uuid.uuid4().hex,
        "agent_id": agent_id,
        "memlake_version": memlake_version(),
        "exported_at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        "tables": {
            path: {"file": _file_of(path), "schema_version": schema_version(_table(path)), "rows": frame.height}
            for path, frame in frames.items()
        },
    }
    # built beside the target under a hidden name, then renamed: a failed export leaves nothing at `target`
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        folder = staging / "export"
        for path, frame in frames.items():
            file = folder / _file_of(path)
            file.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(conform(_table(path), frame), file, compression="zstd")
        (folder / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n")
        if kind is None:
            folder.replace(target)
        else:
            packed = staging / "archive"
            _pack(folder, packed, kind)
            packed.replace(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return manifest


def _archive_kind(target: Path) -> str:
    for suffix, kind in ARCHIVE_SUFFIXES.items():
        if target.name.endswith(suffix):
            return kind
    raise BadRequest(f"an archive's name ends in {', '.join(ARCHIVE_SUFFIXES)}: got {target.name}")


def _pack(folder: Path, into: Path, kind: str) -> None:
    """The export's files at the archive's root (no folder around them)."""
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    if kind == "zip":
        with zipfile.ZipFile(into, "w", zipfile.ZIP_DEFLATED) as packed:
            for file in files:
                packed.write(file, file.relative_to(folder).as_posix())
    else:
        with tarfile.open(into, "w:gz") as packed:
            for file in files:
                packed.add(file, file.relative_to(folder).as_posix())


def _table(path: str) -> Table:
    return TABLES[path] if path in TABLES else INPUT_LOGS[path][0]


def _agent_frames(settings: Settings, agent_id: str) -> dict[str, pl.DataFrame]:
    """Table path -> the agent's rows, what the user forgot left out."""
    lake = Lake.of(settings)
    logs = {path: read_log(settings, table, agent_id) for path, (table, _) in INPUT_LOGS.items()}
    tables = {t.path: _agent_rows(lake, t, agent_id) for t in EXPORTED_TABLES}
    turns = remembered_turns(tables[TURNS.path], logs[FORGET.path])
    kept = set(turns["conversation_id"].unique().to_list())
    for table in EXPORTED_TABLES:
        if table.layer in CONVERSATION_LAYERS:
            tables[table.path] = tables[table.path].filter(pl.col("conversation_id").is_in(kept))
    return {**tables, TURNS.path: turns, **logs}


def _agent_rows(lake: Lake, table: Table, agent_id: str) -> pl.DataFrame:
    return lake.read(table).filter(pl.col("agent_id") == agent_id).select(table.schema.names)


def remembered_turns(turns: pl.DataFrame, forgets: pl.DataFrame) -> pl.DataFrame:
    """The turns not forgotten: a turn goes if its agent or its conversation was forgotten after it was
    ingested (one sent again after the forget stays, as the facts fold keeps what it says)."""
    cut = pl.lit(None, dtype=pl.Datetime("us", "UTC"))
    agent_forgets = forgets.filter(pl.col("scope") == "agent")["written_at"]
    if agent_forgets.len():
        cut = pl.lit(agent_forgets.max())
    by_conversation = (forgets.filter(pl.col("scope") == "conversation")
                       .group_by("target").agg(pl.col("written_at").max().alias("forgotten_at")))
    marked = turns.join(by_conversation, left_on="conversation_id", right_on="target", how="left")
    last_forget = pl.max_horizontal(cut, pl.col("forgotten_at"))
    kept = marked.filter(last_forget.is_null() | (pl.col("ingested_at") > last_forget))
    return kept.select(turns.columns)


# ---------------------------------------------------------------- import


@dataclass(frozen=True)
class ImportPlan:
    """What an import writes: the landing file's rows and each log's entries, already re-keyed."""

    export_id: str
    source_agent: str
    turns: pa.Table
    entries: dict[str, list[list[dict[str, Any]]]]  # log path -> its entries, each the rows of one write
    unmatched_forgets: int  # fact forgets whose fact the export does not describe: they cannot be re-keyed


def import_agent(settings: Settings, source: str | Path, agent_id: str, *, merge: bool = False) -> dict[str, Any]:
    """Import the export at `source` (a folder or an archive) as agent `agent_id` of this home: a landing file
    of its conversations and the inputs logs' entries, for the next run to derive everything from. An agent
    that has memory here already is refused unless `merge`. Returns what was written."""
    agent_id = check_agent_id(agent_id)
    with export_files(Path(source)) as files:
        plan = plan_import(files, agent_id)
    landing_file = settings.landing_dir / agent_id / f"memlake-import-{plan.export_id}.parquet"
    if landing_file.exists():
        raise Conflict(f"export {plan.export_id} is already imported as agent {agent_id!r} ({landing_file})")
    held = holds_memory(settings, agent_id)
    if held and not merge:
        raise Conflict(f"agent {agent_id!r} already has memory in {settings.home} ({held}): import as a new "
                         "agent, or pass --merge (merge=True) to add the export to it")
    settings.ensure_dirs()  # a new home is made here, once the export is known to be good
    if plan.turns.num_rows:
        landing_file.parent.mkdir(parents=True, exist_ok=True)
        write_parquet_atomically(landing_file, plan.turns)
    for path, entries in plan.entries.items():
        table, key = INPUT_LOGS[path]
        for rows in entries:
            append_entry(settings, table, rows, rows[0][key], rows[0][entry_time(table)])
    return {
        "agent_id": agent_id,
        "source_agent": plan.source_agent,
        "export_id": plan.export_id,
        "landing_file": str(landing_file) if plan.turns.num_rows else None,
        "conversations": len(set(plan.turns.column("conversation_id").to_pylist())),
        "turns": plan.turns.num_rows,
        "entries": {path: len(entries) for path, entries in plan.entries.items()},
        "unmatched_forgets": plan.unmatched_forgets,
    }


def holds_memory(settings: Settings, agent_id: str) -> str:
    """What the agent already has here ("" when nothing): turns, landing files, or log entries."""
    if (settings.landing_dir / agent_id).is_dir() and any(
            p.is_file() for p in (settings.landing_dir / agent_id).rglob("*")):
        return "landing files"
    lake = Lake.of(settings)
    if lake.holds(TURNS, "agent_id", agent_id):
        return "turns"
    for path, (table, _) in INPUT_LOGS.items():
        if read_log(settings, table, agent_id).height:
            return f"{path} entries"
    return ""


class ExportFiles:
    """The files of an export, by their path inside it (a folder, or an archive read in memory: nothing is
    extracted, so a member's name cannot reach outside)."""

    def __init__(self, source: Path, members: dict[str, bytes] | None) -> None:
        self.source = source
        self.members = members

    def read(self, name: str) -> bytes | None:
        if self.members is not None:
            return self.members.get(name)
        path = self.source / name
        inside = path.resolve().is_relative_to(self.source.resolve())
        return path.read_bytes() if inside and path.is_file() else None


@contextmanager
def export_files(source: Path) -> Iterator[ExportFiles]:
    if source.is_dir():
        yield ExportFiles(source, None)
        return
    if not source.is_file():
        raise NotFound(f"no export at {source}: give the folder or the archive `memlake export` wrote")
    if zipfile.is_zipfile(source):
        with zipfile.ZipFile(source) as packed:
            members = {i.filename: packed.read(i) for i in packed.infolist() if not i.is_dir()}
    elif _is_tar(source):
        with tarfile.open(source) as packed:
            members = {m.name: packed.extractfile(m).read() for m in packed.getmembers()  # type: ignore[union-attr]
                       if m.isfile()}
    else:
        raise BadRequest(f"{source} is not a memlake export: neither a folder nor a .zip or .tar.gz archive")
    yield ExportFiles(source, {str(PurePosixPath(name)): data for name, data in members.items()})


def _is_tar(source: Path) -> bool:
    try:
        return tarfile.is_tarfile(source)
    except OSError:
        return False


def plan_import(files: ExportFiles, agent_id: str) -> ImportPlan:
    """Read and check the export, and re-key what it holds to `agent_id`."""
    manifest = read_manifest(files)
    source_agent = manifest["agent_id"]
    frames = {t.path: _read_table(files, manifest, t) for t in (*IMPORTED_TABLES, *(t for t, _ in INPUT_LOGS.values()))}
    turns = frames[TURNS.path].sort("conversation_started_at", "conversation_id", "turn_index")
    fact_ids = FactIdMap(source_agent, agent_id, _statements(frames))
    chunk_ids = _chunk_id_map(frames[CHUNKS.path], source_agent, agent_id)
    entries: dict[str, list[list[dict[str, Any]]]] = {}
    unmatched = 0
    for path, (table, key) in INPUT_LOGS.items():
        groups: dict[str, list[dict[str, Any]]] = {}
        for row in frames[path].iter_rows(named=True):
            new_row = {**row, "agent_id": agent_id, key: _new_id(row[key], agent_id)}
            if table is OVERRIDES and row["fact_id"]:
                new_row["fact_id"] = fact_ids.get(row["fact_id"]) or row["fact_id"]  # unmatched: found by target
            elif table is FORGET and row["scope"] == "fact":
                new_row["target"] = fact_ids.get(row["target"])
                if new_row["target"] is None:  # kept as it was (it names nothing here), and said
                    new_row["target"] = row["target"]
                    unmatched += 1
            elif table is ACCESS:
                new_row["object_id"] = _access_key(row, source_agent, agent_id, fact_ids, chunk_ids)
            groups.setdefault(new_row[key], []).append(new_row)
        entries[path] = list(groups.values())
    return ImportPlan(manifest["export_id"], source_agent, turns.select(LANDING_COLUMNS).to_arrow(), entries,
                      unmatched)


def read_manifest(files: ExportFiles) -> dict[str, Any]:
    raw = files.read(MANIFEST_NAME)
    if raw is None:
        raise BadRequest(f"{files.source} is not a memlake export: it has no {MANIFEST_NAME}")
    try:
        manifest = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadRequest(f"{files.source}: {MANIFEST_NAME} is not JSON ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != EXPORT_FORMAT:
        raise BadRequest(f"{files.source} is not a memlake export: its {MANIFEST_NAME} does not say "
                         f"format {EXPORT_FORMAT!r}")
    if manifest.get("format_version") != EXPORT_FORMAT_VERSION:
        raise BadRequest(f"{files.source} is export format version {manifest.get('format_version')!r}; this "
                         f"memlake ({memlake_version()}) reads version {EXPORT_FORMAT_VERSION}")
    for field in ("export_id", "agent_id", "tables"):
        if not manifest.get(field):
            raise BadRequest(f"{files.source}: {MANIFEST_NAME} lacks {field!r}")
    if not isinstance(manifest["tables"], dict):
        raise BadRequest(f"{files.source}: {MANIFEST_NAME}'s 'tables' is not an object")
    check_agent_id(manifest["agent_id"])
    return manifest


def _read_table(files: ExportFiles, manifest: dict[str, Any], table: Table) -> pl.DataFrame:
    """One table of the export, checked against the manifest: listed, of this memlake's schema version, its
    file there and readable, with the rows the manifest counts."""
    entry = manifest["tables"].get(table.path)
    if not isinstance(entry, dict):
        raise BadRequest(f"{files.source}: {MANIFEST_NAME} lists no table {table.path}")
    if entry.get("schema_version") != schema_version(table):
        raise BadRequest(
            f"{files.source}: table {table.path} has schema version {entry.get('schema_version')!r}, this memlake "
            f"({memlake_version()}) has {schema_version(table)!r}: export it again with this version")
    raw = files.read(str(entry.get("file")))
    if raw is None:
        raise BadRequest(f"{files.source}: the file {entry.get('file')!r} of table {table.path} is missing")
    try:
        data = pq.read_table(io.BytesIO(raw), schema=table.schema)
    except (pa.ArrowException, OSError) as exc:
        raise BadRequest(f"{files.source}: {entry.get('file')} is not a Parquet file of table {table.path} "
                         f"({str(exc).splitlines()[0]})") from None
    if data.num_rows != entry.get("rows"):
        raise BadRequest(f"{files.source}: {entry.get('file')} has {data.num_rows} rows, the manifest says "
                         f"{entry.get('rows')!r}")
    frame = pl.from_arrow(data)
    assert isinstance(frame, pl.DataFrame)
    if frame.height and set(frame["agent_id"].unique().to_list()) != {manifest["agent_id"]}:
        raise BadRequest(f"{files.source}: table {table.path} holds rows of agents other than "
                         f"{manifest['agent_id']!r}")
    return frame


def _new_id(old: str, agent_id: str) -> str:
    """An entry's id in the new agent's log: its prefix kept (o_, x_, ...), the rest derived from the agent and
    the old id, so two agents imported from one export do not share ids."""
    prefix = old.split("_", 1)[0] + "_" if "_" in old else ""
    return prefix + hashlib.sha256(f"{agent_id}\x1f{old}".encode()).hexdigest()[:16]


Statement = tuple[str | None, str | None, str | None, str | None, str | None]  # subject, slot, value, type, content


def _statements(frames: dict[str, pl.DataFrame]) -> Iterator[Statement]:
    """Everything the export says a fact chain could start from: the episodes' candidates, every fact version,
    and the remembered and corrected facts."""
    for candidates in frames[EPISODES.path]["fact_candidates"].to_list():
        for c in candidates or []:
            yield c["subject"], c["slot"], c["value"], c["type"], c["content"]
    yield from frames[FACTS.path].select("subject", "slot", "value", "type", "content").iter_rows()
    yield from frames[OVERRIDES.path].select("subject", "slot", "value", "type", "content").iter_rows()
    yield from frames[OVERRIDES.path].select("target_subject", "target_slot", "value", "type",
                                             "target_content").iter_rows()


class FactIdMap:
    """The source agent's fact ids -> the same chains' ids under the new agent. A chain's id is derived from its
    agent, subject and slot (or type and first statement), so re-deriving both ids of every statement the export
    holds maps every chain it could have made; "-2" and further suffixes (a second chain of one key) carry over."""

    _SUFFIX = re.compile(r"^(.*?)(-\d+)?$")

    def __init__(self, source_agent: str, agent_id: str, statements: Iterable[Statement]) -> None:
        self.ids: dict[str, str] = {}
        for subject, slot, value, fact_type, content in statements:
            subject = subject or "user"
            keys = [slot_of(slot, value)] if slot else []
            for key in [*keys, None]:
                for kind in {fact_type or "fact", "fact"}:
                    old = chain_id(source_agent, subject, key, kind, content or "")
                    self.ids[old] = chain_id(agent_id, subject, key, kind, content or "")

    def get(self, fact_id: str | None) -> str | None:
        if not fact_id:
            return None
        base, version_at = (fact_id.split("@", 1) + [""])[:2]
        match = self._SUFFIX.match(base)
        assert match is not None
        new = self.ids.get(match.group(1))
        if new is None:
            return None
        return new + (match.group(2) or "") + (f"@{version_at}" if version_at else "")


def _chunk_id_map(chunks: pl.DataFrame, source_agent: str, agent_id: str) -> dict[str, str]:
    """The source agent's chunk ids -> the new agent's, from each chunk's conversation, kind and turns (and, for
    a sentence key, its number within the turn: found by trying each until the id matches)."""
    ids = {}
    for row in chunks.select("chunk_id", "conversation_id", "kind", "turn_start", "turn_end").iter_rows(named=True):
        fields = (row["conversation_id"], row["kind"], row["turn_start"], row["turn_end"])
        for part in (None, *range(512)):
            if chunk_id(source_agent, *fields, part) == row["chunk_id"]:
                ids[row["chunk_id"]] = chunk_id(agent_id, *fields, part)
                break
    return ids


def _access_key(row: dict[str, Any], source_agent: str, agent_id: str, fact_ids: FactIdMap,
                chunk_ids: dict[str, str]) -> str:
    """An accessed object's key under the new agent (unchanged when the export does not say what it was)."""
    key = row["object_id"]
    if row["scope"] == "facts":
        return fact_ids.get(key) or key
    if row["scope"] == "episodes" and key.startswith(f"{source_agent}/"):
        return f"{agent_id}/{key.split('/', 1)[1]}"
    return chunk_ids.get(key, key)
