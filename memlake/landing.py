"""The landing folder: finding new files, the manifest of what they hold, and quarantine.

Landing files are never modified or deleted here. A bad file is copied to
`<home>/quarantine/` beside a `<name>.reason.json`, and the rest goes on.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import polars as pl

from memlake.atomic_files import copy_atomically, write_text_atomically
from memlake.lake import Lake, conform
from memlake.parsers import OverLimitError, ParsedConversation, ParsedFile, ParseError, ParseLimits, parse_file
from memlake.schemas import LANDING_MANIFEST, TURNS, agent_id_problem, path_inside
from memlake.settings import Settings


@dataclass(frozen=True)
class LandingFile:
    """A file under `<home>/landing`, with its content hash."""

    path: Path
    relative: str  # relative to the landing folder, with forward slashes
    sha256: str

    @property
    def folder_agent(self) -> str | None:
        """The agent folder it was dropped in, if any (`landing/<agent_id>/…`)."""
        return folder_agent(self.relative)

    @property
    def key(self) -> str:
        return landing_key(self.relative, self.sha256)


def folder_agent(relative: str) -> str | None:
    parts = relative.split("/")
    return parts[0] if len(parts) > 1 else None


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class IgnoredFile:
    """A path under `<home>/landing` the scan does not read, and why (it is neither ingested nor quarantined)."""

    relative: str
    reason: str


def scan_landing(settings: Settings) -> tuple[list[LandingFile], list[IgnoredFile]]:
    """Every landing file to read, in a stable order, and every path left unread with the reason.

    Hidden files and folders (a name starting with "."; editors and systems leave them) are not read. Nor are
    links that lead nowhere or outside the home (their bytes would be copied into quarantine), linked folders,
    and what is not a regular file (a pipe would block the read).
    """
    root = settings.landing_dir
    files: list[LandingFile] = []
    ignored: list[IgnoredFile] = []
    if not root.is_dir():
        return files, ignored
    home = settings.home.resolve()
    for folder, dirnames, filenames in os.walk(root):  # not into linked folders: they are judged as entries
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            path = Path(folder) / name
            relative = path.relative_to(root).as_posix()
            reason = _unread_reason(path, name, home)
            if reason is not None:
                ignored.append(IgnoredFile(relative, reason))
            elif name in filenames:
                files.append(LandingFile(path, relative, sha256_file(path)))
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and not (Path(folder) / d).is_symlink()]
    return files, ignored


def _unread_reason(path: Path, name: str, home: Path) -> str | None:
    """Why the scan leaves `path` unread, or None for a file to read (or a folder to look into)."""
    if name.startswith("."):
        kind = "folder" if path.is_dir() else "file"
        return f"hidden {kind}: a name starting with '.' is not read (rename it to have it read)"
    if path.is_symlink():
        target = path.resolve()
        if not target.exists():
            return "dangling symlink: what it points to is not there"
        if not target.is_relative_to(home):
            return "symlink to outside the home: not read (copy the file into landing instead)"
        if target.is_dir():
            return "symlinked folder: not followed (move or copy its files into landing)"
    if not path.is_dir() and not path.is_file():
        return "not a regular file (a pipe, socket or device): not read"
    return None


def list_landing(settings: Settings) -> list[LandingFile]:
    """Every landing file to read, in a stable order (`scan_landing` says what else is there and why not)."""
    return scan_landing(settings)[0]


def landing_key(relative: str, sha256: str) -> str:
    """What makes a landing file new: its bytes in its agent's folder. The same bytes dropped for another
    agent are that agent's data; under another name in the same folder, a duplicate."""
    return f"{folder_agent(relative) or ''}/{sha256}"


def manifest_keys(manifest: pl.DataFrame, limits: ParseLimits) -> set[str]:
    """The landing keys of every file the manifest is done with, whatever became of it: all it holds but those
    to read again under `limits` (`keys_to_read_again`)."""
    every = {landing_key(f, sha) for f, sha in manifest.select("source_file", "source_sha256").iter_rows()}
    return every - keys_to_read_again(manifest, limits)


def limit_changed(row: dict[str, Any], limits: ParseLimits) -> bool:
    """Whether a manifest row is a file a size limit refused whose setting has another value in `limits`.

    Only the limit that refused it counts: limits only ever refuse, so with that one unchanged the file would
    be refused again, by it or by another."""
    setting = row.get("limit_setting")
    if row["status"] != "quarantined" or setting is None:
        return False
    return bool(getattr(limits, setting, row["limit_value"]) != row["limit_value"])


def keys_to_read_again(manifest: pl.DataFrame, limits: ParseLimits) -> set[str]:
    """The landing keys of files quarantined by a limit that has changed since (`limit_changed`)."""
    return {landing_key(r["source_file"], r["source_sha256"])
            for r in manifest.iter_rows(named=True) if limit_changed(r, limits)}


def quarantine_reasons(manifest: pl.DataFrame, agent_id: str) -> dict[str, str]:
    """sha256 -> reason of every file the manifest holds quarantined in `agent_id`'s landing folder."""
    quarantined = manifest.filter(pl.col("status") == "quarantined")
    return {sha: reason for source_file, sha, reason in quarantined.select("source_file", "source_sha256", "reason")
            .iter_rows() if folder_agent(source_file) == agent_id}


@dataclass
class ManifestUpdate:
    """What one pass over the landing folder found."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    new_files: list[str] = field(default_factory=list)
    quarantined: list[dict[str, Any]] = field(default_factory=list)  # {file, reason}
    # {file, was, outcome, reason}: quarantined by a limit since changed, read again (`limit_changed`)
    retried: list[dict[str, Any]] = field(default_factory=list)
    ignored: list[dict[str, str]] = field(default_factory=list)  # {file, reason}: left unread (`scan_landing`)
    touched_days: set[str] = field(default_factory=set)


class RejectedFile(Exception):
    """A file that parsed but cannot be ingested (bad agent id, date out of range…)."""

    def __init__(self, message: str, location: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.location = location
        self.format_guess: str | None = None  # the format it parsed as


def conversation_start(conversation: ParsedConversation) -> datetime | None:
    times = [m.created_at for m in conversation.messages if m.created_at is not None]
    candidates = [t for t in [conversation.started_at, min(times) if times else None] if t is not None]
    return min(candidates) if candidates else None


def update_manifest(settings: Settings, previous: pl.DataFrame, now: datetime) -> ManifestUpdate:
    """Fold the landing folder into the manifest: known files keep their rows, new ones are read.

    `previous` is the current manifest table; `now` is the first-seen time
    given to files not seen before, and to files quarantined by a limit that
    has changed since, which are read again. A conversation keeps the
    partition it got when it was first seen.
    """
    update = ManifestUpdate()
    limits = ParseLimits.of(settings)
    update.rows = [dict(r) for r in previous.iter_rows(named=True)]
    read_again = {(r["source_file"], r["source_sha256"]): r for r in update.rows if limit_changed(r, limits)}
    update.rows = [r for r in update.rows if (r["source_file"], r["source_sha256"]) not in read_again]
    known = {(r["source_file"], r["source_sha256"]) for r in update.rows}
    fixed_days = {
        (r["agent_id"], r["conversation_id"]): r["partition"]
        for r in update.rows
        if r["status"] == "ingested" and r["partition"] is not None
    }
    # The same bytes dropped for another agent are that agent's data, not a duplicate.
    ingested = {(folder_agent(r["source_file"]), r["source_sha256"]) for r in update.rows if r["status"] == "ingested"}
    first_day = date.fromisoformat(settings.partition_start_date)

    landing_files, unread = scan_landing(settings)
    update.ignored = [{"file": i.relative, "reason": i.reason} for i in unread]
    for landing in landing_files:
        if (landing.relative, landing.sha256) in known:
            continue
        was = read_again.get((landing.relative, landing.sha256))
        if was is None:
            update.new_files.append(landing.relative)
        row = _read_landing_file(settings, landing, limits, update, ingested, fixed_days, first_day, now)
        if was is not None:
            update.retried.append({"file": landing.relative, "was": was["reason"], "outcome": row["status"],
                                   "reason": row.get("reason")})
            if row["status"] != "quarantined":  # quarantine holds bad files only
                _drop_quarantine_copy(settings, was["quarantine_path"])
    return update


def _read_landing_file(
    settings: Settings,
    landing: LandingFile,
    limits: ParseLimits,
    update: ManifestUpdate,
    ingested: set[tuple[str | None, str]],
    fixed_days: dict[tuple[str, str], str],
    first_day: date,
    now: datetime,
) -> dict[str, Any]:
    """Read one file the manifest does not hold into `update`: its conversations, or it as a duplicate or
    quarantined. Returns its last row."""
    base = {
        "source_file": landing.relative,
        "source_sha256": landing.sha256,
        "first_seen_at": now,
    }
    if (landing.folder_agent, landing.sha256) in ingested:
        update.rows.append({**base, "status": "duplicate", "reason": "same content as an ingested file"})
        return update.rows[-1]
    try:
        parsed = parse_file(landing.path, limits)
        try:
            rows = _conversation_rows(parsed, landing, fixed_days, first_day, now)
        except RejectedFile as rejected:  # it parsed: its format is known, not guessed
            rejected.format_guess = parsed.source_format
            raise
    except (ParseError, RejectedFile) as exc:
        reason = _quarantine(settings, landing, exc, now)
        update.quarantined.append({"file": landing.relative, "reason": reason["error"]})
        over_limit = exc if isinstance(exc, OverLimitError) else None
        update.rows.append(
            {
                **base,
                "source_format": reason["format_guess"],
                "agent_id": landing.folder_agent,
                "status": "quarantined",
                "reason": reason["error"] + (f" (at {reason['location']})" if reason["location"] else ""),
                "quarantine_path": reason["quarantine_path"],
                "limit_setting": over_limit.setting if over_limit else None,
                "limit_value": over_limit.limit if over_limit else None,
            }
        )
        return update.rows[-1]
    for row in rows:
        fixed_days.setdefault((row["agent_id"], row["conversation_id"]), row["partition"])
        row["partition"] = fixed_days[(row["agent_id"], row["conversation_id"])]
        update.touched_days.add(row["partition"])
        update.rows.append({**base, **row, "status": "ingested"})
    ingested.add((landing.folder_agent, landing.sha256))
    return update.rows[-1]


def _drop_quarantine_copy(settings: Settings, quarantine_path: str | None) -> None:
    """Remove the quarantine copy of a file read again and ingested, with its reason file."""
    if quarantine_path is None:
        return
    inside = (settings.home / quarantine_path).relative_to(settings.quarantine_dir)
    copy = path_inside(settings.quarantine_dir, *inside.parts)
    copy.unlink(missing_ok=True)
    copy.with_name(copy.name + ".reason.json").unlink(missing_ok=True)


def date_outside_days(started: datetime, first_day: date, today: date) -> str | None:
    """What is wrong if a conversation that started at `started` falls outside the day partitions (from
    `partition_start_date` to today), else None."""
    if first_day <= started.date() <= today:
        return None
    return f"conversation date {started.date()} is outside {first_day}..{today} (see MEMLAKE_PARTITION_START_DATE)"


def future_message(conversation: ParsedConversation, now: datetime) -> str | None:
    """What is wrong if a message of `conversation` is dated after `now`, else None."""
    for position, message in enumerate(conversation.messages):
        if message.created_at is not None and message.created_at > now:
            return (f"message {message.message_id or position} is dated {message.created_at:%Y-%m-%d %H:%M} UTC, "
                    f"after the run ({now:%Y-%m-%d %H:%M} UTC)")
    return None


def _conversation_rows(
    parsed: ParsedFile,
    landing: LandingFile,
    fixed_days: dict[tuple[str, str], str],
    first_day: date,
    now: datetime,
) -> list[dict[str, Any]]:
    today = now.date()
    rows = []
    folder = landing.folder_agent
    for index, conversation in enumerate(parsed.conversations):
        where = f"conversation {conversation.conversation_id!r} (#{index})"
        if folder is not None and conversation.agent_id not in (None, folder):
            # a file in an agent's folder writes that agent only: it may not write into another's memory
            raise RejectedFile(
                f"it names agent {conversation.agent_id!r}, but the file is in the folder of agent {folder!r}, "
                "which it alone may write (a file whose rows name other agents goes at the landing root)",
                where,
            )
        agent_id = folder or conversation.agent_id
        if agent_id is None:
            raise RejectedFile("no agent id: drop the file in landing/<agent_id>/ or give agent_id", where)
        problem = agent_id_problem(agent_id)
        if problem is not None:
            whose = "the folder's name" if folder is not None else "the rows' agent_id"
            raise RejectedFile(f"invalid agent id {agent_id!r} ({whose}): {problem}", where)
        started = conversation_start(conversation)
        day = fixed_days.get((agent_id, conversation.conversation_id))
        if day is None:
            if started is None:
                raise RejectedFile("conversation has no date (no session date and no message times)", where)
            outside = date_outside_days(started, first_day, today)
            if outside is not None:
                raise RejectedFile(outside, where)
            day = started.date().isoformat()
        late = future_message(conversation, now)
        if late is not None:  # a clock or an export gone wrong: no turn may be dated after the run (turns check)
            raise RejectedFile(late, where)
        rows.append(
            {
                "source_format": parsed.source_format,
                "archive": getattr(parsed, "archive", None),
                "agent_id": agent_id,
                "conversation_id": conversation.conversation_id,
                "conversation_started_at": started,
                "partition": day,
                "message_count": len(conversation.messages),
                "skipped": dict(conversation.skipped),
            }
        )
    return rows


def _quarantine(settings: Settings, landing: LandingFile, exc: Exception, now: datetime) -> dict[str, Any]:
    """Copy a bad file to quarantine with a reason file; the landing file stays as it is.

    Other bytes quarantined before under the same name keep their copy: these get the name with the start
    of their sha256 before the extension (`broken.46323d2a61f0.zip`).
    """
    target = path_inside(settings.quarantine_dir, *landing.relative.split("/"))
    if target.is_file() and sha256_file(target) != landing.sha256:
        target = target.with_name(f"{target.stem}.{landing.sha256[:12]}{target.suffix}")
    target.parent.mkdir(parents=True, exist_ok=True)
    copy_atomically(landing.path, target)
    reason = {
        "file": landing.relative,
        "sha256": landing.sha256,
        "format_guess": getattr(exc, "format_guess", None),
        "error": getattr(exc, "message", str(exc)),
        "location": getattr(exc, "location", None),
        "quarantined_at": now.astimezone(UTC).isoformat(),
        "quarantine_path": target.relative_to(settings.home).as_posix(),
    }
    write_text_atomically(target.with_name(target.name + ".reason.json"), json.dumps(reason, indent=2) + "\n")
    return reason


def manifest_frame(update: ManifestUpdate) -> pl.DataFrame:
    rows = sorted(
        update.rows,
        key=lambda r: (r["first_seen_at"], r["source_file"], r.get("agent_id") or "", r.get("conversation_id") or ""),
    )
    frame = pl.from_arrow(conform(LANDING_MANIFEST, rows))
    assert isinstance(frame, pl.DataFrame)
    return frame


# The manifest file's stamp: when the scan that wrote it ran. The rows first seen then are what that scan added,
# so a check run later (or alone) still knows which quarantined files were news.
SCANNED_STAMP = "memlake.manifest_scanned"


def scan_stamp(now: datetime) -> dict[str, str]:
    return {SCANNED_STAMP: _sortable(now)}


def newly_quarantined(settings: Settings, manifest: pl.DataFrame, scanned: str | None) -> list[dict[str, Any]]:
    """The files the scan stamped `scanned` quarantined, by name: file, reason, where in the file (None: the
    file as a whole) and the quarantine copy, from the reason file written beside the copy."""
    if not scanned or manifest.height == 0:
        return []
    found: dict[str, dict[str, Any]] = {}
    for row in manifest.filter(pl.col("status") == "quarantined").iter_rows(named=True):
        if row["first_seen_at"] is None or _sortable(row["first_seen_at"]) != scanned:
            continue
        copy = settings.home / row["quarantine_path"] if row["quarantine_path"] else None
        reason_file = copy.with_name(copy.name + ".reason.json") if copy is not None else None
        recorded = json.loads(reason_file.read_text()) if reason_file is not None and reason_file.is_file() else {}
        found[row["source_file"]] = {"file": row["source_file"], "reason": recorded.get("error", row["reason"]),
                                     "where": recorded.get("location"), "quarantine_path": row["quarantine_path"]}
    return [found[name] for name in sorted(found)]


# A turns file's stamp: the manifest it was built from, as the latest first_seen_at that manifest held.
MANIFEST_STAMP = "memlake.manifest_seen"


def manifest_version(manifest: pl.DataFrame) -> str:
    """The latest first_seen_at of the manifest, as `_sortable` text ("" if empty)."""
    latest = manifest["first_seen_at"].max() if manifest.height else None
    return _sortable(latest) if isinstance(latest, datetime) else ""


def _sortable(moment: datetime) -> str:
    """A moment as text in one fixed format, so that text order is time order."""
    return f"{moment.astimezone(UTC):%Y-%m-%dT%H:%M:%S.%fZ}"


def unbuilt_days(lake: Lake, manifest: pl.DataFrame) -> set[str]:
    """Days the manifest holds ingested conversations for that no turns file was built from since.

    A landing run cancelled or failed after its manifest step, or the manifest materialized alone, leaves
    its files in the manifest (so no longer new) and their days unbuilt; these are those days. A turns file
    from before the stamp counts as built.
    """
    ingested = manifest.filter(pl.col("status") == "ingested")
    if ingested.height == 0:
        return set()
    built = lake.stamps(TURNS, MANIFEST_STAMP)
    seen = ingested.group_by("partition").agg(pl.col("first_seen_at").max())
    unbuilt = set()
    for day, first_seen in seen.iter_rows():
        stamp = built.get(day, "")  # "": no turns file; None: a file from before the stamp
        if stamp is not None and stamp < _sortable(first_seen):
            unbuilt.add(day)
    return unbuilt


def plan_days(settings: Settings, files: list[LandingFile], manifest: pl.DataFrame) -> set[str]:
    """The partition days that `files` touch, without side effects (bad files touch none)."""
    fixed_days = {
        (r["agent_id"], r["conversation_id"]): r["partition"]
        for r in manifest.filter(pl.col("status").eq("ingested")).iter_rows(named=True)
    }
    first_day = date.fromisoformat(settings.partition_start_date)
    now = datetime.now(UTC)
    limits = ParseLimits.of(settings)
    days: set[str] = set()
    for landing in files:
        try:
            rows = _conversation_rows(parse_file(landing.path, limits), landing, fixed_days, first_day, now)
        except (ParseError, RejectedFile):
            continue
        days.update(r["partition"] for r in rows)
    return days
