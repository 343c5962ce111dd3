"""Which runs are going on a home: the tags in-process runs carry, and the instance queries that read them."""

import dagster as dg

PID_TAG, HOST_TAG = "memlake/pid", "memlake/host"  # the process an in-process run runs in
BATCH_TAG = "memlake/batch"  # the runs of one `memlake run` that built its days at once (`run_workers` > 1)
TRIGGER_TAG = "memlake/trigger"
LANDING_TRIGGER = "memlake run"
SENSOR_TRIGGER = "landing_sensor"  # the trigger tag of the landing sensor's runs
UI_TRIGGER = "ui"  # launched from the UI (its Materialize, its Jobs page): every job's own run tag (pipelines.jobs)
AUTOMATION_TRIGGER = "memlake_automation"  # the automation sensor's runs (their job is Dagster's own)

GOING = [dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING,
         dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]


def landing_run_going(instance: dg.DagsterInstance, job_name: str) -> dg.DagsterRun | None:
    """A run of the landing job that Dagster launched (a sensor's, the UI's) and is queued or running, if there
    is one. `memlake run` runs the same job in its own process (tagged with it): `memlake_run_going` is its."""
    going = instance.get_run_records(filters=dg.RunsFilter(job_name=job_name, statuses=GOING))
    launched = [record.dagster_run for record in going if PID_TAG not in record.dagster_run.tags]
    return launched[0] if launched else None


def landing_in_progress(instance: dg.DagsterInstance, job_name: str) -> bool:
    """Whether a run of the landing job is queued or running."""
    return landing_run_going(instance, job_name) is not None


def memlake_run_going(instance: dg.DagsterInstance) -> bool:
    """Whether a `memlake run` (an in-process run from the command line) is running on this home."""
    going = dg.RunsFilter(tags={TRIGGER_TAG: LANDING_TRIGGER}, statuses=GOING)
    return bool(instance.get_run_records(filters=going, limit=1))
