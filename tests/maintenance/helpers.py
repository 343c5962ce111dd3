"""Facts and episodes written straight into a home's lake, for the maintenance tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import polars as pl

from memlake.lake import Lake
from memlake.schemas import EPISODES, FACT_STATUS, FACTS, TURNS
from memlake.settings import Settings

AS_OF = datetime(2025, 6, 1, tzinfo=UTC)
AGENT = "ana"


def days_ago(days: float) -> datetime:
    return AS_OF - timedelta(days=days)


def fact(fact_id: str, content: str, *, said_days_ago: float = 1, type: str = "fact",  # noqa: A002
         subject: str = "user", slot: str | None = None, value: str | None = None, importance: float = 0.6,
         override: bool = False, agent_id: str = AGENT, status: str = "active") -> dict[str, Any]:
    said = days_ago(said_days_ago)
    return {
        "fact_id": fact_id, "version": 1, "agent_id": agent_id, "type": type, "subject": subject, "slot": slot,
        "value": value, "content": content, "confidence": 0.9, "importance": importance, "tags": [],
        "valid_from": said, "valid_until": None, "created_at": said, "ingested_at": said,
        "source_conversation_ids": [f"c-{fact_id}"], "source_message_ids": [f"m-{fact_id}"], "source_count": 1,
        "confirmation_count": 0, "last_confirmed_at": None, "status": status, "superseded_by": None,
        "source_interface": "override" if override else "extraction", "override_ids": ["o1"] if override else [],
    }


def episode(conversation_id: str, summary: str, *, ended_days_ago: float = 1, agent_id: str = AGENT,
            topics: list[str] | None = None) -> dict[str, Any]:
    ended = days_ago(ended_days_ago)
    return {"agent_id": agent_id, "conversation_id": conversation_id, "title": conversation_id,
            "conversation_started_at": ended - timedelta(hours=1), "conversation_ended_at": ended,
            "summary": summary, "topics": topics or [], "decisions": [], "action_items": [], "key_dates": [],
            "entities": [], "relations": [], "fact_candidates": [], "salience": 0.5, "message_ids": ["m1"],
            "content_hash": conversation_id, "distiller": "test", "prompt_version": "t", "ingested_at": ended}


def write_home(settings: Settings, facts: list[dict[str, Any]], episodes: list[dict[str, Any]] | None = None,
               turns_of: list[str] | None = None) -> Lake:
    """The facts (and episodes; turns for the conversations `turns_of`, default every episode's) in the lake."""
    lake = Lake(settings.lake_dir)
    lake.write(FACTS, facts)
    episodes = episodes or []
    by_day: dict[str, list[dict[str, Any]]] = {}
    for row in episodes:
        by_day.setdefault(row["conversation_started_at"].date().isoformat(), []).append(row)
    for day, rows in by_day.items():
        lake.write_partition(EPISODES, day, rows)
    conversations = turns_of if turns_of is not None else [e["conversation_id"] for e in episodes]
    if conversations:
        lake.write_partition(TURNS, "2025-01-01", [
            {"agent_id": AGENT, "conversation_id": c, "message_id": "m1", "role": "user", "content": "hi"}
            for c in conversations])
    return lake


def status_rows(lake: Lake, kind: str) -> dict[str, dict[str, Any]]:
    """fact_id -> its row of the latest sweep of `kind`."""
    rows = lake.read(FACT_STATUS).filter(pl.col("kind") == kind)
    latest = rows["as_of"].max()
    return {r["fact_id"]: r for r in rows.filter(pl.col("as_of") == latest).iter_rows(named=True)}
