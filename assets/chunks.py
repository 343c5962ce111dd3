"""Transcript layer, retrieval units: `transcripts/chunks`, in the same daily partitions as the turns."""


from collections import Counter

import dagster as dg
import polars as pl

from assets.partitions import day_partitions, run_days
from assets.shared import DAY_WRITERS, DAYS_JOB, EAGER_AFTER_CHECKS, markdown_preview, per_day_metadata, run_totals
from assets.transcripts import turns
from memlake.chunks import RECIPE_STAMP, build_chunks_by_day, chunk_recipe, pooled_chunk_kinds, spanned_chunk_kinds
from memlake.schemas import CHUNK_INDEX, CHUNKS, TURNS
from memlake.settings import Settings
from memlake.vectors import SyncResult, VectorStore, day_scope
from resources.embedder import EmbedderResource
from resources.lake import LakeResource


@dg.asset(
    key_prefix="transcripts",
    group_name="transcripts",
    kinds={"polars", "parquet"},
    deps=[turns],
    partitions_def=day_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    pool=DAY_WRITERS,
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
    days_at_once = context.dagster_run.job_name == DAYS_JOB  # one of the runs building days at once
    embedded = embed_into_cache(frame, days, embedder, settings) if days_at_once else None
    vectors = {} if embedded is None else {"embedded_for_the_index": embedded.embedded,
                                           "embed_seconds": round(embedded.embed_seconds, 3)}
    return dg.MaterializeResult(metadata={
        **run_totals(context, "transcripts/chunks", frame.height, len(days),
                     {"days_written": len(to_write), **vectors}),
        "tokenizer": embedder.name,  # true of every day it built
        "recipe": recipe,
    })


def sync_chunk_rows(
    store: VectorStore, frame: pl.DataFrame, days: list[str], embedder: EmbedderResource, settings: Settings,
    embed_only: bool = False,
) -> SyncResult:
    """Make the chunk index's rows of `days` in `store` exactly `frame`'s, embedding what it has no vector for
    (through the home's embedding cache): the chunk index's one sync, for its commit and, `embed_only`, for
    `embed_into_cache`."""
    core = embedder.core()
    return store.sync(
        CHUNK_INDEX,
        frame,
        base_schema=CHUNKS.schema,
        key="chunk_id",
        scope=day_scope(days),
        embed=core.embed if core is not None else None,  # type: ignore[arg-type]
        embedder=embedder.name,
        dim=core.dim if core is not None else 0,
        pool_by="conversation_id",
        pooled_kinds=pooled_chunk_kinds(settings.chunking),
        cache=embedder.cache(),
        spanned_kinds=spanned_chunk_kinds(settings.chunking),
        embed_spans=getattr(core, "embed_spans", None),  # the onnx backend's; others embed the text
        embed_only=embed_only,
    )


def embed_into_cache(
    frame: pl.DataFrame, days: list[str], embedder: EmbedderResource, settings: Settings
) -> SyncResult | None:
    """With days built at once (`run_workers` > 1): the vectors of these chunks, into the home's embedding cache,
    by the index's own sync with no table written. The embedding (most of an ingest's time) then runs in each day
    run's process at once, and the chunk index's commit, one at a time across runs (its pool), reads them from the
    cache. None when there is no model or no cache to fill."""
    if embedder.core() is None or embedder.cache() is None or frame.height == 0:
        return None
    return sync_chunk_rows(VectorStore.of(settings), frame, days, embedder, settings, embed_only=True)


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
