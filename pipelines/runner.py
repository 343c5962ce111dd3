"""In-process runs of the pipeline, for `memlake run`, the benchmarks and tests.

`run_landing` asks the landing sensor's question (which files are new, which
days they touch) and materializes the manifest, those days and everything
downstream in one Dagster run (with no day touched, the facts downstream when
override or forget entries came in since their last fold), recorded in the home's Dagster instance so it
shows up in the UI. `run_reindex` rebuilds the search indexes of every day in
the lake from the lake alone.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg

from memlake.chunks import chunk_recipe, stale_chunk_days
from memlake.facts.overrides import entries_unfolded
from memlake.facts.profile import profiles_outdated
from memlake.lake import Lake
from memlake.landing import manifest_keys, new_landing_files, plan_days, unbuilt_days
from memlake.schemas import LANDING_MANIFEST, TURNS
from memlake.settings import Settings
from pipelines.partitions import register_days

DAGSTER_YAML = """\
# Written by memlake. Telemetry off; lake writers, and index writers, each run one at a time.
telemetry:
  enabled: false
concurrency:
  pools:
    default_limit: 1
"""


def ensure_dagster_home(settings: Settings) -> Path:
    """Point DAGSTER_HOME at the home's instance folder and give it memlake's dagster.yaml."""
    dagster_home = settings.dagster_home
    dagster_home.mkdir(parents=True, exist_ok=True)
    config = dagster_home / "dagster.yaml"
    if not config.exists():
        config.write_text(DAGSTER_YAML)
    os.environ["DAGSTER_HOME"] = str(dagster_home)
    os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")
    return dagster_home


# An in-process run prints INFO and above: Dagster's DEBUG lines are one per step event (a hundred a run).
CONSOLE_INFO = {"console": {"config": {"log_level": "INFO"}}}


@dataclass
class RunOutcome:
    """What one in-process run did."""

    success: bool
    new_files: list[str] = field(default_factory=list)
    days: list[str] = field(default_factory=list)
    run_id: str | None = None
    materialized: list[str] = field(default_factory=list)
    rechunked: list[str] = field(default_factory=list)  # days whose chunks were built again (a new recipe)
    refolded: bool = False  # no day touched, but the facts were folded again (new log entries, new profile rules)
    checks: dict[str, bool] = field(default_factory=dict)  # check -> passed
    failed_checks: list[str] = field(default_factory=list)


def _selection_for(days: set[str], refold: bool) -> dg.AssetSelection:
    from pipelines.definitions import facts_selection, landing_job_selection, manifest_job_selection

    if days:  # the facts are downstream of the days: they are folded again with them
        return landing_job_selection
    return manifest_job_selection | facts_selection if refold else manifest_job_selection


def run_landing(
    settings: Settings,
    resources: dict[str, object] | None = None,
    instance: dg.DagsterInstance | None = None,
    days: list[str] | None = None,
) -> RunOutcome:
    """Ingest what is new in landing (or rebuild `days`), and everything downstream, in one run."""
    settings.ensure_dirs()
    lake = Lake(settings.lake_dir)
    manifest = lake.read(LANDING_MANIFEST)
    fresh = new_landing_files(settings, manifest_keys(manifest))
    # with no days asked for: the days new files touch, and those an earlier run recorded but did not build
    touched = set(days) if days is not None else plan_days(settings, fresh, manifest) | unbuilt_days(lake, manifest)
    refold = not touched and (entries_unfolded(settings, lake) or profiles_outdated(lake))
    outcome = _run(settings, _selection_for(touched, refold), touched, lake.partitions(TURNS), "memlake run",
                   resources, instance)
    outcome.new_files = [f.relative for f in fresh]
    outcome.refolded = refold
    stale = set(stale_chunk_days(lake, chunk_recipe(settings))) if outcome.success else set()
    if stale:  # days whose chunks an older chunker or other chunk settings built: theirs, then the indexes
        from pipelines.definitions import rechunk_selection

        again = _run(settings, rechunk_selection, stale, lake.partitions(TURNS), "memlake run: chunks of another "
                     "recipe", resources, instance)
        outcome.rechunked = again.days
        outcome.success = again.success
        outcome.materialized = sorted(set(outcome.materialized) | set(again.materialized))
        outcome.checks.update(again.checks)
        outcome.failed_checks = sorted(name for name, passed in outcome.checks.items() if not passed)
    return outcome


def run_reindex(
    settings: Settings,
    resources: dict[str, object] | None = None,
    instance: dg.DagsterInstance | None = None,
    rechunk: bool = False,
) -> RunOutcome:
    """Rebuild the search indexes (chunks, episodes, facts) of every day the lake has, from the lake alone;
    with `rechunk`, `transcripts/chunks` of every day first, from the turns and today's chunk settings."""
    from pipelines.definitions import rechunk_selection, reindex_selection

    days = set(Lake(settings.lake_dir).partitions(TURNS))
    if not days:  # asked before anything is created: a mistyped home stays absent
        raise NothingToIndex(f"the lake at {settings.lake_dir} has no turns: run `memlake run` first")
    settings.ensure_dirs()
    selection = rechunk_selection if rechunk else reindex_selection
    return _run(settings, selection, days, days, "memlake reindex", resources, instance)


class NothingToIndex(ValueError):
    """A reindex of a lake with no days."""


def _run(
    settings: Settings,
    selection: dg.AssetSelection,
    days: set[str],
    lake_days: Iterable[str],
    trigger: str,
    resources: dict[str, object] | None,
    instance: dg.DagsterInstance | None,
) -> RunOutcome:
    """One in-process run of `selection` over `days`, recorded in the home's instance unless given one;
    `lake_days` (the days the lake has) are registered as partitions too."""
    from pipelines.definitions import ASSETS, CHECKS, default_resources

    if instance is None:
        ensure_dagster_home(settings)
        instance = dg.DagsterInstance.get()
    result = dg.materialize(
        [*ASSETS, *CHECKS],
        selection=selection,
        resources=resources or default_resources(settings),
        instance=instance,
        tags={**register_days(instance, days, lake_days), "memlake/trigger": trigger},
        raise_on_error=False,
        run_config={"loggers": CONSOLE_INFO},
    )
    checks = {
        f"{evaluation.asset_key.to_user_string()}:{evaluation.check_name}": evaluation.passed
        for evaluation in result.get_asset_check_evaluations()
    }
    return RunOutcome(
        success=result.success,
        days=sorted(days),
        run_id=result.run_id,
        materialized=sorted(
            {e.asset_key.to_user_string() for e in result.get_asset_materialization_events() if e.asset_key}
        ),
        checks=checks,
        failed_checks=sorted(name for name, passed in checks.items() if not passed),
    )
