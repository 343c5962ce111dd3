"""A maintenance sweep from the lake to its tables, as `memlake maintain` and the Dagster asset run it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import polars as pl

from memlake.errors import BadRequest
from memlake.inputs import log_dir, log_files, read_entries
from memlake.lake import Lake, query
from memlake.maintenance.config import MaintenanceConfig, timed
from memlake.maintenance.consolidate import consolidate
from memlake.maintenance.judge import OFFLINE_JUDGE, ModelJudge
from memlake.maintenance.lint import Embed, lint
from memlake.maintenance.tables import write_sweep
from memlake.schemas import ACCESS, EPISODES, FACTS, JUDGE_CACHE, SWEEP_KINDS
from memlake.settings import Settings


@dataclass(frozen=True)
class SweepReport:
    """What a sweep did: its id, kind, as_of, counts per step and durations per step (seconds)."""

    sweep_id: str
    kind: str
    as_of: datetime
    counts: dict[str, int]
    durations: dict[str, float]
    judge: str | None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> SweepReport:
        return cls(row["sweep_id"], row["kind"], row["as_of"], json.loads(row["counts"]),
                   json.loads(row["durations"]), row["judge"])

    def markdown(self) -> str:
        """The report as a Markdown table: one row per count, then the durations."""
        lines = [f"**{self.kind} sweep** `{self.sweep_id}` as of {self.as_of.isoformat()}", "",
                 "| step | count |", "| --- | --- |"]
        lines += [f"| {name} | {value} |" for name, value in self.counts.items()]
        lines += ["", "| step | seconds |", "| --- | --- |"]
        lines += [f"| {name} | {value:.3f} |" for name, value in self.durations.items()]
        if self.judge:
            lines += ["", f"judges: {self.judge}"]
        return "\n".join(lines)


def fact_uses(settings: Settings, as_of: datetime) -> pl.DataFrame:
    """Per agent and `fact_id@version`: its uses in the access log up to `as_of`, and the last one."""
    folder = log_dir(settings, ACCESS)
    log = pl.from_arrow(read_entries(folder, log_files(folder), ACCESS))
    assert isinstance(log, pl.DataFrame)
    log = log.filter((pl.col("scope") == "facts") & (pl.col("accessed_at") <= as_of))
    return log.group_by("agent_id", "object_id").agg(pl.len().cast(pl.Int32).alias("use_count"),
                                                    pl.col("accessed_at").max().alias("last_used_at"))


def conversations_with_turns(lake: Lake) -> set[tuple[str, str]]:
    found = query(lake.connect(), "SELECT DISTINCT agent_id, conversation_id FROM transcripts.turns")
    return {(a, c) for a, c in found.iter_rows()}


def run_sweep(settings: Settings, kind: str, as_of: datetime, embed: Embed | None = None,
              model_judge: ModelJudge | None = None) -> SweepReport:
    """One sweep of `kind` over every agent as of `as_of`, written to `maintenance/*`."""
    if kind not in SWEEP_KINDS:
        raise BadRequest(f"unknown sweep kind {kind!r}: one of {', '.join(SWEEP_KINDS)}")
    lake = Lake.of(settings)
    config = MaintenanceConfig.from_settings(settings)
    durations: dict[str, float] = {}
    with timed(durations, "read"):
        facts, episodes, uses = lake.read(FACTS), lake.read(EPISODES), fact_uses(settings, as_of)
    if kind == "consolidation":
        result: Any = consolidate(facts, episodes, uses, as_of, config)
        judge = None
    else:
        if model_judge is not None:
            model_judge.cache = {r["cache_key"]: r for r in lake.read(JUDGE_CACHE).iter_rows(named=True)}
        result = lint(facts, episodes, conversations_with_turns(lake), uses, as_of, config, embed, model_judge)
        judge = OFFLINE_JUDGE + (f", {model_judge.name}" if model_judge is not None else "")
        if model_judge is not None:
            result.counts.update({f"judge_{k}": v for k, v in model_judge.stats.items()})
    if model_judge is not None and model_judge.used:
        cached = {**model_judge.cache, **model_judge.used}
        lake.write(JUDGE_CACHE, [cached[k] for k in sorted(cached)])
    row = write_sweep(lake, kind, as_of, result.facts, result.episodes, result.counts,
                      {**durations, **result.durations}, judge, result.edges if kind == "lint" else None)
    return SweepReport.from_row(row)
