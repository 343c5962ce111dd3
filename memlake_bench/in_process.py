"""The benchmarks' runs of the pipeline (`memlake_bench.pipeline.HomePipeline`) over the product's own in-process
runs (`pipelines.runs`): the benchmarks depend on the product, never the reverse."""

from __future__ import annotations

import dagster as dg

from memlake.settings import Settings
from memlake_bench.pipeline import HomeRun
from pipelines.runs import RunOutcome, run_landing, run_reindex
from resources import build_resources


class InProcessHomePipeline:
    """Each run in process, on an instance of its own that is gone with it, so a benchmark's home leaves nothing
    in a Dagster home."""

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
    event = instance.get_latest_materialization_event(dg.AssetKey(["search", "chunk_index"]))
    metadata = event.asset_materialization.metadata if event and event.asset_materialization else {}
    numbers = {key: float(value.value) for key, value in metadata.items()  # type: ignore[arg-type]
               if isinstance(value.value, int | float) and not isinstance(value.value, bool)}
    return HomeRun(success=outcome.success, detail=str(outcome), step_seconds=steps, chunk_index=numbers)
