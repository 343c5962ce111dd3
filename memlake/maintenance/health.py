"""Memory health, from the latest sweeps: what the Dagster asset checks and `memlake maintain` show.

- open contradictions: current facts the latest lint sweep flagged conflicting, each named (id, short text,
  the facts it conflicts with, why);
- duplicate rate: the share of its current facts it flagged redundant;
- stale share: the share it flagged stale;
- hours since the latest sweep of any kind ran (wall clock: a sweep missing for 48 h is a warning).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import polars as pl

from memlake.lake import Lake
from memlake.maintenance.status import latest_fact_status
from memlake.schemas import FACTS, REPORTS

MAX_HOURS_WITHOUT_SWEEP = 48.0
MAX_DUPLICATE_RATE = 0.1
MAX_STALE_SHARE = 0.5
SHORT_TEXT = 80  # characters of a conflicting fact's text a check names


@dataclass(frozen=True)
class Health:
    open_contradictions: int
    duplicate_rate: float
    stale_share: float
    hours_since_sweep: float | None  # None: no sweep yet
    current_facts: int
    # the conflicting facts by name: agent_id, fact_id, version, content (short), with (fact ids), reason
    conflicting: list[dict[str, Any]] = field(default_factory=list)


def memory_health(lake: Lake, now: datetime) -> Health:
    latest = latest_fact_status(lake)
    lint = latest.filter((pl.col("kind") == "lint") & (pl.col("status") == "active")) if latest.height else latest
    current = lint.height

    def share(flag: str) -> float:
        return round(lint.filter(pl.col("flag") == flag).height / current, 4) if current else 0.0

    reports = lake.read(REPORTS)
    last_run = reports["ran_at"].max() if reports.height else None
    hours = round((now - last_run).total_seconds() / 3600, 2) if isinstance(last_run, datetime) else None
    conflicting = _named(lake, lint.filter(pl.col("flag") == "conflicting")) if current else []
    return Health(len(conflicting), share("redundant"), share("stale"), hours, current, conflicting)


def _named(lake: Lake, flagged: pl.DataFrame) -> list[dict[str, Any]]:
    """The flagged versions with their text (cut to SHORT_TEXT characters), in agent and fact order."""
    if flagged.height == 0:
        return []
    texts = lake.read(FACTS).select("agent_id", "fact_id", "version", "content")
    rows = flagged.join(texts, on=["agent_id", "fact_id", "version"], how="left").sort("agent_id", "fact_id")
    return [{"agent_id": r["agent_id"], "fact_id": r["fact_id"], "version": r["version"],
             "content": _short(r["content"] or ""), "with": list(r["related_fact_ids"] or []), "reason": r["reason"]}
            for r in rows.iter_rows(named=True)]


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHORT_TEXT else text[: SHORT_TEXT - 1].rstrip() + "…"
