"""A run over several days (a backfill, a first `memlake run`) records each day's materialization with that
day's own row count and preview, so a day's history in the UI is its own, not the whole run's; the run's totals
are said once, in the run's log."""

import dagster as dg

from assets.shared import said_run_totals
from tests.conftest import land
from tests.transcripts.helpers import jsonl, msg


def _day_metadata(instance: dg.DagsterInstance, key: list[str], day: str) -> dict[str, object]:
    [record] = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(key), asset_partitions=[day]), limit=1).records
    materialization = record.asset_materialization
    assert materialization is not None
    return {name: value.value for name, value in materialization.metadata.items()}


def run_totals(instance: dg.DagsterInstance, run_id: str, asset: str) -> dict[str, object]:
    """What the run's log says of `asset`'s totals over the run's days; nothing for a one-day run."""
    return said_run_totals((event.message for event in instance.all_logs(run_id)), asset)


# What a day's materialization may show: its own figures (row count, preview, its conversations, chunks and
# tokens), and the labels true of every day the run built (the chunk recipe, the distiller, the embedder).
A_DAYS_OWN = {"dagster/row_count", "preview", "conversations", "agents", "by_kind", "tokens",
              "tokenizer", "recipe", "distiller", "prompt_version", "as_of", "embedder", "full_text_only"}
PER_DAY_ASSETS = [["transcripts", "turns"], ["transcripts", "chunks"], ["episodes", "episodes"],
                  ["episodes", "pending"], ["search", "chunk_index"], ["search", "episode_index"]]


def test_each_day_of_a_multi_day_run_records_its_own_row_count_and_preview_and_not_the_runs_totals(
        settings, run_pipeline):
    land(settings, "alice", "three-days.jsonl", jsonl(
        msg("one-a", 0, "user", "I moved to Lisbon.", day="2024-10-21"),
        msg("two-a", 0, "user", "My sister is called Ana.", day="2024-10-22"),
        msg("two-a", 1, "assistant", "Nice to hear about Ana.", day="2024-10-22"),
        msg("two-b", 0, "user", "I like hiking.", day="2024-10-22"),
        msg("three-a", 0, "user", "I bought a bike.", day="2024-10-23"),
        msg("three-a", 1, "assistant", "Enjoy the bike.", day="2024-10-23"),
        msg("three-a", 2, "user", "It is red.", day="2024-10-23"),
    ))
    outcome = run_pipeline()
    assert outcome.success and outcome.days == ["2024-10-21", "2024-10-22", "2024-10-23"]
    instance = run_pipeline.instance

    turns = {day: _day_metadata(instance, ["transcripts", "turns"], day)
             for day in ("2024-10-21", "2024-10-22", "2024-10-23")}
    assert {day: meta.get("dagster/row_count") for day, meta in turns.items()} == {
        "2024-10-21": 1, "2024-10-22": 3, "2024-10-23": 3}
    # each day's preview names that day's conversations and no other day's
    assert "one-a" in str(turns["2024-10-21"]["preview"]) and "two-a" not in str(turns["2024-10-21"]["preview"])
    assert "two-b" in str(turns["2024-10-22"]["preview"]) and "three-a" not in str(turns["2024-10-22"]["preview"])
    assert {day: meta.get("conversations") for day, meta in turns.items()} == {
        "2024-10-21": 1, "2024-10-22": 2, "2024-10-23": 1}

    chunk_counts = {day: _day_metadata(instance, ["transcripts", "chunks"], day).get("dagster/row_count")
                    for day in turns}
    assert all(isinstance(n, int) and n > 0 for n in chunk_counts.values()), chunk_counts
    assert chunk_counts["2024-10-21"] < chunk_counts["2024-10-23"]  # one turn's chunks, fewer than three's
    episodes = {day: _day_metadata(instance, ["episodes", "episodes"], day) for day in turns}
    assert {day: meta.get("dagster/row_count") for day, meta in episodes.items()} == {
        "2024-10-21": 1, "2024-10-22": 2, "2024-10-23": 1}

    # the search indexes of those days too: each day's index rows, not the run's
    for index, per_day in (("chunk_index", chunk_counts),
                           ("episode_index", {day: meta["dagster/row_count"] for day, meta in episodes.items()})):
        counts = {day: _day_metadata(instance, ["search", index], day).get("dagster/row_count") for day in turns}
        assert counts == per_day, (index, counts)

    # no day shows the run's totals (rows_in_run, days_written, the distiller's calls...): the run's log says them
    for key in PER_DAY_ASSETS:
        for day in turns:
            shown = set(_day_metadata(instance, key, day))
            assert shown <= A_DAYS_OWN, (key, day, sorted(shown - A_DAYS_OWN))
    said = run_totals(instance, str(outcome.run_id), "transcripts/turns")
    assert (said["rows_in_run"], said["days_in_run"]) == (7, 3)
    assert run_totals(instance, str(outcome.run_id), "episodes/episodes")["distilled"] == 4
