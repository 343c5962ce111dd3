"""Episode layer: one distilled episode per conversation, and the conversations still waiting for one."""

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import dagster as dg
import polars as pl

from assets.transcripts import LAKE_WRITERS, markdown_preview, row_count, turns
from memlake.distill.cache import ResultCache
from memlake.distill.pending import default_as_of
from memlake.distill.run import distill_pass, write_pass
from memlake.moments import as_utc
from memlake.schemas import EPISODES, LANDING_MANIFEST, PENDING, TURNS
from pipelines.partitions import checked_days, day_partitions, run_days
from resources.core_model import CoreModel
from resources.lake import LakeResource

EPISODES_KEY = dg.AssetKey(["episodes", "episodes"])
PENDING_KEY = dg.AssetKey(["episodes", "pending"])
CITES_USER = "fact_candidates_cite_user_messages"
NOTHING_LOST = "every_conversation_has_an_episode_or_is_pending"


class DistillConfig(dg.Config):
    """On-demand knobs (`memlake distill`); a normal run leaves them unset."""

    agent_id: str | None = None  # work only on this agent's conversations
    conversation_id: str | None = None  # ... and only this one
    force: bool = False  # distil again even when the cache has the result
    as_of: str | None = None  # ISO time the debounce counts to; default: the manifest's newest ingested_at


@dg.multi_asset(
    name="episodes",
    specs=[
        dg.AssetSpec(
            EPISODES_KEY,
            group_name="episodes",
            kinds={"polars", "parquet", "openai"},
            deps=[turns],
            description="One row per conversation: summary, topics, decisions, action items, key dates, entities, "
            "relations, fact candidates and salience, with provenance, the distiller and the prompt version.",
        ),
        dg.AssetSpec(
            PENDING_KEY,
            group_name="episodes",
            kinds={"polars", "parquet"},
            deps=[turns],
            description="One row per conversation waiting for distillation, with the reason.",
        ),
    ],
    partitions_def=day_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    pool=LAKE_WRITERS,
)
def episodes(
    context: dg.AssetExecutionContext, config: DistillConfig, lake: LakeResource, core_model: CoreModel
):  # type: ignore[no-untyped-def]
    """One core-model call per conversation (or the offline distiller), cached by content hash."""
    days = run_days(context)
    store = lake.lake
    day_turns = store.read(TURNS, days=days)
    as_of = (
        as_utc(config.as_of) if config.as_of
        else default_as_of(store.read(LANDING_MANIFEST)["first_seen_at"].to_list()) or datetime.now(UTC)
    )
    distiller = core_model.distiller()
    cache = ResultCache.load(store, days)
    result = distill_pass(
        day_turns, store.read(EPISODES, days=days), store.read(PENDING, days=days), cache, distiller,
        as_of=as_of, debounce_seconds=lake.settings.summary_debounce_seconds, agent_id=config.agent_id,
        conversation_id=config.conversation_id, force=config.force, days=days,
    )
    written = write_pass(store, result, cache, days)
    stats = result.stats
    episode_frame = store.read(EPISODES, days=days)
    pending_frame = store.read(PENDING, days=days)
    if stats.pending_left:
        context.log.info(f"{stats.pending_left} conversation(s) pending: {dict(stats.pending_reasons)}")
    common = {
        "distiller": distiller.name if distiller else "none",
        "prompt_version": (distiller.prompt_version if distiller else None) or "none",
        "as_of": as_of.isoformat(),
        **stats.as_metadata(),
    }
    if distiller is not None and hasattr(distiller, "breaker_state"):
        common["breaker_state"] = distiller.breaker_state()
    yield dg.MaterializeResult(
        asset_key=EPISODES_KEY,
        metadata={
            **row_count(episode_frame.height, len(days)),
            **common,
            "token_usage": dg.MetadataValue.json(stats.usage.as_dict()),
            "pending_reasons": dg.MetadataValue.json(dict(stats.pending_reasons)),
            "days_written": len(written),
            "preview": markdown_preview(_episode_preview(episode_frame)),
        },
    )
    yield dg.MaterializeResult(
        asset_key=PENDING_KEY,
        metadata={
            **row_count(pending_frame.height, len(days)),
            "pending_reasons": dg.MetadataValue.json(dict(stats.pending_reasons)),
            "as_of": as_of.isoformat(),
            "preview": markdown_preview(pending_frame.select("agent_id", "conversation_id", "reason", "since",
                                                            "attempts")),
        },
    )


def _episode_preview(frame: pl.DataFrame) -> pl.DataFrame:
    if frame.height == 0:
        return frame
    return frame.select(
        "agent_id", "conversation_id", "title",
        pl.col("summary").str.slice(0, 120).alias("summary"),
        pl.col("fact_candidates").list.len().alias("candidates"),
        "distiller",
    ).sort("agent_id", "conversation_id")


# The checks are steps of their own, reading the lake: each runs alone too (the UI's Execute on a check).
@dg.asset_check(asset=EPISODES_KEY, name=CITES_USER,
                description="Every fact candidate cites at least one user message of its conversation.")
def fact_candidates_cite_user_messages(context: dg.AssetCheckExecutionContext,
                                       lake: LakeResource) -> dg.AssetCheckResult:
    days = checked_days(context)
    episode_frame, day_turns = lake.lake.read(EPISODES, days=days), lake.lake.read(TURNS, days=days)
    users = {
        (a, c, m) for a, c, m, role in day_turns.select("agent_id", "conversation_id", "message_id", "role").iter_rows()
        if role == "user"
    }
    bad = []
    for row in episode_frame.iter_rows(named=True):
        for candidate in row["fact_candidates"] or []:
            if not any((row["agent_id"], row["conversation_id"], m) in users for m in candidate["message_ids"] or []):
                bad.append(f"{row['conversation_id']}: {candidate['content']}")
    return dg.AssetCheckResult(passed=not bad, metadata={"violations": len(bad),
                                                         "examples": dg.MetadataValue.json(bad[:5])})


@dg.asset_check(asset=EPISODES_KEY, name=NOTHING_LOST,
                description="Every conversation of the days is in episodes or in pending.")
def every_conversation_has_an_episode_or_is_pending(context: dg.AssetCheckExecutionContext,
                                                    lake: LakeResource) -> dg.AssetCheckResult:
    def keys(frame: pl.DataFrame) -> set[tuple[str, str]]:
        return set(frame.select("agent_id", "conversation_id").iter_rows()) if frame.height else set()

    days = checked_days(context)
    day_turns = lake.lake.read(TURNS, days=days)
    missing = sorted(keys(day_turns) - keys(lake.lake.read(EPISODES, days=days))
                     - keys(lake.lake.read(PENDING, days=days)))
    return dg.AssetCheckResult(passed=not missing, metadata={
        "missing": len(missing), "examples": dg.MetadataValue.json([list(k) for k in missing[:5]])})


# --- `memlake distill`: the episodes of one agent, on demand -------------------------------------


@dataclass
class DistillOutcome:
    """What `memlake distill` did."""

    success: bool
    days: list[str] = field(default_factory=list)
    run_id: str | None = None
    stats: dict[str, Any] = field(default_factory=dict)


def run_distill(
    settings: Any,
    agent_id: str,
    conversation_id: str | None = None,
    force: bool = False,
    resources: dict[str, object] | None = None,
    instance: dg.DagsterInstance | None = None,
    as_of: datetime | None = None,
) -> DistillOutcome:
    """Distil an agent's conversations now (as of now unless told), and rebuild what depends on them."""
    from memlake.lake import Lake
    from pipelines.definitions import ASSETS, CHECKS, default_resources
    from pipelines.partitions import register_days
    from pipelines.runner import CONSOLE_INFO, ensure_dagster_home

    store = Lake(settings.lake_dir)
    frame = store.read(TURNS).filter(pl.col("agent_id") == agent_id)
    if conversation_id is not None:
        frame = frame.filter(pl.col("conversation_id") == conversation_id)
    days = sorted(set(frame["day"].to_list()))
    if not days:
        return DistillOutcome(success=True)
    if instance is None:
        ensure_dagster_home(settings)
        instance = dg.DagsterInstance.get()
    run_config = {
        "loggers": CONSOLE_INFO,
        "ops": {
            "episodes": {
                "config": {
                    "agent_id": agent_id,
                    "conversation_id": conversation_id,
                    "force": force,
                    "as_of": (as_of or datetime.now(UTC)).isoformat(),
                }
            }
        }
    }
    result = dg.materialize(
        [*ASSETS, *CHECKS],
        selection=dg.AssetSelection.assets(EPISODES_KEY, PENDING_KEY).downstream(),
        resources=resources or default_resources(settings),
        instance=instance,
        run_config=run_config,
        tags={**register_days(instance, days), "memlake/trigger": "memlake distill"},
        raise_on_error=False,
    )
    stats: dict[str, Any] = {}
    for event in result.get_asset_materialization_events():
        materialization = event.event_specific_data.materialization  # type: ignore[union-attr]
        if materialization.asset_key == EPISODES_KEY:
            stats = {k: v.value for k, v in materialization.metadata.items()}
    return DistillOutcome(success=result.success, days=days, run_id=result.run_id, stats=stats)


# --- pending conversations are retried: a sensor reruns the days that still have some -------------

PENDING_RETRY_SECONDS = 300
pending_job = dg.define_asset_job(
    "pending_job",
    selection=dg.AssetSelection.assets(EPISODES_KEY, PENDING_KEY).downstream(),
    description="Distil the conversations still pending (model back, debounce over) and rebuild what follows.",
)


def pending_run_request(pending: pl.DataFrame, now: datetime, known: Sequence[str]) -> dg.RunRequest | None:
    """One run over the days that have pending conversations, as of `now` (None when nothing waits);
    `known` is the day partitions' order."""
    if pending.height == 0:
        return None
    days = sorted(set(pending["day"].to_list()))
    bucket = int(now.timestamp() // PENDING_RETRY_SECONDS)
    from pipelines.partitions import range_tags

    return dg.RunRequest(
        run_key=f"pending:{days[0]}:{days[-1]}:{pending.height}:{bucket}",
        run_config={"ops": {"episodes": {"config": {"as_of": now.isoformat()}}}},
        tags={**range_tags(days, known), "memlake/trigger": "pending_sensor", "memlake/pending": str(pending.height)},
    )


@dg.sensor(
    name="pending_sensor",
    job=pending_job,
    minimum_interval_seconds=PENDING_RETRY_SECONDS,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Every 5 minutes, reruns the days of episodes/pending so waiting conversations are distilled "
    "once the model answers again or their debounce is over. Nothing stays pending for good.",
)
def pending_sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
    from memlake.lake import Lake
    from memlake.settings import load_settings
    from pipelines.partitions import DAYS, add_requests

    pending = Lake(load_settings().lake_dir).read(PENDING)
    known = context.instance.get_dynamic_partitions(DAYS)
    request = pending_run_request(pending, datetime.now(UTC), known)
    if request is None:
        return dg.SkipReason("no pending conversations")
    adds = add_requests(pending["day"].to_list(), known)  # a home whose days predate day partitions
    return dg.SensorResult(run_requests=[request], dynamic_partitions_requests=adds)


ASSETS = [episodes]
CHECKS = [fact_candidates_cite_user_messages, every_conversation_has_an_episode_or_is_pending]
JOBS = [pending_job]
SENSORS = [pending_sensor]
