"""Transcript layer: the landing manifest and the turns, partitioned by conversation day."""


from collections import Counter
from datetime import UTC, datetime

import dagster as dg
import polars as pl

from assets.inputs import LANDING
from assets.partitions import checked_days, day_partitions, run_days
from assets.shared import DAY_WRITERS, LAKE_WRITERS, markdown_preview, per_day_metadata, run_totals
from memlake.landing import (
    MANIFEST_STAMP,
    SCANNED_STAMP,
    manifest_frame,
    manifest_version,
    newly_quarantined,
    scan_stamp,
    update_manifest,
)
from memlake.quality import validate_turns
from memlake.schemas import LANDING_MANIFEST, TURNS
from memlake.transcripts import build_turns
from resources.lake import LakeResource


@dg.asset(
    key_prefix="transcripts",
    group_name="transcripts",
    kinds={"polars", "parquet"},
    deps=[LANDING],
    pool=LAKE_WRITERS,
)
def landing_manifest(context: dg.AssetExecutionContext, lake: LakeResource) -> dg.MaterializeResult:
    """One row per landing file × conversation: sha256, format, first seen, partition, status, reason."""
    previous = lake.lake.read(LANDING_MANIFEST)
    now = datetime.now(UTC)
    update = update_manifest(lake.settings, previous, now=now)
    frame = manifest_frame(update)
    lake.lake.write(LANDING_MANIFEST, frame, stamp=scan_stamp(now))
    for bad in update.quarantined:
        context.log.warning(f"quarantined {bad['file']}: {bad['reason']}")
    for again in update.retried:
        context.log.info(f"read again {again['file']} (a limit it was quarantined under has changed): "
                         f"{again['outcome']}")
    for unread in update.ignored:
        context.log.warning(f"ignored {unread['file']}: {unread['reason']}")
    status_counts = Counter(frame["status"].to_list())
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": frame.height,
            "new_files": len(update.new_files),
            "touched_days": ", ".join(sorted(update.touched_days)) or "none",
            "quarantined": dg.MetadataValue.json(update.quarantined),
            "read_again": dg.MetadataValue.json(update.retried),  # quarantined by a limit since changed
            "ignored": dg.MetadataValue.json(update.ignored),  # in landing, left unread: hidden, links, pipes
            "by_status": dg.MetadataValue.json(dict(status_counts)),
            "preview": markdown_preview(
                frame.select("source_file", "source_format", "agent_id", "conversation_id", "partition", "status")
                .sort("partition", descending=True, nulls_last=True)
            ),
        }
    )


@dg.asset_check(asset=landing_manifest, description=(
    "Warns when the last landing scan quarantined a file it had not seen before, naming each file, its reason "
    "and where in the file (the drop's other files went on; the copy and its reason are under quarantine/)."
))
def no_new_file_quarantined(lake: LakeResource) -> dg.AssetCheckResult:
    manifest = lake.lake.read(LANDING_MANIFEST)
    bad = newly_quarantined(lake.settings, manifest, lake.lake.stamp(LANDING_MANIFEST, SCANNED_STAMP))
    named = "; ".join(f"{b['file']}: {b['reason']}" + (f" (at {b['where']})" if b["where"] else "") for b in bad)
    return dg.AssetCheckResult(
        passed=not bad,
        severity=dg.AssetCheckSeverity.WARN,
        description=f"{len(bad)} new file(s) quarantined: {named}" if bad else None,
        metadata={
            "rows_checked": manifest.height,
            "quarantined": dg.MetadataValue.json(bad),
            "preview": markdown_preview(pl.DataFrame(bad)),
        },
    )


@dg.asset(
    key_prefix="transcripts",
    group_name="transcripts",
    kinds={"polars", "parquet"},
    deps=[landing_manifest, LANDING],  # the files the manifest names
    partitions_def=day_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    pool=DAY_WRITERS,
)
def turns(context: dg.AssetExecutionContext, lake: LakeResource) -> dg.MaterializeResult:
    """One row per message turn, in daily partitions by the conversation's start date (UTC)."""
    manifest = lake.lake.read(LANDING_MANIFEST)
    days = run_days(context)
    existing = set(lake.lake.partitions(TURNS))
    build = build_turns(lake.settings, manifest, days, lambda: lake.lake.read(TURNS, days=days))
    # Days with no data get no file, unless one exists and must be emptied, or the manifest names the day
    # (the stamp then says it was built, so an ingested conversation with no turn left is not asked for again).
    named = set(manifest.filter(pl.col("status") == "ingested")["partition"].to_list())
    by_day = {day: build.rows.get(day, []) for day in days if build.rows.get(day) or day in existing or day in named}
    frame = lake.lake.write_partitions(TURNS, by_day, stamp={MANIFEST_STAMP: manifest_version(manifest)})
    if build.missing_files:
        context.log.warning(f"landing files missing or changed since first seen: {sorted(set(build.missing_files))}; "
                            f"the {build.kept_rows} turn(s) built from them before stand in for them (a newer "
                            "export of the same conversation still wins a message)")
    per_day_metadata(context, frame, by_day, _turns_of_a_day)
    return dg.MaterializeResult(metadata=run_totals(context, "transcripts/turns", frame.height, len(days), {
        "days_written": len(by_day), "skipped_messages": dg.MetadataValue.json(dict(build.skipped))}))


def _turns_of_a_day(frame: pl.DataFrame) -> dict[str, object]:
    """A day's row count, conversations, agents and a preview of its conversations."""
    per_conversation = (
        frame.group_by("agent_id", "conversation_id")
        .agg(pl.len().alias("turns"), pl.col("role").n_unique().alias("roles"))
        .sort("agent_id", "conversation_id")
        if frame.height
        else frame
    )
    return {
        "dagster/row_count": frame.height,
        "conversations": frame.select("agent_id", "conversation_id").n_unique() if frame.height else 0,
        "agents": frame["agent_id"].n_unique() if frame.height else 0,
        "preview": markdown_preview(per_conversation),
    }


@dg.asset_check(asset=turns, blocking=True, description=(
    "Great Expectations suite: ids not null, role allowed, created_at present and not in the future, "
    "(agent_id, conversation_id, message_id) unique, content not null."
))
def turns_expectations(context: dg.AssetCheckExecutionContext, lake: LakeResource) -> dg.AssetCheckResult:
    frame = lake.lake.read(TURNS, days=checked_days(context))
    result = validate_turns(frame, now=datetime.now(UTC))
    return dg.AssetCheckResult(
        passed=result.success,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={
            "rows_checked": frame.height,
            "failed_expectations": dg.MetadataValue.json(result.failures),
        },
    )


ASSETS = [landing_manifest, turns]
CHECKS = [no_new_file_quarantined, turns_expectations]
