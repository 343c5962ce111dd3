"""Days kept in step (issue 40): a day's turns rebuilt alone (the UI's "Materialize" on one day of `turns`) brings
that day's chunks, chunk index, episodes and episode index along, through the automation sensor, and no other
day's; the conversations that did not change are not distilled again (the distill cache)."""

import dagster as dg

from pipelines.definitions import defs
from pipelines.jobs import ASSETS, CHECKS
from pipelines.runs import run_landing
from tests.conftest import land

DAY, OTHER_DAY = "2024-03-07", "2024-03-01"
PER_DAY = ("transcripts/chunks", "episodes/episodes", "episodes/pending", "search/chunk_index",
           "search/episode_index")


def _line(conversation: str, content: str, when: str, message: str) -> str:
    return (f'{{"conversation_id":"{conversation}","message_id":"{message}","role":"user",'
            f'"content":"{content}","created_at":"{when}"}}\n')


def _materialize(keys: set[str], day: str | None, instance: dg.DagsterInstance, resources) -> dg.ExecuteInProcessResult:
    """What the automation sensor asked for, run as it would (one run per partition set)."""
    selection = dg.AssetSelection.assets(*[dg.AssetKey(k.split("/")) for k in keys]).required_multi_asset_neighbors()
    result = dg.materialize([*ASSETS, *CHECKS], selection=selection, partition_key=day, resources=resources,
                            instance=instance)
    assert result.success
    return result


def test_a_day_whose_turns_are_rebuilt_alone_gets_its_chunks_episodes_and_indexes_and_no_other_day(
        settings, fast_resources):
    land(settings, "alice", "a.jsonl",
         _line("c1", "I live in Berlin.", f"{OTHER_DAY}T10:00:00Z", "m1")
         + _line("c2", "I like tea.", f"{DAY}T10:00:00Z", "m1")
         + _line("c3", "My sister is called Ana.", f"{DAY}T12:00:00Z", "m1"))
    instance = dg.DagsterInstance.ephemeral()
    assert run_landing(settings, resources=fast_resources, instance=instance).success
    fresh = dg.evaluate_automation_conditions(defs=defs, instance=instance)
    assert fresh.total_requested == 0

    # a newer export of c2 (one message more) lands; the operator rebuilds the manifest, then that day's turns
    land(settings, "alice", "b.jsonl", _line("c2", "I like tea.", f"{DAY}T10:00:00Z", "m1")
         + _line("c2", "And I work as a nurse.", f"{DAY}T10:05:00Z", "m2"))
    _materialize({"transcripts/landing_manifest"}, None, instance, fast_resources)
    _materialize({"transcripts/turns"}, DAY, instance, fast_resources)

    # the automation follows the day, one layer per tick as the sensor would, until it asks for nothing more
    asked: dict[str, set[str | None]] = {key: set() for key in PER_DAY}
    ticks: list[set[str]] = []  # what each tick asked for
    cursor, distilled, cache_hits = fresh.cursor, 0, 0
    for _ in range(5):
        result = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=cursor)
        cursor = result.cursor
        by_key = {key.to_user_string(): result.get_requested_partitions(key)
                  for key in defs.resolve_all_asset_keys()}
        by_key = {key: days for key, days in by_key.items() if days}
        if not by_key:
            break
        ticks.append(set(by_key))
        for key, days in by_key.items():
            asked.setdefault(key, set()).update(days)
        for days in {frozenset(d) for d in by_key.values()}:
            keys = {key for key, d in by_key.items() if frozenset(d) == days}
            (day,) = days
            run = _materialize(keys, day, instance, fast_resources)
            for event in run.get_asset_materialization_events():
                materialization = event.step_materialization_data.materialization
                if materialization.asset_key == dg.AssetKey(["episodes", "episodes"]):
                    distilled += materialization.metadata["distilled"].value
                    cache_hits += materialization.metadata["cache_hits"].value
    assert all(asked[key] == {DAY} for key in PER_DAY), asked
    assert "transcripts/turns" not in asked and "transcripts/landing_manifest" not in asked
    # the folds follow the day's new episodes: once, and after them, never on the old ones beside them
    episodes_tick = next(i for i, keys in enumerate(ticks) if "episodes/episodes" in keys)
    for fold in ("facts/facts", "graph/entities", "profile/profiles"):
        folded = [i for i, keys in enumerate(ticks) if fold in keys]
        assert len(folded) == 1 and folded[0] > episodes_tick, (fold, ticks)
    # only the changed conversation is distilled again; the day's other one comes from the cache
    assert (distilled, cache_hits) == (1, 1)
