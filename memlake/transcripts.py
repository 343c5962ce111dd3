"""Turns: one row per message, built from the landing files the manifest lists for a day.

Every file that holds a conversation contributes its messages; a message seen
in several files (the same export twice, or a longer re-export) is kept once,
with the text of the newest export of its conversation (the one whose messages
reach latest; of equals, the one that arrived last), and keeps the ingested_at
of the first file that had it. A file's ingested_at is when it landed: the
manifest's first sighting, or the file's modification time if earlier, so a
lake rebuilt from the same landing files dates them as the first build did.
A landing file that is gone or changed since the manifest read it contributes
the rows built from it before: only `forget` removes memory.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import polars as pl

from memlake.landing import folder_agent, sha256_file
from memlake.parsers import ParsedFile, ParseLimits, parse_file
from memlake.settings import Settings

_NO_TIME = datetime.min.replace(tzinfo=UTC)


@dataclass
class TurnsBuild:
    """The turns of some days, and what was noticed on the way."""

    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # day -> rows
    skipped: Counter[str] = field(default_factory=Counter)
    missing_files: list[str] = field(default_factory=list)
    kept_rows: int = 0  # rows of missing files carried over from the turns built before


@lru_cache(maxsize=64)
def _parse_cached(path: str, sha256: str) -> ParsedFile:
    # sha256 is part of the key so a changed file is parsed again. No limits: the manifest accepted these
    # bytes under the limits of its day, and a limit lowered since must not break their rebuild.
    return parse_file(Path(path), ParseLimits.none())


def content_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def stable_message_id(conversation_id: str, position: int) -> str:
    """An id for a message whose source has none: stable as long as earlier messages stay."""
    return f"{conversation_id}#{position:05d}"


def build_turns(
    settings: Settings, manifest: pl.DataFrame, days: list[str],
    previous: Callable[[], pl.DataFrame] | None = None,
) -> TurnsBuild:
    """Rows of `transcripts/turns` for each of `days` (days with nothing get an empty list).

    `previous` reads the turns of those days as built before; they stand in for landing files that are gone
    or changed (read only when there is one).
    """
    build = TurnsBuild(rows={day: [] for day in days})
    before: pl.DataFrame | None = None
    wanted = manifest.filter(pl.col("status").eq("ingested") & pl.col("partition").is_in(days)).sort(
        "first_seen_at", "source_sha256"
    )
    conversation_day: dict[tuple[str, str], str] = {}
    conversation_meta: dict[tuple[str, str], dict[str, Any]] = {}
    files_seen: set[tuple[str, tuple[str, str]]] = set()
    current_sha: dict[str, str | None] = {}  # one hash per landing file, however many conversations it holds
    written: dict[str, datetime] = {}  # and one modification time
    # each file's version of each conversation: (agent, conversation), its manifest row, its messages
    versions: list[tuple[tuple[str, str], dict[str, Any], list[dict[str, Any]]]] = []

    for row in wanted.iter_rows(named=True):
        key = (row["agent_id"], row["conversation_id"])
        conversation_day[key] = row["partition"]
        file_key = row["source_sha256"]
        path = settings.landing_dir / row["source_file"]
        if row["source_file"] not in current_sha:
            current_sha[row["source_file"]] = sha256_file(path) if path.is_file() else None
            if current_sha[row["source_file"]] is not None:
                written[row["source_file"]] = datetime.fromtimestamp(path.stat().st_mtime, UTC)
        if current_sha[row["source_file"]] != row["source_sha256"]:
            build.missing_files.append(row["source_file"])
            if previous is not None:
                before = previous() if before is None else before
                kept = _built_version(before, row, conversation_meta)
                build.kept_rows += len(kept)
                versions.append((key, row, kept))
            continue
        parsed = _parse_cached(str(path), row["source_sha256"])
        # when the file landed: its first sighting, or the time it was written into landing if earlier. A
        # lake built again from the same files then dates them as before, and a forget still covers them.
        landed = min(row["first_seen_at"], written[row["source_file"]])
        conversation = next(
            (
                c
                for c in parsed.conversations
                if c.conversation_id == row["conversation_id"]
                and (c.agent_id or folder_agent(row["source_file"])) == row["agent_id"]
            ),
            None,
        )
        if conversation is None:
            continue
        if (file_key, key) not in files_seen:
            build.skipped.update(conversation.skipped)
            files_seen.add((file_key, key))
        meta = conversation_meta.setdefault(key, {"title": None, "started_at": row["conversation_started_at"]})
        meta["title"] = conversation.title or meta["title"]
        if row["conversation_started_at"] is not None and (
            meta["started_at"] is None or row["conversation_started_at"] < meta["started_at"]
        ):
            meta["started_at"] = row["conversation_started_at"]
        versions.append((key, row, [
            {
                "message_id": message.message_id or stable_message_id(row["conversation_id"], position),
                "position": position,
                "role": message.role,
                "speaker": message.speaker,
                "content": message.content,
                "created_at": message.created_at,
                "source_format": row["source_format"],
                "source_file": row["source_file"],
                "source_sha256": row["source_sha256"],
                "ingested_at": landed,
                "origin": conversation.origin,
            }
            for position, message in enumerate(conversation.messages)
        ]))

    # A conversation's versions are merged oldest first, so a message keeps the text of the newest export:
    # the one whose messages reach latest, then the one that arrived last (the sort is stable on the
    # manifest's arrival order). An older export dropped later does not bring back text edited since.
    versions.sort(key=lambda version: _latest_message(version[2]))
    # (agent, conversation) -> message_id -> merged message
    merged: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for key, _, version in versions:
        target = merged.setdefault(key, {})
        for message in version:
            earlier = target.get(message["message_id"])
            first = min(earlier["ingested_at"], message["ingested_at"]) if earlier else message["ingested_at"]
            target[message["message_id"]] = {**message, "ingested_at": first}  # the first file that had it

    for key, messages in merged.items():
        if not messages:
            continue
        agent_id, conversation_id = key
        meta = conversation_meta[key]
        started: datetime = meta["started_at"]
        ordered = sorted(
            messages.values(),
            key=lambda m: (m["created_at"] or started, m["position"], m["message_id"]),
        )
        day_rows = build.rows.setdefault(conversation_day[key], [])
        for turn_index, m in enumerate(ordered):
            day_rows.append(
                {
                    "agent_id": agent_id,
                    "conversation_id": conversation_id,
                    "message_id": m["message_id"],
                    "turn_index": turn_index,
                    "role": m["role"],
                    "speaker": m["speaker"],
                    "content": m["content"],
                    "created_at": m["created_at"] or started,
                    "created_at_inferred": m["created_at"] is None,
                    "conversation_started_at": started,
                    "title": meta["title"],
                    "source_format": m["source_format"],
                    "source_file": m["source_file"],
                    "source_sha256": m["source_sha256"],
                    "content_sha256": content_sha256(m["content"]),
                    "ingested_at": m["ingested_at"],
                    "origin": m["origin"],
                }
            )
    for day_rows in build.rows.values():
        day_rows.sort(
            key=lambda r: (r["agent_id"], r["conversation_started_at"], r["conversation_id"], r["turn_index"])
        )
    return build


def _latest_message(messages: list[dict[str, Any]]) -> datetime:
    """The latest time a version of a conversation's messages carry (the earliest moment when none does)."""
    return max((m["created_at"] for m in messages if m["created_at"] is not None), default=_NO_TIME)


def _built_version(
    previous: pl.DataFrame,
    row: dict[str, Any],
    conversation_meta: dict[tuple[str, str], dict[str, Any]],
) -> list[dict[str, Any]]:
    """The turns built before from a landing file that is gone or changed, as its parse would have given them."""
    built = previous.filter(
        (pl.col("agent_id") == row["agent_id"]) & (pl.col("conversation_id") == row["conversation_id"])
        & (pl.col("source_file") == row["source_file"]) & (pl.col("source_sha256") == row["source_sha256"])
    )
    messages = []
    for turn in built.iter_rows(named=True):
        messages.append({
            "message_id": turn["message_id"],
            "position": turn["turn_index"],
            "role": turn["role"],
            "speaker": turn["speaker"],
            "content": turn["content"],
            "created_at": None if turn["created_at_inferred"] else turn["created_at"],
            "source_format": turn["source_format"],
            "source_file": turn["source_file"],
            "source_sha256": turn["source_sha256"],
            "ingested_at": turn["ingested_at"],
            "origin": turn["origin"],
        })
        started = row["conversation_started_at"] or turn["conversation_started_at"]
        meta = conversation_meta.setdefault((row["agent_id"], row["conversation_id"]),
                                            {"title": None, "started_at": started})
        meta["title"] = meta["title"] or turn["title"]
    return messages
