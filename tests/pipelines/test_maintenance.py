"""The maintenance sweeps in Dagster: the schedules are in the code location, `memlake maintain` runs a sweep
and prints its counts, the sweep's asset metadata carries its report, and the memory-health checks run."""

from __future__ import annotations

from datetime import UTC, datetime

import dagster as dg
import polars as pl
import pytest

from memlake.lake import Lake
from memlake.schemas import AUDIT, FACT_STATUS, REPORTS
from pipelines.definitions import defs
from tests.maintenance.helpers import AS_OF, fact, write_home
from tests.maintenance.test_lint import PLANTED, UNRELATED
from tests.pipelines.test_cli import typed


def test_the_daily_consolidation_and_nightly_lint_schedules_are_in_the_definitions() -> None:
    consolidation = defs.resolve_schedule_def("daily_consolidation")
    lint = defs.resolve_schedule_def("nightly_lint")
    assert (consolidation.job_name, consolidation.cron_schedule) == ("consolidation_job", "0 3 * * *")
    assert (lint.job_name, lint.cron_schedule) == ("lint_job", "0 2 * * *")
    assert consolidation.default_status == lint.default_status == dg.DefaultScheduleStatus.RUNNING
    tick = datetime(2026, 11, 25, 2, 0, tzinfo=UTC)
    [request] = lint.evaluate_tick(dg.build_schedule_context(scheduled_execution_time=tick)).run_requests or []
    assert request.run_config == {"ops": {"maintenance_sweep": {"config": {"kind": "lint",
                                                                          "as_of": tick.isoformat()}}}}
    job = defs.resolve_job_def("lint_job")
    assert {k.to_user_string() for k in job.asset_layer.executable_asset_keys} == {
        "maintenance/fact_status", "maintenance/reports", "maintenance/audit", "maintenance/contradictions"}


def test_memlake_maintain_lint_prints_each_steps_counts_and_the_health_checks(settings, monkeypatch, capsys) -> None:
    write_home(settings, PLANTED + UNRELATED)
    code, out = typed(monkeypatch, capsys, "maintain", "--lint", "--as-of", AS_OF.isoformat(),
                      "--home", str(settings.home))
    assert code == 0, out
    assert "lint-2025-06-01T00:00:00.000000Z" in out
    assert "  contradictions            3" in out and "  stale                     0" in out
    assert "check open_contradictions: WARN (6 conflicting current facts: born1: Leela was born on 1994-05-02.; " in out
    assert "check recent_sweep: ok" in out
    lake = Lake(settings.lake_dir)
    assert lake.read(REPORTS)["kind"].to_list() == ["lint"]
    assert lake.read(FACT_STATUS).filter(pl.col("flag") == "conflicting").height == 6


def test_memlake_maintain_consolidates_and_the_sweep_metadata_is_its_report(settings, monkeypatch, capsys) -> None:
    write_home(settings, [fact("old", "The user went to a concert.", type="event", said_days_ago=120)])
    code, out = typed(monkeypatch, capsys, "maintain", "--as-of", AS_OF.isoformat(), "--home", str(settings.home))
    assert code == 0, out
    assert "  evicted          1" in out
    assert Lake(settings.lake_dir).read(AUDIT)["new_value"].to_list() == ["evicted"]
    instance = dg.DagsterInstance.get()  # the home's instance, where `memlake maintain` recorded its run
    shown = sweep_metadata(instance)
    report = shown["reports"]["report"]
    assert "| evicted | 1 |" in str(report) and "**consolidation sweep**" in str(report)


def sweep_metadata(instance: dg.DagsterInstance) -> dict[str, dict[str, object]]:
    """Each maintenance table's latest materialization metadata, by table."""
    shown = {}
    for table in ("fact_status", "reports", "audit", "contradictions"):
        event = instance.get_latest_materialization_event(dg.AssetKey(["maintenance", table]))
        assert event is not None and event.asset_materialization is not None
        shown[table] = {name: value.value for name, value in event.asset_materialization.metadata.items()}
    return shown


@pytest.mark.parametrize("kind", ["lint", "consolidation"])
def test_the_sweeps_report_is_on_the_reports_node_and_each_table_shows_only_its_own(settings, monkeypatch, capsys,
                                                                                    kind) -> None:
    """The operator clicks "Materialize" on maintenance/reports and reads the report there: it was on
    maintenance/fact_status. Each table shows what is true of it: the report and the step counts on reports, the
    changes on audit, the judged contradictions on contradictions, and on fact_status no other table's figures."""
    write_home(settings, PLANTED + UNRELATED)
    flags = ["--lint"] if kind == "lint" else []
    code, out = typed(monkeypatch, capsys, "maintain", *flags, "--as-of", AS_OF.isoformat(),
                      "--home", str(settings.home))
    assert code == 0, out
    shown = sweep_metadata(dg.DagsterInstance.get())
    sweep_id = f"{kind}-2025-06-01T00:00:00.000000Z"
    assert {table: meta["sweep_id"] for table, meta in shown.items()} == dict.fromkeys(shown, sweep_id)
    assert f"**{kind} sweep** `{sweep_id}`" in str(shown["reports"]["report"])
    assert any(name.startswith("count/") for name in shown["reports"])
    for table in ("fact_status", "audit", "contradictions"):  # the report, and the sweep's counts, once
        assert "report" not in shown[table] and not [n for n in shown[table] if n.startswith("count/")], table
    assert shown["fact_status"]["kind"] == kind


@pytest.mark.parametrize("as_of", ["last tuesday", "2025-13-01"])
def test_a_bad_as_of_is_one_error_line(settings, monkeypatch, capsys, as_of) -> None:
    write_home(settings, [])
    code, out = typed(monkeypatch, capsys, "maintain", "--as-of", as_of, "--home", str(settings.home))
    assert code == 2 and out.startswith("error: ") and "Traceback" not in out


def test_the_open_contradictions_check_names_the_conflicting_facts(settings) -> None:
    from assets.maintenance import open_contradictions
    from memlake.maintenance.sweep import run_sweep
    from resources.lake import LakeResource

    write_home(settings, PLANTED + UNRELATED)
    run_sweep(settings, "lint", AS_OF)

    result = open_contradictions(lake=LakeResource(home=str(settings.home)))

    assert not result.passed
    named = result.metadata["conflicting"].value
    assert {row["fact_id"] for row in named} == {"job1", "job2", "veg", "steak", "born1", "born2"}
    veg = next(row for row in named if row["fact_id"] == "veg")
    assert veg["agent_id"] == "ana" and veg["content"] == "The user is vegetarian."
    assert veg["with"] == ["steak"] and "diet" in veg["reason"]
    assert "veg" in result.metadata["preview"].value  # a table in the UI
    assert "veg: The user is vegetarian." in (result.description or "")  # what `memlake maintain` prints


def test_a_long_conflicting_fact_is_named_short(settings) -> None:
    from assets.maintenance import open_contradictions
    from memlake.maintenance.sweep import run_sweep
    from resources.lake import LakeResource

    long_one = "The user works at Google " + "and talks about it at length " * 20 + "."
    write_home(settings, [fact("job1", long_one, slot="employer", value="Google", said_days_ago=20),
                          fact("job2", "The user works at Acme Robotics.", said_days_ago=5)])
    run_sweep(settings, "lint", AS_OF)

    named = open_contradictions(lake=LakeResource(home=str(settings.home))).metadata["conflicting"].value
    shown = next(row for row in named if row["fact_id"] == "job1")["content"]
    assert shown.startswith("The user works at Google") and shown.endswith("…") and len(shown) <= 81


def test_materializing_the_sweep_without_a_kind_is_refused_before_it_runs(settings, fast_resources) -> None:
    """"Materialize" on maintenance/reports in the UI silently ran a consolidation sweep (decay, evict) for an
    operator who wanted lint: the kind has no default, so the UI asks for it and a launch without it fails."""
    from assets.maintenance import maintenance_sweep

    write_home(settings, [fact("old", "The user went to a concert.", type="event", said_days_ago=120)])
    field = maintenance_sweep.op.config_schema.config_type.fields["kind"]
    assert field.is_required and not field.default_provided  # the launchpad opens, asking for it
    with pytest.raises(dg.DagsterInvalidConfigError, match="kind") as refused:
        dg.materialize([maintenance_sweep], resources=fast_resources)
    assert not Lake(settings.lake_dir).files(REPORTS)  # nothing swept, nothing evicted
    # the launchpad's example (and "Scaffold missing config") is the sweep that only flags, never the one that evicts
    assert "{'kind': 'lint'}" in str(refused.value) and "'kind': 'consolidation'" not in str(refused.value)


@pytest.mark.parametrize("kind", ["evict", "Lint", ""])
def test_a_sweep_kind_that_is_not_one_is_refused_by_the_config(settings, fast_resources, kind) -> None:
    from assets.maintenance import SWEEP_OP, maintenance_sweep

    write_home(settings, [])
    with pytest.raises(dg.DagsterInvalidConfigError):
        dg.materialize([maintenance_sweep], resources=fast_resources,
                       run_config={"ops": {SWEEP_OP: {"config": {"kind": kind}}}})
    assert not Lake(settings.lake_dir).files(REPORTS)


@pytest.mark.parametrize("kind", ["consolidation", "lint"])
def test_a_sweep_of_a_kind_said_runs_that_kind(settings, fast_resources, kind) -> None:
    from assets.maintenance import SWEEP_OP, maintenance_sweep

    write_home(settings, [fact("old", "The user went to a concert.", type="event", said_days_ago=120)])
    result = dg.materialize([maintenance_sweep], resources=fast_resources,
                            run_config={"ops": {SWEEP_OP: {"config": {"kind": kind, "as_of": AS_OF.isoformat()}}}})
    assert result.success
    assert Lake(settings.lake_dir).read(REPORTS)["kind"].to_list() == [kind]


@pytest.mark.parametrize("as_of", ["yesterday", "2024-13-01", "2024-10-21 25:00", "21/10/2024"])
def test_a_sweep_as_of_that_is_not_a_time_is_refused_at_launch_naming_it(settings, fast_resources, as_of) -> None:
    """A bad `as_of` typed in the launchpad started a run that failed inside its step; the config now refuses it
    before any run starts, naming the field and the value, and nothing is swept."""
    from assets.maintenance import SWEEP_OP, maintenance_sweep

    write_home(settings, [fact("old", "The user went to a concert.", type="event", said_days_ago=120)])
    instance = dg.DagsterInstance.ephemeral()
    with pytest.raises(dg.DagsterInvalidConfigError, match="as_of") as refused:
        dg.materialize([maintenance_sweep], resources=fast_resources, instance=instance,
                       run_config={"ops": {SWEEP_OP: {"config": {"kind": "lint", "as_of": as_of}}}})
    assert repr(as_of) in str(refused.value) and "ISO 8601" in str(refused.value)
    assert not instance.get_runs()  # refused at launch: no run was started to fail
    assert not Lake(settings.lake_dir).files(REPORTS)


LAUNCH = """
mutation($executionParams: ExecutionParams!) {
  launchPipelineExecution(executionParams: $executionParams) {
    __typename
    ... on PythonError { message }
    ... on RunConfigValidationInvalid { errors { message } }
    ... on LaunchRunSuccess { run { runId } }
  }
}"""


def test_the_launchpads_launch_of_a_sweep_with_a_bad_as_of_starts_no_run_and_says_why(settings) -> None:
    """As the UI launches: the GraphQL mutation its launchpad sends, against this code location."""
    from tests.pipelines.test_definitions import _graphql, home_instance

    instance = home_instance(settings)
    params = {"selector": {"jobName": "lint_job", "repositoryLocationName": "<<in_process>>",
                           "repositoryName": "__repository__"},
              "runConfigData": {"ops": {"maintenance_sweep": {"config": {"kind": "lint", "as_of": "yesterday"}}}}}
    answer = _graphql(instance, LAUNCH, {"executionParams": params})["launchPipelineExecution"]
    assert answer["__typename"] != "LaunchRunSuccess", answer  # the UI shows this error in a dialog
    assert "as_of 'yesterday' is not a time" in answer["message"] and "DagsterInvalidConfigError" in answer["message"]
    assert not instance.get_runs()
