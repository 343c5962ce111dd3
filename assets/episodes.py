"""Episode layer: one distilled episode per conversation, and the conversations still waiting for one."""

from datetime import UTC, datetime

import dagster as dg
import polars as pl

from assets.partitions import checked_days, day_partitions, run_days
from assets.shared import DAY_WRITERS, EAGER_AFTER_CHECKS, markdown_preview, per_day_metadata, run_totals
from assets.transcripts import turns
from memlake.distill.cache import ResultCache
from memlake.distill.pending import default_as_of
from memlake.distill.run import distill_pass, write_pass
from memlake.moments import as_utc
from memlake.schemas import EPISODES, LANDING_MANIFEST, PENDING, TURNS
from resources import CoreModelResource
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
            automation_condition=EAGER_AFTER_CHECKS,  # follows a day's turns rebuilt alone
            description="One row per conversation: summary, topics, decisions, action items, key dates, entities, "
            "relations, fact candidates and salience, with provenance, the distiller and the prompt version.",
        ),
        dg.AssetSpec(
            PENDING_KEY,
            group_name="episodes",
            kinds={"polars", "parquet"},
            deps=[turns],
            automation_condition=EAGER_AFTER_CHECKS,  # one step with the episodes: asked for together
            description="One row per conversation waiting for distillation, with the reason.",
        ),
    ],
    partitions_def=day_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    pool=DAY_WRITERS,
)
def episodes(
    context: dg.AssetExecutionContext, config: DistillConfig, lake: LakeResource, core_model: CoreModelResource
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
    every_day = {  # true of every day the run built
        "distiller": distiller.name if distiller else "none",
        "prompt_version": (distiller.prompt_version if distiller else None) or "none",
        "as_of": as_of.isoformat(),
    }
    totals: dict[str, object] = {**stats.as_metadata()}  # the run's: the distiller's calls are not counted by day
    if distiller is not None and hasattr(distiller, "breaker_state"):
        totals["breaker_state"] = distiller.breaker_state()
    per_day_metadata(context, episode_frame, days, lambda day: {
        "dagster/row_count": day.height, "preview": markdown_preview(_episode_preview(day))}, asset_key=EPISODES_KEY)
    per_day_metadata(context, pending_frame, days, lambda day: {
        "dagster/row_count": day.height,
        "preview": markdown_preview(day.select("agent_id", "conversation_id", "reason", "since", "attempts"))},
        asset_key=PENDING_KEY)
    yield dg.MaterializeResult(
        asset_key=EPISODES_KEY,
        metadata={
            **run_totals(context, "episodes/episodes", episode_frame.height, len(days), {
                **totals,
                "token_usage": dg.MetadataValue.json(stats.usage.as_dict()),
                "pending_reasons": dg.MetadataValue.json(dict(stats.pending_reasons)),
                "days_written": len(written),
            }),
            **every_day,
        },
    )
    yield dg.MaterializeResult(
        asset_key=PENDING_KEY,
        metadata={
            **run_totals(context, "episodes/pending", pending_frame.height, len(days),
                         {"pending_reasons": dg.MetadataValue.json(dict(stats.pending_reasons))}),
            "as_of": as_of.isoformat(),
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


ASSETS = [episodes]
CHECKS = [fact_candidates_cite_user_messages, every_conversation_has_an_episode_or_is_pending]
