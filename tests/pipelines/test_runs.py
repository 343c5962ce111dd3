"""What a run builds and what the next one repairs, run in process as `memlake run` runs it: the days a drop
touched, backfills, the samples through every layer, reindex, lost indexes, and unfinished, killed or
concurrent runs."""

import os
import shutil
import threading

import dagster as dg
import polars as pl
import pytest

from memlake.api import Memory
from memlake.lake import Lake
from memlake.schemas import CHUNK_INDEX, EPISODE_INDEX, FACT_INDEX, TURNS
from memlake.vectors import VectorStore, key_column
from pipelines.runs import run_reindex
from resources import HashEmbedderResource
from tests.conftest import kill_a_run_holding, land
from tests.pipelines.test_per_day_metadata import run_totals
from tests.transcripts.helpers import CONVERSATION, jsonl, msg, turns_of


def test_a_run_builds_only_the_days_it_touched_though_its_range_holds_others(settings, run_pipeline, tmp_path):
    """Days become partitions as they land, so a drop touching an old day and a new one is one range run over
    every day between them; only the two are built. A day between them whose landing file the user moved
    away keeps its turns and chunks."""
    from memlake.schemas import CHUNKS

    first = land(settings, "alice", "march.jsonl", jsonl(*CONVERSATION))  # 03-01 and 03-05
    run_pipeline()
    land(settings, "alice", "later.jsonl", jsonl(msg("c3", 0, "user", "Skiing in Tromso.", day="2024-03-09")))
    run_pipeline()
    lake = Lake(settings.lake_dir)
    between = {day: lake.partition_file(TURNS, day).stat().st_mtime_ns for day in ("2024-03-05", "2024-03-09")}
    chunks_before = lake.read(CHUNKS, days=["2024-03-05"])
    first.rename(tmp_path / "moved-away.jsonl")

    land(settings, "alice", "april.jsonl", jsonl(msg("c4", 0, "user", "I adopted a cat.", day="2024-03-01"),
                                                 msg("c5", 0, "user", "The cat is called Miso.", day="2024-04-01")))
    outcome = run_pipeline()

    assert outcome.success and outcome.days == ["2024-03-01", "2024-04-01"]
    assert {day: lake.partition_file(TURNS, day).stat().st_mtime_ns for day in between} == between
    assert lake.read(CHUNKS, days=["2024-03-05"]).equals(chunks_before)
    assert sorted(turns_of(settings)["conversation_id"].unique().to_list()) == ["c1", "c2", "c3", "c4", "c5"]
    said = run_totals(run_pipeline.instance, str(outcome.run_id), "transcripts/turns")
    assert said["days_in_run"] == said["days_written"] == 2  # of the run's range, the two days it touched


def test_backfill_of_a_date_range_rebuilds_only_those_days(settings, run_pipeline):
    land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATION))
    run_pipeline()
    lake = Lake(settings.lake_dir)
    before = {day: lake.partition_file(TURNS, day).stat().st_mtime_ns for day in lake.partitions(TURNS)}

    outcome = run_pipeline(days=["2024-03-05"])

    assert outcome.success
    after = {day: lake.partition_file(TURNS, day).stat().st_mtime_ns for day in lake.partitions(TURNS)}
    assert after["2024-03-01"] == before["2024-03-01"]
    assert after["2024-03-05"] > before["2024-03-05"]
    assert turns_of(settings).height == 3


def test_the_sample_data_flows_through_every_layer_with_every_check_passing(settings, run_pipeline):
    from tests.conftest import land_samples

    land_samples(settings)
    outcome = run_pipeline()

    assert outcome.success
    assert outcome.checks["transcripts/turns:turns_expectations"]
    assert outcome.checks["facts/facts:facts_expectations"]
    assert outcome.failed_checks == []
    assert {"transcripts/turns", "transcripts/chunks", "episodes/episodes", "facts/facts"} <= set(outcome.materialized)
    turns = turns_of(settings)
    assert turns.height == 142
    assert turns.select("agent_id", "conversation_id").n_unique() == 30


def indexed_rows(settings) -> dict[str, list[tuple]]:
    """Every index's rows (key, text, vector) in key order."""
    store = VectorStore(settings.lancedb_dir)
    out = {}
    for name in (CHUNK_INDEX, EPISODE_INDEX, FACT_INDEX):
        table = store.open(name)
        rows = pl.from_arrow(table.to_arrow()).select(key_column(table), "text", "vector")
        out[name] = sorted((key, text, tuple(vector)) for key, text, vector in rows.rows())
    return out


def test_reindex_rebuilds_every_search_index_from_the_lake_alone(settings, run_pipeline, fast_resources, tmp_path):
    land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATION))
    assert run_pipeline().success
    before = indexed_rows(settings)
    kept_open = Memory(settings.home)  # a notebook's Memory, open across the loss and the rebuild
    found_before = kept_open.search("ORD-58213", agent_id="alice", k=3)
    facts_before = kept_open.search("where do I live", agent_id="alice", scope="facts")

    shutil.rmtree(settings.lancedb_dir)
    for memory in (kept_open, Memory(settings.home)):
        for scope in ("chunks", "facts"):
            with pytest.raises(ValueError, match="index .* is missing .* run `memlake reindex`"):
                memory.search("ORD-58213", agent_id="alice", scope=scope)
    assert not settings.lancedb_dir.exists()  # a search creates nothing
    shutil.move(settings.landing_dir, tmp_path / "landing-elsewhere")  # so nothing can be read from landing
    outcome = run_reindex(settings, resources=fast_resources, instance=run_pipeline.instance)

    assert outcome.success, outcome
    assert outcome.days == ["2024-03-01", "2024-03-05"]
    assert outcome.materialized == ["search/chunk_index", "search/episode_index", "search/fact_index"]
    assert all(before[name] for name in before)
    assert indexed_rows(settings) == before
    found_after = Memory(settings.home).search("ORD-58213", agent_id="alice", k=3)
    assert found_after["text"].to_list() == found_before["text"].to_list()
    assert "ORD-58213" in found_after["text"][0]
    assert kept_open.search("ORD-58213", agent_id="alice", k=3)["text"].to_list() == found_before["text"].to_list()
    facts_after = kept_open.search("where do I live", agent_id="alice", scope="facts")
    assert facts_after["text"].to_list() == facts_before["text"].to_list()


def test_a_run_after_lancedb_was_lost_indexes_every_day_not_only_its_own(settings, run_pipeline):
    land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATION))
    assert run_pipeline().success
    before = indexed_rows(settings)
    shutil.rmtree(settings.lancedb_dir)

    land(settings, "alice", "later.jsonl", jsonl(msg("c9", 0, "user", "I adopted a cat.", day="2024-04-01")))
    outcome = run_pipeline()

    assert outcome.success and outcome.days == ["2024-04-01"]
    after = indexed_rows(settings)
    for name in (CHUNK_INDEX, EPISODE_INDEX):  # every row indexed before is back, with the new day's
        assert set(before[name]) < set(after[name]), name
    found = Memory(settings.home).search("ORD-58213", agent_id="alice", k=3)
    assert "ORD-58213" in found["text"][0]  # a day the run did not touch


def test_a_file_whose_run_stopped_after_the_manifest_is_built_by_the_next_run(settings, run_pipeline, fast_resources):
    """The manifest materialized alone (the UI's manifest_job, or a landing run cancelled after its first
    step) records a file without building its days; the file is no longer new, so the next run must find
    those days another way, build them once, and then leave them alone."""
    import dagster as dg

    from pipelines.jobs import ASSETS, CHECKS, manifest_job_selection

    land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATION[:2]))
    assert run_pipeline().days == ["2024-03-01"]
    land(settings, "alice", "late.jsonl", jsonl(msg("c3", 0, "user", "My cat is called Biscuit.", day="2024-03-01"),
                                                 msg("c4", 0, "user", "A new day.", day="2024-03-09")))
    stopped = dg.materialize([*ASSETS, *CHECKS], selection=manifest_job_selection, resources=fast_resources,
                             instance=run_pipeline.instance)
    assert stopped.success
    assert set(turns_of(settings)["conversation_id"]) == {"c1"}

    outcome = run_pipeline()
    assert outcome.success and outcome.new_files == [] and outcome.days == ["2024-03-01", "2024-03-09"]
    assert set(turns_of(settings)["conversation_id"]) == {"c1", "c3", "c4"}
    assert run_pipeline().days == []


def test_a_killed_or_cancelled_run_does_not_hold_the_lake_writers_for_good(settings, fast_resources):
    """A `memlake run` killed mid-step (kill -9) stays "started" in the instance with its pool slot claimed,
    and a run cancelled in the UI before its steps let go keeps its slot too: the next run gives both back
    (the killed one marked failed) instead of waiting for them for ever."""
    import socket
    import subprocess

    import dagster as dg
    from dagster._core.storage.dagster_run import DagsterRun, DagsterRunStatus

    from assets.shared import LAKE_WRITERS
    from pipelines.runs import HOST_TAG, PID_TAG, ensure_dagster_home, release_stale_slots, run_landing

    ensure_dagster_home(settings)
    instance = dg.DagsterInstance.get()
    gone = subprocess.Popen(["true"])
    gone.wait()  # a process that has ended: the killed run's
    killed = DagsterRun(job_name="__ephemeral_asset_job__", status=DagsterRunStatus.STARTED,
                        tags={PID_TAG: str(gone.pid), HOST_TAG: socket.gethostname()})
    cancelled = DagsterRun(job_name="landing_job", status=DagsterRunStatus.CANCELED)
    alive = DagsterRun(job_name="__ephemeral_asset_job__", status=DagsterRunStatus.STARTED,
                       tags={PID_TAG: str(os.getpid()), HOST_TAG: socket.gethostname()})
    storage = instance.event_log_storage
    storage.initialize_concurrency_limit_to_default(LAKE_WRITERS)
    for run, step in ((killed, "facts"), (cancelled, "transcripts__landing_manifest"), (alive, "episodes")):
        instance.add_run(run)
        storage.claim_concurrency_slot(LAKE_WRITERS, run.run_id, step)

    assert sorted(release_stale_slots(instance)) == sorted([killed.run_id, cancelled.run_id])
    assert storage.get_concurrency_run_ids() == {alive.run_id}  # a run whose process lives keeps its slot
    assert instance.get_run_by_id(killed.run_id).status == DagsterRunStatus.FAILURE
    assert instance.get_run_by_id(cancelled.run_id).status == DagsterRunStatus.CANCELED

    storage.free_concurrency_slots_for_run(alive.run_id)  # (this test's own process is not really running it)
    land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATION))
    assert run_landing(settings, resources=fast_resources).success


def test_the_days_of_a_run_that_did_not_finish_are_built_again_by_the_next(settings, run_pipeline):
    """A `memlake run` killed after writing a day's turns but before its indexes leaves the manifest and
    the turns saying the day is built: the next run builds that run's days again, and says so; once one
    finished, nothing is redone."""
    from dagster._core.storage.dagster_run import DagsterRun, DagsterRunStatus

    from pipelines.runs import LANDING_TRIGGER, TRIGGER_TAG

    land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATION))
    first = run_pipeline()
    assert first.success and first.retried is None
    day = first.days[0]
    killed = DagsterRun(job_name="__ephemeral_asset_job__", status=DagsterRunStatus.FAILURE, tags={
        TRIGGER_TAG: LANDING_TRIGGER, "dagster/asset_partition_range_start": day,
        "dagster/asset_partition_range_end": day})
    run_pipeline.instance.add_run(killed)

    again = run_pipeline()
    assert again.success and again.retried == killed.run_id and again.days == [day]
    assert "search/chunk_index" in again.materialized
    settled = run_pipeline()
    assert settled.retried is None and settled.days == []


# The first of two `memlake run`s stops in its chunks step until the second has said it waits (see below).
FIRST_RUN_INSIDE, SECOND_RUN_WAITS = threading.Event(), threading.Event()


class FirstRunHoldsEmbedder(HashEmbedderResource):
    """The hashing embedder; the first run that counts tokens (chunking) waits there until the second run says
    it waits."""

    def count_tokens(self, texts: list[str]) -> list[int]:
        if not FIRST_RUN_INSIDE.is_set():
            FIRST_RUN_INSIDE.set()
            SECOND_RUN_WAITS.wait(timeout=30)
        return super().count_tokens(texts)


def test_a_second_memlake_run_waits_for_the_first_says_so_and_finds_nothing_left(settings, fast_resources):
    """Two `memlake run`s at once on one home both built every day (with a paid distiller, every call twice):
    the second now waits for the first, says so, and then finds nothing left to do."""
    from pipelines.runs import run_landing_alone

    land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATION))
    resources = {**fast_resources, "embedder": FirstRunHoldsEmbedder()}
    outcomes: dict[str, object] = {}
    said: list[str] = []

    def second_says(message: str) -> None:
        said.append(message)
        if "waiting" in message:
            SECOND_RUN_WAITS.set()

    first = threading.Thread(target=lambda: outcomes.update(first=run_landing_alone(settings, lambda _: None,
                                                                                       resources)))
    first.start()
    assert FIRST_RUN_INSIDE.wait(timeout=120)  # the first run is building its days
    second = threading.Thread(target=lambda: outcomes.update(second=run_landing_alone(settings, second_says,
                                                                                         resources)))
    second.start()
    first.join(timeout=300)
    second.join(timeout=300)

    done_first, done_second = outcomes["first"], outcomes["second"]
    assert done_first.success and done_first.new_files == ["alice/chat.jsonl"]
    assert done_first.days == ["2024-03-01", "2024-03-05"]
    assert said and said[0].startswith(f"another memlake run (pid {os.getpid()}, started ")
    assert said[0].endswith("is going on this home; waiting for it to end…")
    assert done_second.success and done_second.new_files == [] and done_second.days == []


def test_after_a_memlake_run_killed_mid_way_search_names_memlake_run_and_memlake_run_repairs_it(
        settings, fast_resources):
    """A `memlake run` killed before its index steps left the lake built and the index missing: search said
    to run `memlake reindex`, though `memlake run` is what redoes the killed run. A kill must not wedge the
    home either: the next run does not wait for the dead one."""
    from dagster._core.storage.dagster_run import DagsterRun, DagsterRunStatus

    from pipelines.runs import LANDING_TRIGGER, TRIGGER_TAG, ensure_dagster_home, run_landing, run_landing_alone

    land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATION))
    ensure_dagster_home(settings)
    instance = dg.DagsterInstance.get()
    built = run_landing(settings, resources=fast_resources, instance=instance)
    shutil.rmtree(settings.lancedb_dir)  # what a run killed before its index steps leaves: no index yet
    # the killed run: it held the home (its process is gone) and its Dagster run was left failed
    kill_a_run_holding(settings.home)
    instance.add_run(DagsterRun(job_name="__ephemeral_asset_job__", status=DagsterRunStatus.FAILURE, tags={
        TRIGGER_TAG: LANDING_TRIGGER, "dagster/asset_partition_range_start": built.days[0],
        "dagster/asset_partition_range_end": built.days[-1]}))

    with pytest.raises(ValueError, match=r"index chunk_index is missing .* the last `memlake run` \(pid \d+, "
                       r"started .*\) stopped before it finished: run `memlake run`"):
        Memory(settings.home).search("Berlin", "alice")

    said: list[str] = []
    repaired = run_landing_alone(settings, said.append, fast_resources)
    assert said == []  # the dead run's lock went with its process
    assert repaired.success and repaired.days == built.days
    assert Memory(settings.home).search("Berlin", "alice").height
    shutil.rmtree(settings.lancedb_dir)  # an index lost on its own, no run stopped: reindex rebuilds it
    with pytest.raises(ValueError, match="index chunk_index is missing .* run `memlake reindex`"):
        Memory(settings.home).search("Berlin", "alice")
