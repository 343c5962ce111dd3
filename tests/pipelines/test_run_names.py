"""Runs say what started them: every run memlake starts (memlake run, reindex, distill, maintain, the landing
sensor) is a run of one of the code location's named jobs, tagged with what started it, never Dagster's
`__ephemeral_asset_job__`; a run for a bad partition key fails with the caller's mistake as its message."""

from datetime import UTC, datetime

import dagster as dg
import pytest

from memlake.settings import load_settings
from pipelines.run_status import TRIGGER_TAG, UI_TRIGGER
from tests.conftest import land
from tests.pipelines.test_definitions import home_instance
from tests.pipelines.test_sensors import sensor_result

ONE_CHAT = '{"conversation_id":"c1","role":"user","content":"I work at Acme.","created_at":"2024-03-01T10:00:00Z"}\n'


def test_every_run_memlake_starts_is_a_named_job_tagged_with_what_started_it(settings, fast_resources):
    from pipelines.definitions import defs
    from pipelines.runs import run_distill, run_landing, run_maintenance, run_reindex

    instance = dg.DagsterInstance.ephemeral()
    land(settings, "alice", "bad.jsonl", "this is not an export\n")
    only_bad = run_landing(settings, resources=fast_resources, instance=instance)
    land(settings, "alice", "a.jsonl", ONE_CHAT)
    landed = run_landing(settings, resources=fast_resources, instance=instance)
    reindexed = run_reindex(settings, resources=fast_resources, instance=instance)
    distilled = run_distill(settings, "alice", force=True, resources=fast_resources, instance=instance)
    linted = run_maintenance(settings, "lint", datetime(2024, 4, 1, tzinfo=UTC), resources=fast_resources,
                             instance=instance)
    expected = {only_bad.run_id: ("manifest_job", "memlake run"), landed.run_id: ("landing_job", "memlake run"),
                reindexed.run_id: ("reindex_job", "memlake reindex"),
                distilled.run_id: ("pending_job", "memlake distill"),
                linted.run_id: ("lint_job", "memlake maintain")}
    job_names = {job.name for job in defs.resolve_all_job_defs()}
    for run_id, (job, trigger) in expected.items():
        run = instance.get_run_by_id(str(run_id))
        assert run is not None and (run.job_name, run.tags.get(TRIGGER_TAG)) == (job, trigger)
        assert run.job_name in job_names  # the UI links the run to a job it shows
    assert not [r.job_name for r in instance.get_runs() if r.job_name.startswith("__")]


def test_the_landing_sensors_runs_say_the_sensor_started_them(settings):
    land(settings, "alice", "a.jsonl", ONE_CHAT)
    [request] = sensor_result(settings).run_requests
    assert request.job_name == "landing_job" and request.tags[TRIGGER_TAG] == "landing_sensor"


def test_a_run_for_a_bad_partition_key_fails_with_the_callers_mistake_as_its_message(settings, fast_resources):
    """It read "Error executing resource_fn on ResourceDefinition lake", the key's problem two causes down."""
    from assets.partitions import DAYS
    from pipelines.definitions import build_definitions

    instance = home_instance(settings)
    instance.add_dynamic_partitions(DAYS, ["2024-13-45"])
    job = build_definitions(fast_resources).resolve_job_def("landing_job")
    result = job.execute_in_process(partition_key="2024-13-45", instance=instance, raise_on_error=False)
    assert not result.success
    failures = [event for event in result.all_events if event.is_failure]
    assert failures
    for event in failures:
        said = event.message or ""
        error = getattr(event.event_specific_data, "error", None)
        first_line = error.message.splitlines()[0] if error is not None else said
        assert "resource_fn" not in first_line and "resource_fn" not in said, (said, first_line)
    step_errors = [event.event_specific_data.error.message for event in failures  # type: ignore[union-attr]
                   if getattr(event.event_specific_data, "error", None) is not None]
    assert step_errors and all("partition key '2024-13-45' is not a day" in text for text in step_errors)
    assert load_settings(settings.home).home == settings.home


LAUNCH = """
mutation($executionParams: ExecutionParams!) {
  launchPipelineExecution(executionParams: $executionParams) {
    __typename
    ... on PythonError { message }
    ... on LaunchRunSuccess { run { runId tags { key value } } }
  }
}"""


@pytest.mark.parametrize("kind", ["lint", "consolidation"])
def test_a_sweep_launched_from_the_ui_jobs_page_says_the_ui_started_it(settings, kind):
    """The Jobs page's launchpad sends the job, its config and no tag of memlake's: its run carried no trigger."""
    from tests.pipelines.test_definitions import _graphql, home_instance

    instance = home_instance(settings)
    params = {"selector": {"jobName": f"{kind}_job", "repositoryLocationName": "<<in_process>>",
                           "repositoryName": "__repository__"},
              "runConfigData": {"ops": {"maintenance_sweep": {"config": {"kind": kind}}}}}
    _graphql(instance, LAUNCH, {"executionParams": params})
    [run] = instance.get_runs()  # created before it is handed to the launcher, whatever the launcher does
    assert (run.job_name, run.tags.get(TRIGGER_TAG)) == (f"{kind}_job", UI_TRIGGER)


def test_every_job_says_the_ui_started_a_run_unless_its_launcher_says_who_did():
    """Every way but the UI's names its trigger (memlake run, the CLI's sweeps, the sensors, the schedules): a
    job's own run tag is the UI's, which those override."""
    from pipelines.definitions import defs

    jobs = [job for job in defs.resolve_all_job_defs() if not job.name.startswith("__")]
    assert jobs and {job.name: job.run_tags.get(TRIGGER_TAG) for job in jobs} == {job.name: UI_TRIGGER
                                                                                   for job in jobs}
