"""The maintenance sweeps' schedules: a daily consolidation and a nightly lint, each as of its tick's time."""

import dagster as dg

from pipelines.jobs import consolidation_job, lint_job, sweep_run_config
from pipelines.run_status import TRIGGER_TAG


@dg.schedule(job=consolidation_job, cron_schedule="0 3 * * *", execution_timezone="UTC",
             default_status=dg.DefaultScheduleStatus.RUNNING,
             description="Consolidate every agent's memory daily at 03:00 UTC, as of the tick's time.")
def daily_consolidation(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
    return dg.RunRequest(run_config=sweep_run_config("consolidation", context.scheduled_execution_time.isoformat()),
                         tags={TRIGGER_TAG: "daily_consolidation schedule"})


@dg.schedule(job=lint_job, cron_schedule="0 2 * * *", execution_timezone="UTC",
             default_status=dg.DefaultScheduleStatus.RUNNING,
             description="Lint every agent's memory nightly at 02:00 UTC, as of the tick's time.")
def nightly_lint(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
    return dg.RunRequest(run_config=sweep_run_config("lint", context.scheduled_execution_time.isoformat()),
                         tags={TRIGGER_TAG: "nightly_lint schedule"})


SCHEDULES = [daily_consolidation, nightly_lint]
