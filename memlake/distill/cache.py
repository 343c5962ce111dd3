"""The distillation result cache: `episodes/distill_cache` in the lake.

One row per (prompt version, distiller, conversation content hash): the
validated `DistilledSession` as JSON. A rerun or a backfill over unchanged
conversations finds its results here and calls no model; a changed
conversation has a new content hash and costs exactly one (logical) call.

The table is partitioned by the conversation's day, like turns and episodes,
so a run reads and rewrites only the days it works on. A partition keeps the
results of conversations still in that day's turns (every distiller and
content version of them); results of conversations gone from turns (forgotten)
are dropped when the day is next rewritten.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import polars as pl

from memlake.distill.models import Conversation, DistilledSession
from memlake.lake import Lake
from memlake.schemas import DISTILL_CACHE


def content_hash(conversation: Conversation) -> str:
    """sha256 of what distillation sees: ids, roles, speakers, times and texts, in order."""
    payload = {
        "agent_id": conversation.agent_id,
        "conversation_id": conversation.conversation_id,
        "title": conversation.title,
        "messages": [
            [m.message_id, m.role, m.speaker, m.created_at.isoformat(), m.content] for m in conversation.messages
        ],
    }
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()


def cache_key(prompt_version: str | None, distiller: str, content: str) -> str:
    """The cache key of (prompt version, model or offline distiller version, content hash)."""
    return hashlib.sha256(f"{prompt_version or ''}\x1f{distiller}\x1f{content}".encode()).hexdigest()


class ResultCache:
    """The cached results of some days, plus what this run adds."""

    def __init__(self, rows: pl.DataFrame) -> None:
        self._rows: dict[str, dict[str, Any]] = {}
        self._day: dict[str, str] = {}
        for row in rows.iter_rows(named=True):
            self._rows[row["cache_key"]] = row
            self._day[row["cache_key"]] = row.get("day") or ""
        self._dirty: set[str] = set()

    @classmethod
    def load(cls, lake: Lake, days: Iterable[str]) -> ResultCache:
        return cls(lake.read(DISTILL_CACHE, days=list(days)))

    def __len__(self) -> int:
        return len(self._rows)

    def get(self, key: str) -> DistilledSession | None:
        row = self._rows.get(key)
        if row is None:
            return None
        try:
            return DistilledSession.model_validate_json(row["result"])
        except ValueError:
            return None  # an entry written by an older model of the result: distil again

    def put(self, key: str, day: str, conversation: Conversation, content: str, distiller: str,
            prompt_version: str | None, result: DistilledSession, created_at: datetime,
            usage: dict[str, int] | None = None) -> None:
        usage = usage or {}
        self._rows[key] = {
            "cache_key": key,
            "agent_id": conversation.agent_id,
            "conversation_id": conversation.conversation_id,
            "content_hash": content,
            "distiller": distiller,
            "prompt_version": prompt_version,
            "result": result.model_dump_json(),
            "created_at": created_at,
            "requests": usage.get("requests", 0),
            "prompt_tokens": usage.get("prompt_tokens", 0),
            "completion_tokens": usage.get("completion_tokens", 0),
        }
        self._day[key] = day
        self._dirty.add(day)

    def write(self, lake: Lake, live: dict[str, set[tuple[str, str]]]) -> list[str]:
        """Rewrite the days that changed; `live` maps a day to the (agent, conversation) pairs still there.

        A day is rewritten when this run added results to it or when it holds
        results of conversations no longer in its turns. Returns the days written.
        """
        by_day: dict[str, list[dict[str, Any]]] = {}
        stale_days: set[str] = set()
        for key, row in self._rows.items():
            day = self._day[key]
            if day in live and (row["agent_id"], row["conversation_id"]) not in live[day]:
                stale_days.add(day)
                continue
            by_day.setdefault(day, []).append(row)
        written = []
        for day in sorted((self._dirty | stale_days) - {""}):
            rows = sorted(by_day.get(day, []), key=lambda r: (r["agent_id"], r["conversation_id"], r["cache_key"]))
            lake.write_partition(DISTILL_CACHE, day, rows)
            written.append(day)
        self._dirty.clear()
        return written
