"""Which runs are going on a home: the tags in-process runs carry, and the instance queries that read them."""

import dagster as dg

PID_TAG, HOST_TAG = "memlake/pid", "memlake/host"  # the process an in-process run runs in
TRIGGER_TAG = "memlake/trigger"
LANDING_TRIGGER = "memlake run"

GOING = [dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING,
         dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]


def landing_run_going(instance: dg.DagsterInstance, job_name: str) -> dg.DagsterRun | None:
    """A run of the landing job that is queued or running, if there is one."""
    going = instance.get_run_records(filters=dg.RunsFilter(job_name=job_name, statuses=GOING), limit=1)
    return going[0].dagster_run if going else None


def landing_in_progress(instance: dg.DagsterInstance, job_name: str) -> bool:
    """Whether a run of the landing job is queued or running."""
    return landing_run_going(instance, job_name) is not None


def memlake_run_going(instance: dg.DagsterInstance) -> bool:
    """Whether a `memlake run` (an in-process run from the command line) is running on this home."""
    going = dg.RunsFilter(tags={TRIGGER_TAG: LANDING_TRIGGER}, statuses=GOING)
    return bool(instance.get_run_records(filters=going, limit=1))
