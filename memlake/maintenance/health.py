"""Memory health, from the latest sweeps: what the Dagster asset checks and `memlake maintain` show.

- open contradictions: current facts the latest lint sweep flagged conflicting;
- duplicate rate: the share of its current facts it flagged redundant;
- stale share: the share it flagged stale;
- hours since the latest sweep of any kind ran (wall clock: a sweep missing for 48 h is a warning).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import polars as pl

from memlake.lake import Lake
from memlake.maintenance.status import latest_fact_status
from memlake.schemas import REPORTS

MAX_HOURS_WITHOUT_SWEEP = 48.0
MAX_DUPLICATE_RATE = 0.1
MAX_STALE_SHARE = 0.5


@dataclass(frozen=True)
class Health:
    open_contradictions: int
    duplicate_rate: float
    stale_share: float
    hours_since_sweep: float | None  # None: no sweep yet
    current_facts: int


def memory_health(lake: Lake, now: datetime) -> Health:
    latest = latest_fact_status(lake)
    lint = latest.filter((pl.col("kind") == "lint") & (pl.col("status") == "active")) if latest.height else latest
    current = lint.height

    def share(flag: str) -> float:
        return round(lint.filter(pl.col("flag") == flag).height / current, 4) if current else 0.0

    reports = lake.read(REPORTS)
    last_run = reports["ran_at"].max() if reports.height else None
    hours = round((now - last_run).total_seconds() / 3600, 2) if isinstance(last_run, datetime) else None
    conflicting = lint.filter(pl.col("flag") == "conflicting").height if current else 0
    return Health(conflicting, share("redundant"), share("stale"), hours, current)
