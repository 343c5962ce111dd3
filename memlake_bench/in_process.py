"""The benchmarks' runs of the pipeline (`memlake_bench.pipeline.HomePipeline`) over the product's own in-process
runs (`pipelines.runs`): the benchmarks depend on the product, never the reverse."""

from __future__ import annotations

import dagster as dg

from assets.shared import said_run_totals
from memlake.settings import Settings
from memlake_bench.pipeline import HomeRun
from pipelines.runs import RunOutcome, run_landing, run_reindex
from resources import build_resources


class InProcessHomePipeline:
    """Each run in process, on an instance of its own that is gone with it, so a benchmark's home leaves nothing
    in a Dagster home; but days built at once (`run_workers` > 1), whose runs in other processes share the home's
    instance."""

    def land(self, settings: Settings) -> HomeRun:
        if settings.run_workers > 1:  # days built at once: runs in other processes share the home's instance
            outcome = run_landing(settings, resources=build_resources(settings))
            with dg.DagsterInstance.get() as instance:  # the home's (the run pointed DAGSTER_HOME there)
                return _home_run(outcome, instance)
        instance = dg.DagsterInstance.ephemeral()
        return _home_run(run_landing(settings, resources=build_resources(settings), instance=instance), instance)

    def reindex(self, settings: Settings) -> HomeRun:
        instance = dg.DagsterInstance.ephemeral()
        return _home_run(run_reindex(settings, resources=build_resources(settings), instance=instance), instance)


IN_PROCESS = InProcessHomePipeline()


def _home_run(outcome: RunOutcome, instance: dg.DagsterInstance) -> HomeRun:
    steps: dict[str, float] = {}  # a step of several runs (days built at once): its seconds summed over them
    for run_id in outcome.run_ids:
        for s in instance.get_run_step_stats(run_id):
            steps[s.step_key] = steps.get(s.step_key, 0.0) + (s.end_time or 0.0) - (s.start_time or 0.0)
    return HomeRun(success=outcome.success, detail=str(outcome), step_seconds=steps,
                   chunk_index=_chunk_index_figures(outcome.run_ids, instance))


def _chunk_index_figures(run_ids: list[str], instance: dg.DagsterInstance) -> dict[str, float]:
    """The chunk index step's numeric figures over the runs: a run of several days says its totals in its log (each
    day shows only its own), summed over the runs that built days at once; a run of one day has them as metadata."""
    key = dg.AssetKey(["search", "chunk_index"])
    numbers: dict[str, float] = {}
    for run_id in run_ids:
        for name, value in said_run_totals((entry.message for entry in instance.all_logs(run_id)),
                                           key.to_user_string()).items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                numbers[name] = numbers.get(name, 0.0) + float(value)
    if numbers:
        return numbers
    event = instance.get_latest_materialization_event(key)
    metadata = event.asset_materialization.metadata if event and event.asset_materialization else {}
    return {name: float(value.value) for name, value in metadata.items()  # type: ignore[arg-type]
            if isinstance(value.value, int | float) and not isinstance(value.value, bool)}
