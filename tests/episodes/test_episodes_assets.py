"""`episodes/episodes` and `episodes/pending` materialized into a tmp lake, with the offline distiller."""

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import dagster as dg
import polars as pl
import pytest
from typer.testing import CliRunner

from assets.episodes import CHECKS as EPISODE_CHECKS
from assets.episodes import EPISODES_KEY, NOTHING_LOST, PENDING_KEY, episodes
from assets.partitions import register_days
from assets.transcripts import landing_manifest, turns
from memlake.api import Memory
from memlake.distill.offline import OFFLINE_DISTILLER_VERSION
from memlake.distill.pending import NO_DISTILLER
from memlake.lake import Lake
from memlake.schemas import DISTILL_CACHE, EPISODES, LANDING_MANIFEST, PENDING
from pipelines.runs import run_distill
from resources import CoreModelResource, LakeResource
from tests.conftest import land
from tests.pipelines.test_per_day_metadata import run_totals


def jsonl(*rows: dict) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def msg(conversation: str, index: int, role: str, content: str, at: str) -> dict:
    return {"conversation_id": conversation, "message_id": f"{conversation}-m{index}", "role": role,
            "content": content, "created_at": at}


CONVERSATIONS = [
    msg("c1", 0, "user", "I moved to Lisbon last week! I love cycling.", "2024-03-01T10:00:00Z"),
    msg("c1", 1, "assistant", "Congratulations, Lisbon is great for cycling.", "2024-03-01T10:01:00Z"),
    msg("c2", 0, "user", "parse_ledger_v2 crashes on ORD-58213.", "2024-03-02T09:00:00Z"),
    msg("c2", 1, "assistant", "Default the currency field.", "2024-03-02T09:01:00Z"),
    msg("c3", 0, "user", "My sister Leela turns 30 next month.", "2024-03-03T18:00:00Z"),
]


def materialize_episodes(settings, core_model: CoreModelResource, instance: dg.DagsterInstance,
                         config: dict[str, Any] | None = None) -> tuple[dg.ExecuteInProcessResult, dict[str, Any]]:
    """Manifest, turns and episodes over every day of the manifest; the episodes metadata of the run."""
    lake = LakeResource(home=str(settings.home))
    dg.materialize([landing_manifest], resources={"lake": lake}, instance=instance)
    manifest = Lake(settings.lake_dir).read(LANDING_MANIFEST).filter(pl.col("status") == "ingested")
    days = sorted(set(manifest["partition"].to_list()))
    result = dg.materialize(
        [landing_manifest, turns, episodes, *EPISODE_CHECKS],  # the episode checks are steps of their own
        selection=dg.AssetSelection.assets(turns, EPISODES_KEY, PENDING_KEY),
        resources={"lake": lake, "core_model": core_model},
        instance=instance,
        tags=register_days(instance, days),
        run_config={"ops": {"episodes": {"config": config}}} if config else None,
    )
    assert result.success
    metadata: dict[str, Any] = {}
    for event in result.get_asset_materialization_events():
        materialization = event.event_specific_data.materialization  # type: ignore[union-attr]
        if materialization.asset_key == EPISODES_KEY:
            metadata = {k: v.value for k, v in materialization.metadata.items()}
    if len(days) > 1:  # the run's totals (the distiller's calls): in the run's log, not on every day
        metadata.update(run_totals(instance, result.run_id, "episodes/episodes"))
    return result, metadata


@pytest.fixture
def instance():
    return dg.DagsterInstance.ephemeral()


def tables(settings) -> tuple[pl.DataFrame, pl.DataFrame]:
    lake = Lake(settings.lake_dir)
    return lake.read(EPISODES).sort("conversation_id"), lake.read(PENDING).sort("conversation_id")


def test_offline_episodes_one_row_per_conversation_in_the_turns_days(settings, instance):
    land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATIONS))
    result, meta = materialize_episodes(settings, CoreModelResource(), instance)

    episodes_frame, pending_frame = tables(settings)
    assert episodes_frame["conversation_id"].to_list() == ["c1", "c2", "c3"]
    assert episodes_frame["day"].to_list() == ["2024-03-01", "2024-03-02", "2024-03-03"]
    assert pending_frame.height == 0
    c1 = episodes_frame.row(0, named=True)
    assert c1["distiller"] == OFFLINE_DISTILLER_VERSION and c1["prompt_version"] is None
    assert c1["message_ids"] == ["c1-m0", "c1-m1"]
    assert c1["conversation_ended_at"] == datetime(2024, 3, 1, 10, 1, tzinfo=UTC)
    assert {(f["slot"], f["value"], f["valid_from"]) for f in c1["fact_candidates"]} == {
        ("home_city", "Lisbon", "2024-02-23"), (None, "cycling", "2024-03-01")}
    assert [d["date"] for d in c1["key_dates"]] == ["2024-02-23"]
    assert meta["distilled"] == 3 and meta["cache_hits"] == 0 and meta["model_calls"] == 0
    assert meta["pending_left"] == 0 and meta["distiller"] == OFFLINE_DISTILLER_VERSION
    assert meta["rows_in_run"] == 3 and meta["dagster/row_count"] == 1  # three days: the run's 3, each day's 1
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks == {"fact_candidates_cite_user_messages": True, NOTHING_LOST: True}
    assert Lake(settings.lake_dir).read(DISTILL_CACHE).height == 3


def test_a_rerun_takes_everything_from_the_cache_and_rewrites_the_same_rows(settings, instance):
    land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATIONS))
    materialize_episodes(settings, CoreModelResource(), instance)
    before = tables(settings)[0]

    _, meta = materialize_episodes(settings, CoreModelResource(), instance)

    assert meta["cache_hits"] == 3 and meta["distilled"] == 0
    assert tables(settings)[0].equals(before)


def test_a_live_conversation_waits_for_the_debounce_then_is_distilled(settings, instance):
    now = datetime.now(UTC).replace(microsecond=0)
    recent = (now - timedelta(seconds=5)).isoformat().replace("+00:00", "Z")
    land(settings, "alice", "live.jsonl", jsonl(msg("live", 0, "user", "I'm vegan.", recent)))

    _, meta = materialize_episodes(settings, CoreModelResource(), instance)

    episodes_frame, pending_frame = tables(settings)
    assert episodes_frame.height == 0
    [row] = pending_frame.iter_rows(named=True)
    assert row["conversation_id"] == "live" and row["reason"].startswith("debounce: idle")
    assert meta["pending_left"] == 1 and meta["pending_reasons"] == {"debounce": 1}

    later = (now + timedelta(minutes=5)).isoformat()
    _, meta = materialize_episodes(settings, CoreModelResource(), instance, config={"as_of": later})

    episodes_frame, pending_frame = tables(settings)
    assert episodes_frame["conversation_id"].to_list() == ["live"] and pending_frame.height == 0
    assert meta["distilled"] == 1


def without_distiller(monkeypatch: pytest.MonkeyPatch) -> CoreModelResource:
    """The core model of a home with no endpoint and the offline distiller turned off (until `monkeypatch`
    undoes it, or `MEMLAKE_OFFLINE_DISTILLER` is removed)."""
    monkeypatch.setenv("MEMLAKE_OFFLINE_DISTILLER", "false")
    return CoreModelResource()


def test_no_distiller_keeps_conversations_pending_and_nothing_is_lost(settings, instance, monkeypatch):
    land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATIONS))
    result, meta = materialize_episodes(settings, without_distiller(monkeypatch), instance)
    monkeypatch.delenv("MEMLAKE_OFFLINE_DISTILLER")

    episodes_frame, pending_frame = tables(settings)
    assert episodes_frame.height == 0
    assert pending_frame["reason"].unique().to_list() == [NO_DISTILLER]
    assert meta["distiller"] == "none" and meta["pending_left"] == 3
    assert all(e.passed for e in result.get_asset_check_evaluations())

    _, meta = materialize_episodes(settings, CoreModelResource(), instance)
    episodes_frame, pending_frame = tables(settings)
    assert episodes_frame.height == 3 and pending_frame.height == 0


def test_the_pending_sensor_reruns_the_days_that_have_pending_conversations(settings, instance, monkeypatch):
    from pipelines.sensors import pending_sensor

    lake = LakeResource(home=str(settings.home))
    assert isinstance(pending_sensor(dg.build_sensor_context(instance=instance), lake=lake), dg.SkipReason)
    land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATIONS))
    materialize_episodes(settings, without_distiller(monkeypatch), instance)  # all three wait
    monkeypatch.delenv("MEMLAKE_OFFLINE_DISTILLER")

    sensed = pending_sensor(dg.build_sensor_context(instance=instance), lake=lake)

    assert isinstance(sensed, dg.SensorResult) and not sensed.dynamic_partitions_requests  # days known already
    [request] = sensed.run_requests
    assert request.tags["dagster/asset_partition_range_start"] == "2024-03-01"
    assert request.tags["dagster/asset_partition_range_end"] == "2024-03-03"
    as_of = request.run_config["ops"]["episodes"]["config"]["as_of"]
    assert abs(datetime.fromisoformat(as_of) - datetime.now(UTC)) < timedelta(minutes=1)
    result = dg.materialize(
        [landing_manifest, turns, episodes], selection=dg.AssetSelection.assets(EPISODES_KEY, PENDING_KEY),
        resources={"lake": LakeResource(home=str(settings.home)), "core_model": CoreModelResource()}, instance=instance,
        tags=request.tags, run_config=request.run_config,
    )
    assert result.success
    episodes_frame, pending_frame = tables(settings)
    assert episodes_frame.height == 3 and pending_frame.height == 0


def test_memory_episodes_reads_one_agent_in_a_time_window(settings, instance):
    land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATIONS))
    land(settings, "bob", "chat.jsonl", jsonl(msg("b1", 0, "user", "I'm vegetarian.", "2024-03-02T08:00:00Z")))
    materialize_episodes(settings, CoreModelResource(), instance)
    memory = Memory(settings.home)

    assert memory.episodes("alice")["conversation_id"].to_list() == ["c1", "c2", "c3"]
    assert memory.episodes("bob")["conversation_id"].to_list() == ["b1"]
    window = memory.episodes("alice", since="2024-03-02", until=datetime(2024, 3, 2, 23, tzinfo=UTC))
    assert window["conversation_id"].to_list() == ["c2"]
    assert memory.episodes("nobody").height == 0
    with pytest.raises(ValueError):
        memory.episodes("../etc")


def test_memlake_distill_works_on_one_agent_and_says_what_it_did(settings, fast_resources, monkeypatch):
    from pipelines.cli import app

    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")  # the CLI builds its own resources

    land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATIONS))
    land(settings, "bob", "chat.jsonl", jsonl(msg("b1", 0, "user", "I'm vegetarian.", "2024-03-02T08:00:00Z")))
    instance = dg.DagsterInstance.ephemeral()
    lake = LakeResource(home=str(settings.home))
    dg.materialize([landing_manifest, turns], resources={"lake": lake}, instance=instance,
                   selection=dg.AssetSelection.assets(landing_manifest))
    dg.materialize([landing_manifest, turns], selection=dg.AssetSelection.assets(turns), resources={"lake": lake},
                   instance=instance, tags=register_days(instance, ["2024-03-01", "2024-03-02", "2024-03-03"]))

    outcome = run_distill(settings, "alice", resources={**fast_resources, "core_model": CoreModelResource()},
                          instance=instance)

    assert outcome.success and outcome.days == ["2024-03-01", "2024-03-02", "2024-03-03"]
    assert outcome.stats["distilled"] == 3 and outcome.stats["cache_hits"] == 0
    episodes_frame, pending_frame = tables(settings)
    assert episodes_frame["agent_id"].to_list() == ["alice"] * 3
    assert pending_frame.select("agent_id", "conversation_id").rows() == [("bob", "b1")]  # waits for a full run

    again = run_distill(settings, "alice", conversation_id="c2", force=True,
                        resources={**fast_resources, "core_model": CoreModelResource()}, instance=instance)
    assert again.stats["distilled"] == 1 and again.stats["worked_on"] == 1

    result = CliRunner().invoke(app, ["distill", "--agent", "alice", "--home", str(settings.home)])
    assert result.exit_code == 0, result.output
    assert "calls made: 0" in result.output and "cache hits: 3" in result.output
    assert "pending left: 0" in result.output
    unknown = CliRunner().invoke(app, ["distill", "--agent", "unknown", "--home", str(settings.home)])
    assert unknown.exit_code == 1 and "agent 'unknown' has no memory here; agents: alice, bob" in unknown.output


def test_definitions_have_the_episodes_assets_and_the_core_model(settings):
    from pipelines.definitions import defs
    from resources import build_resources

    keys = defs.resolve_asset_graph().get_all_asset_keys()
    assert {EPISODES_KEY, PENDING_KEY} <= keys
    assert isinstance(build_resources(settings)["core_model"], CoreModelResource)
    spec = defs.resolve_assets_def(EPISODES_KEY)
    assert spec.partitions_def is not None and spec.backfill_policy is not None


# --- the pure parts: due or not, pending rows, cache keys -------------------------------------


def test_due_counts_idle_time_to_as_of_and_pending_rows_keep_since_and_count_attempts():
    from memlake.distill.pending import debounce_reason, default_as_of, is_due, pending_row

    last = datetime(2024, 3, 1, 10, 0, tzinfo=UTC)
    assert not is_due(last, last + timedelta(seconds=59), 60)
    assert is_due(last, last + timedelta(seconds=60), 60)
    assert debounce_reason(last, last + timedelta(seconds=5), 60).startswith("debounce: idle 5 s of 60 s")
    assert default_as_of([None, last, last + timedelta(hours=1)]) == last + timedelta(hours=1)
    first = pending_row("a", "c", "h1", "core model failed: x", as_of=last, attempted=True)
    again = pending_row("a", "c", "h2", "circuit breaker open", as_of=last + timedelta(hours=1), previous=first)
    assert (first["since"], first["attempts"]) == (last, 1)
    assert (again["since"], again["attempts"], again["content_hash"]) == (last, 1, "h2")


def test_cache_keys_change_with_content_distiller_and_prompt_version():
    from memlake.distill.cache import cache_key, content_hash
    from memlake.distill.models import Conversation, Message

    at = datetime(2024, 3, 1, tzinfo=UTC)
    base = Conversation("a", "c", "t", (Message("m1", "user", "I'm vegan.", at),))
    edited = Conversation("a", "c", "t", (Message("m1", "user", "I'm vegetarian.", at),))
    other_agent = Conversation("b", "c", "t", base.messages)
    assert content_hash(base) == content_hash(Conversation("a", "c", "t", base.messages))
    assert len({content_hash(base), content_hash(edited), content_hash(other_agent)}) == 3
    h = content_hash(base)
    assert len({cache_key("distill-v1", "gpt-4o-mini", h), cache_key("distill-v2", "gpt-4o-mini", h),
                cache_key("distill-v1", "llama3", h), cache_key(None, "memlake-offline-1", h)}) == 4
