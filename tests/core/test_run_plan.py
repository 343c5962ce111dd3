"""What the next run builds (`memlake.run_plan`): one decision for `memlake run` and the landing sensor."""

from pathlib import Path

import dagster as dg

from memlake.landing import LandingFile
from memlake.run_plan import LandingState, plan_run, read_landing_state
from tests.conftest import land


def a_file(name: str) -> LandingFile:
    return LandingFile(Path("/landing/alice") / name, f"alice/{name}", name * 8)


def test_new_days_unbuilt_days_and_an_unfinished_runs_days_go_in_one_run_with_the_facts_downstream():
    state = LandingState(new_files=(a_file("a"),), new_days=frozenset({"2024-03-07"}),
                         unbuilt_days=frozenset({"2024-03-01"}), unfinished_days=frozenset({"2024-02-10"}),
                         entries_unfolded=True)

    plan = plan_run(state)

    assert plan.days == {"2024-02-10", "2024-03-01", "2024-03-07"} and plan.lands
    assert not plan.refold  # the facts are downstream of the days: folded with them, not again on their own


def test_with_no_day_to_build_the_facts_are_folded_when_the_logs_the_rules_or_an_unfinished_run_ask():
    assert plan_run(LandingState(entries_unfolded=True)).refold
    assert plan_run(LandingState(profiles_outdated=True)).refold
    assert plan_run(LandingState(unfinished_days=frozenset())).refold  # it may have stopped mid-fold
    nothing = plan_run(LandingState())
    assert not (nothing.refold or nothing.lands or nothing.rechunk_days)


def test_stale_chunks_are_built_again_only_for_days_the_run_does_not_build_anyway():
    plan = plan_run(LandingState(new_days=frozenset({"2024-03-07"}),
                                 stale_chunk_days=frozenset({"2024-03-07", "2024-01-01"})))
    assert plan.rechunk_days == {"2024-01-01"}


def test_only_bad_files_land_with_no_day():
    plan = plan_run(LandingState(new_files=(a_file("broken"),)))
    assert plan.lands and not plan.days and not plan.refold


def test_the_state_is_read_from_the_home(settings):
    land(settings, "alice", "a.jsonl",
         '{"conversation_id":"c1","role":"user","content":"hi","created_at":"2024-03-01T10:00:00Z"}\n')

    state = read_landing_state(settings)
    assert [f.relative for f in state.new_files] == ["alice/a.jsonl"] and state.new_days == {"2024-03-01"}
    assert state.unfinished_days is None
    assert read_landing_state(settings, seen=[state.new_files[0].key]).new_files == ()  # already asked for


def test_the_sensor_asks_for_new_files_and_unbuilt_days_in_one_run_as_memlake_run_builds_them(
        settings, fast_resources):
    """A run stopped after its manifest step left a day unbuilt; then a new file lands. `memlake run` builds both
    days in one run; the sensor, asking the same question, asks for one run over both (it used to ask for the
    new file's day first and the unbuilt day a tick later)."""
    from pipelines.jobs import ASSETS, CHECKS, manifest_job_selection
    from pipelines.runs import run_landing
    from tests.pipelines.test_sensors import sensor_result

    land(settings, "alice", "a.jsonl",
         '{"conversation_id":"c1","role":"user","content":"hi","created_at":"2024-03-01T10:00:00Z"}\n')
    stopped = dg.materialize([*ASSETS, *CHECKS], selection=manifest_job_selection, resources=fast_resources,
                             instance=dg.DagsterInstance.ephemeral())
    assert stopped.success
    land(settings, "alice", "b.jsonl",
         '{"conversation_id":"c2","role":"user","content":"yo","created_at":"2024-03-07T10:00:00Z"}\n')

    [request] = sensor_result(settings).run_requests
    assert request.job_name == "landing_job"
    assert (request.tags["dagster/asset_partition_range_start"], request.tags["dagster/asset_partition_range_end"]) \
        == ("2024-03-01", "2024-03-07")
    assert run_landing(settings, resources=fast_resources).days == ["2024-03-01", "2024-03-07"]
