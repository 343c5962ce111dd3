"""Transcript layer, retrieval units: `transcripts/chunks`, in the same daily partitions as the turns."""


from collections import Counter

import dagster as dg
import polars as pl

from assets.partitions import day_partitions, run_days
from assets.shared import EAGER_AFTER_CHECKS, LAKE_WRITERS, markdown_preview, per_day_metadata, run_totals
from assets.transcripts import turns
from memlake.chunks import RECIPE_STAMP, build_chunks_by_day, chunk_recipe
from memlake.schemas import CHUNKS, TURNS
from resources.embedder import EmbedderResource
from resources.lake import LakeResource


@dg.asset(
    key_prefix="transcripts",
    group_name="transcripts",
    kinds={"polars", "parquet"},
    deps=[turns],
    partitions_def=day_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    pool=LAKE_WRITERS,
    automation_condition=EAGER_AFTER_CHECKS,  # follows a day's turns rebuilt alone
)
def chunks(context: dg.AssetExecutionContext, lake: LakeResource, embedder: EmbedderResource) -> dg.MaterializeResult:
    """One row per retrieval unit, per day of turns: a turn, a conversation, a window, a sentence, a passage or a
    question.

    A turn's sentence (a long turn's passage) and the question it replies to are keys of that turn: a hit on them
    ranks the turn.
    """
    days = run_days(context)
    settings = lake.settings
    source = lake.lake.read(TURNS, days=days)
    existing = set(lake.lake.partitions(CHUNKS))
    by_day = build_chunks_by_day(source, embedder.count_tokens, settings.chunking)
    # No turns, no chunks file; an existing one is emptied rather than left with stale rows.
    empty = lake.lake.empty(CHUNKS)
    to_write = {day: by_day.get(day, empty) for day in days if day in by_day or day in existing}
    recipe = chunk_recipe(settings.chunking)
    frame = lake.lake.write_partitions(CHUNKS, to_write, stamp={RECIPE_STAMP: recipe})
    per_day_metadata(context, frame, to_write, _chunks_of_a_day)
    return dg.MaterializeResult(metadata={
        **run_totals(context, "transcripts/chunks", frame.height, len(days), {"days_written": len(to_write)}),
        "tokenizer": embedder.name,  # true of every day it built
        "recipe": recipe,
    })


def _chunks_of_a_day(frame: pl.DataFrame) -> dict[str, object]:
    """A day's row count, chunks by kind, tokens and a preview of its turn chunks."""
    return {
        "dagster/row_count": frame.height,
        "by_kind": dg.MetadataValue.json(dict(Counter(frame["kind"].to_list()))),
        "tokens": int(frame["token_count"].sum()) if frame.height else 0,
        "preview": markdown_preview(
            frame.filter(pl.col("kind") == "turn").select("conversation_id", "message_ids", "token_count", "text")
        ),
    }


ASSETS = [chunks]
CHECKS: list[dg.AssetChecksDefinition] = []
