"""Landing files become turns, run in process as `memlake run` runs it: by conversation day, each agent its
own, duplicates and re-exports, bad files quarantined, and the turns check."""

import json
from datetime import UTC, datetime, timedelta

import polars as pl

from memlake.api import Memory
from memlake.lake import Lake
from memlake.report import render_ingest_report
from memlake.schemas import LANDING_MANIFEST
from tests.conftest import land
from tests.transcripts.helpers import CONVERSATION, jsonl, msg, turns_of


def test_files_become_turns_partitioned_by_conversation_day(settings, run_pipeline):
    land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATION))
    outcome = run_pipeline()

    assert outcome.success, outcome
    assert outcome.days == ["2024-03-01", "2024-03-05"]
    turns = turns_of(settings)
    assert turns.select("conversation_id", "message_id", "role", "day").rows() == [
        ("c1", "c1-m0", "user", "2024-03-01"),
        ("c1", "c1-m1", "assistant", "2024-03-01"),
        ("c2", "c2-m0", "user", "2024-03-05"),
    ]
    assert turns["agent_id"].unique().to_list() == ["alice"]
    assert turns["source_format"].unique().to_list() == ["jsonl"]
    assert turns["created_at_inferred"].unique().to_list() == [False]
    manifest = Lake(settings.lake_dir).read(LANDING_MANIFEST)
    # when the file landed: written into landing before the run first saw it
    written = datetime.fromtimestamp((settings.landing_dir / "alice" / "chat.jsonl").stat().st_mtime, UTC)
    assert turns["ingested_at"].unique().to_list() == [written] and written <= manifest["first_seen_at"][0]
    assert Memory(settings.home).agents() == ["alice"]
    assert Memory(settings.home).turns("alice", "c2")["content"].to_list() == ["Order ORD-58213 has not arrived."]


def test_same_export_twice_changes_nothing(settings, run_pipeline):
    land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATION))
    run_pipeline()
    before = turns_of(settings)

    land(settings, "alice", "chat-copy.jsonl", jsonl(*CONVERSATION))
    outcome = run_pipeline()

    assert outcome.success
    assert turns_of(settings).equals(before)
    statuses = Lake(settings.lake_dir).read(LANDING_MANIFEST).group_by("source_file").agg(pl.col("status").first())
    assert dict(statuses.rows()) == {"alice/chat.jsonl": "ingested", "alice/chat-copy.jsonl": "duplicate"}
    report = render_ingest_report(Lake(settings.lake_dir))  # what `memlake run` prints: the copy is not silent
    assert "Duplicates (the same bytes as an ingested file, not ingested again): 1 file(s)\n  alice/chat-copy.jsonl" \
        in report


def test_the_same_bytes_dropped_for_another_agent_are_built_for_it_by_the_next_run(settings, run_pipeline):
    land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATION))
    run_pipeline()

    land(settings, "bob", "chat.jsonl", jsonl(*CONVERSATION))
    outcome = run_pipeline()

    assert outcome.new_files == ["bob/chat.jsonl"] and outcome.days == ["2024-03-01", "2024-03-05"]
    memory = Memory(settings.home)
    assert memory.turns("bob")["content"].to_list() == memory.turns("alice")["content"].to_list()
    assert memory.search("where does she live", "bob", k=3)["agent_id"].unique().to_list() == ["bob"]


def test_longer_reexport_extends_the_conversation_and_keeps_its_day(settings, run_pipeline):
    land(settings, "alice", "day1.jsonl", jsonl(*CONVERSATION[:2]))
    run_pipeline()
    first_ingest = turns_of(settings)["ingested_at"][0]

    later = msg("c1", 2, "user", "Actually I moved to Paris.", day="2024-03-09")
    land(settings, "alice", "day9.jsonl", jsonl(*CONVERSATION[:2], later))
    run_pipeline()

    turns = turns_of(settings).filter(pl.col("conversation_id") == "c1")
    assert turns["message_id"].to_list() == ["c1-m0", "c1-m1", "c1-m2"]
    assert turns["turn_index"].to_list() == [0, 1, 2]
    assert turns["day"].unique().to_list() == ["2024-03-01"]  # fixed when first seen
    assert turns["ingested_at"][0] == first_ingest  # the first file that had it
    assert turns["ingested_at"][2] > first_ingest


def test_an_older_export_dropped_later_does_not_bring_back_text_edited_since(settings, run_pipeline):
    """The second export holds the conversation with a message edited and one more reply; the first export,
    dropped again later (other bytes), reaches an earlier time, so the newer text stays."""
    old = [msg("c1", 0, "user", "I live in Berlin."), msg("c1", 1, "assistant", "Berlin is lovely in spring.")]
    new = [msg("c1", 0, "user", "I live in Berlin, near the river."), old[1],
           msg("c1", 2, "user", "And I cycle to work.", day="2024-03-02")]
    land(settings, "alice", "v1.jsonl", jsonl(*old))
    run_pipeline()
    land(settings, "alice", "v2.jsonl", jsonl(*new))
    run_pipeline()
    first_seen = turns_of(settings)["ingested_at"].to_list()
    land(settings, "alice", "v1-again.jsonl", jsonl(*old) + "\n")
    run_pipeline()

    turns = turns_of(settings)
    assert turns["content"].to_list() == [m["content"] for m in new]
    assert turns["ingested_at"].to_list() == first_seen  # each message: the first file that had it


def test_agents_never_mix(settings, run_pipeline):
    land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATION))
    land(settings, "bob", "chat.jsonl", jsonl(msg("c1", 0, "user", "I am Bob and I live in Oslo.")))
    run_pipeline()

    memory = Memory(settings.home)
    assert memory.agents() == ["alice", "bob"]
    assert memory.turns("bob")["content"].to_list() == ["I am Bob and I live in Oslo."]
    assert "I am Bob and I live in Oslo." not in memory.turns("alice")["content"].to_list()


def test_bad_files_are_quarantined_and_the_rest_goes_on(settings, run_pipeline):
    good = land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATION))
    bad_json = land(settings, "alice", "broken.json", '{"conversation_id": "x", "turns": [')
    bad_agent = land(settings, "bad agent!", "chat.jsonl", jsonl(*CONVERSATION))
    landed = {p: p.read_bytes() for p in (good, bad_json, bad_agent)}

    outcome = run_pipeline()

    assert outcome.success
    assert turns_of(settings).height == 3
    quarantined = Lake(settings.lake_dir).read(LANDING_MANIFEST).filter(pl.col("status") == "quarantined")
    assert sorted(quarantined["source_file"].to_list()) == ["alice/broken.json", "bad agent!/chat.jsonl"]
    for row in quarantined.iter_rows(named=True):
        copy = settings.home / row["quarantine_path"]
        assert copy.read_bytes() == (settings.landing_dir / row["source_file"]).read_bytes()
        reason = json.loads(copy.with_name(copy.name + ".reason.json").read_text())
        assert reason["file"] == row["source_file"] and reason["error"]
    rejected = quarantined.filter(pl.col("source_file") == "bad agent!/chat.jsonl").row(0, named=True)
    assert "invalid agent id" in rejected["reason"]
    assert rejected["source_format"] == "jsonl"  # it parsed: the format it parsed as, not a guess left empty
    assert {p: p.read_bytes() for p in landed} == landed  # landing files untouched


def test_a_bad_file_dropped_again_with_other_bytes_keeps_each_quarantined_copy_and_reason(settings, run_pipeline):
    first = b'{"conversation_id": "x", "turns": ['
    land(settings, "alice", "broken.json", first)
    run_pipeline()
    second = b'{"conversation_id": "y", "turns": [{"role"'
    land(settings, "alice", "broken.json", second)
    run_pipeline()

    quarantined = Lake(settings.lake_dir).read(LANDING_MANIFEST).filter(pl.col("status") == "quarantined")
    assert quarantined.height == 2 and quarantined["quarantine_path"].n_unique() == 2
    copies = {}
    for row in quarantined.iter_rows(named=True):
        copy = settings.home / row["quarantine_path"]
        reason = json.loads(copy.with_name(copy.name + ".reason.json").read_text())
        assert reason["sha256"] == row["source_sha256"] and reason["quarantine_path"] == row["quarantine_path"]
        copies[copy.read_bytes()] = row["source_sha256"]
    assert set(copies) == {first, second}


def test_a_file_with_a_message_dated_after_today_is_quarantined_and_the_rest_goes_on(settings, run_pipeline):
    """A reply dated 2099 (a clock gone wrong) used to pass landing, then fail the turns check: the day was
    half built and the next run said "ok". Now the file is quarantined, saying which message, and the run
    goes on."""
    good = land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATION))
    odd = land(settings, "alice", "odd.jsonl", jsonl(msg("f1", 0, "user", "Hola, Madrid!"),
                                                     msg("f1", 1, "assistant", "Hola!", day="2099-12-01")))
    outcome = run_pipeline()

    # the turns check passes; the manifest's warns, naming the file (a quarantine is no silent green)
    assert outcome.success and outcome.failed_checks == ["transcripts/landing_manifest:no_new_file_quarantined"]
    assert "alice/odd.jsonl" in outcome.check_notes["transcripts/landing_manifest:no_new_file_quarantined"]
    quarantined = Lake(settings.lake_dir).read(LANDING_MANIFEST).filter(pl.col("status") == "quarantined")
    assert quarantined["source_file"].to_list() == ["alice/odd.jsonl"]
    assert "message f1-m1 is dated 2099-12-01 10:01 UTC, after the run" in quarantined["reason"][0]
    assert "f1" not in set(turns_of(settings)["conversation_id"]) and good.is_file() and odd.is_file()


def test_a_day_rebuilt_after_its_landing_file_went_keeps_the_turns_built_from_it(settings, run_pipeline, tmp_path):
    first = land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATION[:2]))  # c1 on 03-01
    run_pipeline()
    before = turns_of(settings)
    first.rename(tmp_path / "moved-away.jsonl")

    land(settings, "alice", "more.jsonl", jsonl(msg("c4", 0, "user", "I adopted a cat.", day="2024-03-01")))
    outcome = run_pipeline()

    assert outcome.days == ["2024-03-01"]
    after = turns_of(settings)
    assert after.filter(pl.col("conversation_id") == "c1").drop("day").equals(before.drop("day"))
    assert after.filter(pl.col("conversation_id") == "c4")["content"].to_list() == ["I adopted a cat."]


def test_turns_check_fails_on_a_broken_table_and_blocks_downstream(settings, fast_resources, monkeypatch):
    import dagster as dg

    import memlake.landing

    # a turn dated after the run that got past landing (which quarantines such files): the check is the backstop
    monkeypatch.setattr(memlake.landing, "future_message", lambda conversation, now: None)

    from assets.partitions import day_partitions, register_days
    from assets.transcripts import landing_manifest, turns, turns_expectations

    @dg.asset(deps=[turns], partitions_def=day_partitions, backfill_policy=dg.BackfillPolicy.single_run())
    def downstream_of_turns() -> None:
        raise AssertionError("must not run: the turns check failed")

    yesterday = (datetime.now(UTC) - timedelta(days=1)).replace(microsecond=0)
    future = yesterday + timedelta(days=3)
    land(
        settings,
        "alice",
        "clock-skew.jsonl",
        jsonl(
            {"conversation_id": "c", "message_id": "a", "role": "user", "content": "hi",
             "created_at": yesterday.isoformat()},
            {"conversation_id": "c", "message_id": "b", "role": "user", "content": "from the future",
             "created_at": future.isoformat()},
        ),
    )
    instance = dg.DagsterInstance.ephemeral()
    register_days(instance, {yesterday.date().isoformat()})
    result = dg.materialize(
        [landing_manifest, turns, turns_expectations, downstream_of_turns],
        resources=fast_resources,
        partition_key=yesterday.date().isoformat(),
        instance=instance,
        raise_on_error=False,
    )

    [evaluation] = result.get_asset_check_evaluations()
    assert not evaluation.passed
    failed = evaluation.metadata["failed_expectations"].value
    assert [f["expectation"] for f in failed] == ["expect_column_values_to_be_between"]
    materialized = {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()}
    assert "downstream_of_turns" not in materialized
    assert "transcripts/turns" in materialized


def test_the_turns_check_of_a_many_day_run_is_one_result_not_a_skipped_one_per_day(settings, run_pipeline):
    """A landing run covers its days in one step, and a check result carries no day; a check declared per
    day left every day's planned evaluation without a result, which the UI shows as skipped."""
    import dagster as dg

    land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATION))
    assert run_pipeline().days == ["2024-03-01", "2024-03-05"]
    key = dg.AssetCheckKey(dg.AssetKey(["transcripts", "turns"]), "turns_expectations")
    history = run_pipeline.instance.event_log_storage.get_asset_check_execution_history(key, limit=10)
    assert [record.status.value for record in history] == ["SUCCEEDED"]


def test_a_days_row_count_is_its_own_in_a_range_run_as_in_a_run_of_that_day_alone(settings, run_pipeline):
    """Dagster gives a range run's metadata to every day of it, so a two-day run's 3 turns must not show up
    as each day's row count: each day records its own count (`per_day_metadata`), in the range run as in a
    run of that day alone."""
    import dagster as dg

    land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATION))
    run_pipeline()
    run_pipeline(days=["2024-03-01"])

    def day_metadata(day: str) -> list[dict]:
        records = run_pipeline.instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey(["transcripts", "turns"]), asset_partitions=[day]), limit=10
        ).records
        return [{k: v.value for k, v in r.asset_materialization.metadata.items()} for r in reversed(records)]

    first, alone = day_metadata("2024-03-01")
    assert first["dagster/row_count"] == 2 and "rows_in_run" not in first  # the run's 3: in its log
    assert alone["dagster/row_count"] == 2
    [only] = day_metadata("2024-03-05")
    assert only["dagster/row_count"] == 1
