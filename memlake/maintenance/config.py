"""The sweeps' settings, read once from `Settings` (so the steps are plain functions of their inputs)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from memlake.settings import Settings

DEFAULT_HALF_LIFE_DAYS = 90.0


@dataclass(frozen=True)
class MaintenanceConfig:
    half_life_days: dict[str, float] = field(default_factory=lambda: {
        "identity": 180.0, "fact": 90.0, "preference": 90.0, "event": 14.0})
    salience_floor: float = 0.1
    idle_days: float = 30.0
    retention_days: float | None = None
    episode_merge_jaccard: float = 0.9
    promote_episodes: int = 3
    promote_window_days: float = 30.0
    stale_half_lives: float = 2.0
    duplicate_jaccard: float = 0.6
    duplicate_cosine: float = 0.85
    contradiction_cosine: float = 0.3
    contradict_jaccard: float = 0.3
    contradiction_policy: str = "flag"
    judge_batch: int = 10

    @classmethod
    def from_settings(cls, settings: Settings) -> MaintenanceConfig:
        return cls(
            half_life_days=dict(settings.half_life_days),
            salience_floor=settings.maintenance_salience_floor,
            idle_days=settings.maintenance_idle_days,
            retention_days=settings.maintenance_retention_days,
            episode_merge_jaccard=settings.maintenance_episode_merge_jaccard,
            promote_episodes=settings.maintenance_promote_episodes,
            promote_window_days=settings.maintenance_promote_window_days,
            stale_half_lives=settings.maintenance_stale_half_lives,
            duplicate_jaccard=settings.duplicate_jaccard,
            duplicate_cosine=settings.duplicate_cosine,
            contradiction_cosine=settings.maintenance_contradiction_cosine,
            contradict_jaccard=settings.contradict_jaccard,
            contradiction_policy=settings.contradiction_policy,
            judge_batch=settings.maintenance_judge_batch,
        )

    def half_life(self, fact_type: str | None) -> float:
        return self.half_life_days.get(fact_type or "", DEFAULT_HALF_LIFE_DAYS)


@contextmanager
def timed(durations: dict[str, float], step: str) -> Iterator[None]:
    """Add the seconds the block takes to `durations[step]` (the report's durations per step)."""
    start = time.perf_counter()
    try:
        yield
    finally:
        durations[step] = round(durations.get(step, 0.0) + time.perf_counter() - start, 4)
