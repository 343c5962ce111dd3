"""The landing sensor asks for one run over the days new files touch, and once for what the logs or older
rules leave to rebuild; it leaves landing alone while a `memlake run` is going."""

import json
import time

import dagster as dg

from memlake.facts.profile import PROFILE_RULES, PROFILE_RULES_STAMP
from memlake.schemas import PROFILES
from pipelines.definitions import defs
from resources import LakeResource
from tests.conftest import land


def sensor_result(settings, cursor: str | None = None, runs: tuple[dg.DagsterRun, ...] = ()):
    """One tick of the landing sensor, on an instance holding `runs`."""
    sensor = defs.resolve_sensor_def("landing_sensor")
    with dg.instance_for_test() as instance:
        for run in runs:
            instance.add_run(run)
        # the sensor reads the home from its lake resource, as the code location gives it
        context = dg.build_sensor_context(instance=instance, cursor=cursor, definitions=defs,
                                          resources={"lake": LakeResource(home=str(settings.home))})
        return sensor(context)


def test_sensor_requests_one_run_over_the_touched_range(settings):
    land(settings, "alice", "a.jsonl",
         '{"conversation_id":"c1","role":"user","content":"hi","created_at":"2024-03-01T10:00:00Z"}\n'
         '{"conversation_id":"c2","role":"user","content":"yo","created_at":"2024-03-07T10:00:00Z"}\n')
    result = sensor_result(settings)

    [request] = result.run_requests
    assert request.job_name == "landing_job"
    assert request.tags["dagster/asset_partition_range_start"] == "2024-03-01"
    assert request.tags["dagster/asset_partition_range_end"] == "2024-03-07"
    [added] = result.dynamic_partitions_requests  # only days with data become partitions
    assert added.partition_keys == ["2024-03-01", "2024-03-07"]

    going = dg.DagsterRun(job_name="landing_job", status=dg.DagsterRunStatus.STARTED)
    again = sensor_result(settings, cursor=result.cursor, runs=(going,))
    assert isinstance(again, dg.SkipReason)


def test_sensor_asks_again_for_files_a_run_that_ended_before_its_manifest_step_left_out(settings):
    """A landing run cancelled before its manifest step leaves its files in the sensor's cursor and out of the
    manifest: once no landing run is going, they are new again, asked for under a new run key (Dagster runs
    a run key once)."""
    land(settings, "alice", "a.jsonl",
         '{"conversation_id":"c1","role":"user","content":"hi","created_at":"2024-03-01T10:00:00Z"}\n')
    first = sensor_result(settings)
    [request] = first.run_requests
    cancelled = dg.DagsterRun(job_name="landing_job", status=dg.DagsterRunStatus.CANCELED,
                              tags={"dagster/run_key": request.run_key})

    again = sensor_result(settings, cursor=first.cursor, runs=(cancelled,))
    [retry] = again.run_requests
    assert retry.job_name == "landing_job" and retry.run_key == f"{request.run_key}:again1"
    assert retry.tags["memlake/new_files"] == "1"


def test_sensor_leaves_landing_alone_while_a_memlake_run_is_going_and_memlake_run_waits_for_its_runs(settings):
    """One file dropped while `memlake dev` runs, and `memlake run` typed too, used to make four runs (both
    ingested it, then the automation followed each): each now waits for the other."""
    from pipelines.runs import LANDING_TRIGGER, TRIGGER_TAG, wait_for_sensor_runs

    land(settings, "alice", "a.jsonl",
         '{"conversation_id":"c1","role":"user","content":"hi","created_at":"2024-03-01T10:00:00Z"}\n')
    cli_run = dg.DagsterRun(job_name="__ephemeral_asset_job__", status=dg.DagsterRunStatus.STARTED,
                            tags={TRIGGER_TAG: LANDING_TRIGGER})
    skipped = sensor_result(settings, runs=(cli_run,))
    assert isinstance(skipped, dg.SkipReason) and "`memlake run` is going" in str(skipped.skip_message)
    assert sensor_result(settings).run_requests  # once it has ended, the file is asked for

    from pipelines.runs import ensure_dagster_home

    ensure_dagster_home(settings)
    instance = dg.DagsterInstance.get()
    sensor_run = dg.DagsterRun(job_name="landing_job", status=dg.DagsterRunStatus.STARTED)
    instance.add_run(sensor_run)
    said: list[str] = []

    def end_it(message: str) -> None:  # what the user reads; then the sensor's run ends
        said.append(message)
        instance.report_run_failed(instance.get_run_by_id(sensor_run.run_id))

    from dagster._daemon.types import DaemonHeartbeat

    def beat() -> None:  # `memlake dev`'s daemon is alive
        instance.add_daemon_heartbeat(DaemonHeartbeat(time.time(), "SENSOR", None, None))

    beat()
    wait_for_sensor_runs(settings, end_it, poll_seconds=0.01)
    assert said == [f"waiting for landing run {sensor_run.run_id} (started by the landing sensor) to end"]

    # a run left marked as going by a `memlake dev` that was killed: no daemon beats, nothing to wait for
    orphan = dg.DagsterRun(job_name="landing_job", status=dg.DagsterRunStatus.STARTED)
    instance.add_run(orphan)
    said.clear()
    instance.add_daemon_heartbeat(DaemonHeartbeat(time.time() - 600, "SENSOR", None, None))
    wait_for_sensor_runs(settings, said.append, poll_seconds=0.01)
    assert said == [f"landing run {orphan.run_id} is marked as going, but no Dagster daemon is running: not waiting "
                    "for it"]


def test_sensor_sends_a_drop_of_only_bad_files_to_the_manifest(settings):
    land(settings, "alice", "bad.json", "not json at all")
    result = sensor_result(settings)

    [request] = result.run_requests
    assert request.job_name == "manifest_job"
    assert "dagster/asset_partition_range_start" not in request.tags
    assert not result.dynamic_partitions_requests
    assert len(json.loads(result.cursor)) == 1


def test_sensor_asks_once_for_the_days_whose_chunks_another_recipe_built(settings):
    """With no new landing file, days whose chunks an older chunker (no stamp: a home from before the
    stamp) or other chunk settings built are built again, in one rechunk run over them."""
    from memlake.chunks import RECIPE_STAMP, chunk_recipe
    from memlake.lake import Lake
    from memlake.schemas import CHUNKS

    lake = Lake(settings.lake_dir)
    empty = lake.empty(CHUNKS)
    lake.write_partitions(CHUNKS, {"2024-03-01": empty})  # no stamp
    lake.write_partitions(CHUNKS, {"2024-03-02": empty}, stamp={RECIPE_STAMP: chunk_recipe(settings)})
    lake.write_partitions(CHUNKS, {"2024-03-03": empty}, stamp={RECIPE_STAMP: "memlake-chunks-2 window=2"})

    result = sensor_result(settings)
    [request] = result.run_requests
    assert request.job_name == "rechunk_job"
    assert (request.tags["dagster/asset_partition_range_start"], request.tags["dagster/asset_partition_range_end"]) \
        == ("2024-03-01", "2024-03-03")
    assert request.run_key == sensor_result(settings).run_requests[0].run_key  # the same ask: Dagster runs it once

    # while a landing run is going it rebuilds (some of) those days itself: no second run beside it
    going = dg.DagsterRun(job_name="landing_job", run_id="r1", status=dg.DagsterRunStatus.STARTED)
    assert isinstance(sensor_result(settings, runs=(going,)), dg.SkipReason)
    done = dg.DagsterRun(job_name="landing_job", run_id="r1", status=dg.DagsterRunStatus.SUCCESS)
    assert sensor_result(settings, runs=(done,)).run_requests

    lake.write_partitions(CHUNKS, {day: empty for day in ("2024-03-01", "2024-03-03")},
                          stamp={RECIPE_STAMP: chunk_recipe(settings)})
    assert isinstance(sensor_result(settings), dg.SkipReason)


def test_sensor_leaves_alone_the_files_memlake_run_already_ingested(settings, fast_resources, monkeypatch):
    """A home built with `memlake run` and then opened in the UI (`memlake dev`): the sensor starts with no
    cursor, but the manifest already holds the files, so it asks for nothing (no second ingest of them)."""
    from pipelines.runs import run_landing

    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")  # what the sensor's own settings read
    land(settings, "alice", "a.jsonl",
         '{"conversation_id":"c1","role":"user","content":"hi","created_at":"2024-03-01T10:00:00Z"}\n')
    assert run_landing(settings, resources=fast_resources).success
    assert isinstance(sensor_result(settings), dg.SkipReason)

    land(settings, "alice", "b.jsonl",
         '{"conversation_id":"c2","role":"user","content":"yo","created_at":"2024-03-07T10:00:00Z"}\n')
    [request] = sensor_result(settings).run_requests  # a file dropped later is still new
    assert request.tags["memlake/new_files"] == "1"
    assert run_landing(settings, resources=fast_resources).success

    land(settings, "alice", "a-copy.jsonl", (settings.landing_dir / "alice" / "a.jsonl").read_bytes())
    assert isinstance(sensor_result(settings), dg.SkipReason)  # the same bytes for the same agent: a duplicate
    land(settings, "bob", "a.jsonl", (settings.landing_dir / "alice" / "a.jsonl").read_bytes())
    [for_bob] = sensor_result(settings).run_requests  # ... for another agent: that agent's data
    assert for_bob.job_name == "landing_job" and for_bob.tags["memlake/new_files"] == "1"


def test_sensor_asks_once_to_fold_override_and_forget_entries_written_since_the_last_fold(settings):
    """With no new landing file and no stale chunks, entries `remember`, `reject` or `forget` wrote since the
    facts were folded get one facts run; once the fold has read them (its stamp), nothing more."""
    from memlake.facts.overrides import FOLDED_ENTRIES, log_entries, write_forget, write_override
    from memlake.lake import Lake
    from memlake.schemas import FACTS

    assert isinstance(sensor_result(settings), dg.SkipReason)  # an empty home: nothing to fold
    write_override(settings, "alice", "add", content="I moved to Porto last week")
    [request] = sensor_result(settings).run_requests
    assert request.job_name == "facts_job"
    assert request.run_key == sensor_result(settings).run_requests[0].run_key  # the same ask: Dagster runs it once

    lake = Lake(settings.lake_dir)
    lake.write(FACTS, lake.empty(FACTS), stamp={FOLDED_ENTRIES: log_entries(settings)})  # what the fold writes
    lake.write(PROFILES, lake.empty(PROFILES), stamp={PROFILE_RULES_STAMP: PROFILE_RULES})  # ... and the profiles
    assert isinstance(sensor_result(settings), dg.SkipReason)

    write_forget(settings, "alice", "agent")
    [again] = sensor_result(settings).run_requests
    assert again.job_name == "facts_job" and again.run_key != request.run_key


def test_sensor_asks_once_to_rebuild_profiles_that_older_profile_rules_built(settings):
    from memlake.facts.overrides import FOLDED_ENTRIES, log_entries
    from memlake.lake import Lake
    from memlake.schemas import FACTS

    lake = Lake(settings.lake_dir)
    lake.write(FACTS, lake.empty(FACTS), stamp={FOLDED_ENTRIES: log_entries(settings)})
    lake.write(PROFILES, lake.empty(PROFILES), stamp={PROFILE_RULES_STAMP: "profile-1"})
    [request] = sensor_result(settings).run_requests
    assert request.job_name == "facts_job" and request.tags["memlake/profile_rules"] == PROFILE_RULES

    lake.write(PROFILES, lake.empty(PROFILES), stamp={PROFILE_RULES_STAMP: PROFILE_RULES})
    assert isinstance(sensor_result(settings), dg.SkipReason)


def test_sensor_asks_once_for_the_days_the_manifest_holds_but_no_run_built(settings, fast_resources, monkeypatch):
    """A landing run cancelled after its manifest step: its file is in the manifest, so no longer new, and
    its day has no turns. The sensor asks for one landing run over that day, once."""
    from pipelines.runs import run_landing

    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")
    land(settings, "alice", "a.jsonl",
         '{"conversation_id":"c1","role":"user","content":"hi","created_at":"2024-03-01T10:00:00Z"}\n')
    assert run_landing(settings, resources=fast_resources).success
    land(settings, "alice", "b.jsonl",
         '{"conversation_id":"c2","role":"user","content":"yo","created_at":"2024-03-07T10:00:00Z"}\n')
    from pipelines.jobs import ASSETS, CHECKS, manifest_job_selection

    stopped = dg.materialize([*ASSETS, *CHECKS], selection=manifest_job_selection, resources=fast_resources,
                             instance=dg.DagsterInstance.ephemeral())
    assert stopped.success

    result = sensor_result(settings)
    [request] = result.run_requests
    assert request.job_name == "landing_job" and request.run_key.startswith("unbuilt:")
    assert (request.tags["dagster/asset_partition_range_start"], request.tags["dagster/asset_partition_range_end"]) \
        == ("2024-03-07", "2024-03-07")
    assert [r.partition_keys for r in result.dynamic_partitions_requests] == [["2024-03-07"]]
    assert sensor_result(settings).run_requests[0].run_key == request.run_key  # the same ask: Dagster runs it once

    assert run_landing(settings, resources=fast_resources).days == ["2024-03-07"]
    assert isinstance(sensor_result(settings), dg.SkipReason)
