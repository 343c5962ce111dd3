"""Search layer: LanceDB tables (vector + native full-text index) over chunks, episodes and facts.

Each index is rebuildable from the lake alone. Writes are incremental: a row is
embedded again only when its text or the embedder changed, and then only a text
the home's embedding cache has not got; the rows of a rebuilt scope (days, or
the whole table) are replaced in one commit.
"""


from typing import Any

import dagster as dg
import polars as pl

from assets.chunks import chunks, sync_chunk_rows
from assets.episodes import EPISODES_KEY
from assets.facts import FACTS_KEY
from assets.partitions import day_partitions, run_days
from assets.shared import EAGER, INDEX_WRITERS, markdown_preview, per_day_metadata, run_totals
from memlake.schemas import CHUNK_INDEX, CHUNKS, EPISODE_INDEX, EPISODES, FACT_INDEX, FACTS
from memlake.search import EPISODE_INDEX_SCHEMA, FACT_INDEX_SCHEMA, episode_index_rows, fact_index_rows
from memlake.vectors import NO_EMBEDDER, SyncResult, day_scope
from resources.embedder import EmbedderResource
from resources.lake import LakeResource
from resources.vectors import VectorStoreResource


def _embedding(
    embedder: EmbedderResource, vectors: VectorStoreResource, table: str
) -> tuple[object, str, int, str | None]:
    """(embed function or None, embedder name, dim, why the table must be indexed whole, or None)."""
    core = embedder.core()
    name = core.name if core is not None else NO_EMBEDDER
    store = vectors.core()
    if not store.exists(table):
        why: str | None = "is missing"
    else:
        built_with = store.embedder_of(table)
        why = "was built by another embedder" if built_with is not None and built_with != name else None
    return (core.embed if core is not None else None), name, (core.dim if core else 0), why


def _whole_if(why: str | None, days: list[str], lake_days: list[str], table: str, name: str,
              context: dg.AssetExecutionContext) -> list[str]:
    """The days to index: the run's, or every day of the lake when the table is missing or another embedder
    built it (a run after `lancedb/` was lost would otherwise index its own days alone)."""
    if why is None:
        return days
    every = sorted(set(days) | set(lake_days))
    if every != sorted(days):
        context.log.warning(f"{table} {why}: indexing every day of the lake ({len(every)}) with {name}")
    return every


def _metadata(
    context: dg.AssetExecutionContext, what: str, result: SyncResult, frame: pl.DataFrame, columns: list[str],
    days: int = 1,
) -> dict[str, Any]:
    """`days`: how many days the run indexed (an unpartitioned index is one whole, like one day); over several, the
    sync's counts are the run's, said in its log (`run_totals`), and each day shows its own rows."""
    return {
        **run_totals(context, what, result.rows, days, {
            "embedded": result.embedded,
            "vectors_from_cache": result.from_cache,
            "reused_vectors": result.reused,
            "pooled_vectors": result.pooled,
            "spanned_vectors": result.spanned,
            "text_only_keys": result.text_only,
            "deleted_stale_rows": result.deleted,
            "rebuilt_whole_table": result.rebuilt_table,
            "embed_seconds": round(result.embed_seconds, 3),
            "preview": markdown_preview(frame.select([c for c in columns if c in frame.columns])),
        }),
        "embedder": result.embedder,  # true of every day it indexed
        "full_text_only": result.embedder == NO_EMBEDDER,
    }


def _rows_of_a_day(frame: pl.DataFrame) -> dict[str, Any]:
    """A day's index rows (its rows of the lake table, replaced in the index by this run) and their preview."""
    return {"dagster/row_count": frame.height,
            "preview": markdown_preview(frame.select([c for c in ("conversation_id", "kind") if c in frame.columns]))}


@dg.asset(
    key_prefix="search",
    group_name="search",
    kinds={"lancedb"},
    deps=[chunks],
    partitions_def=day_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    pool=INDEX_WRITERS,
    automation_condition=EAGER,  # follows its table when that is rebuilt alone (a UI click, pending retries)
)
def chunk_index(
    context: dg.AssetExecutionContext, lake: LakeResource, embedder: EmbedderResource, vectors: VectorStoreResource
) -> dg.MaterializeResult:
    """One row per chunk in LanceDB: its vector and full-text index, replaced a day at a time."""
    run = days = run_days(context)
    _, name, _, why = _embedding(embedder, vectors, CHUNK_INDEX)
    days = _whole_if(why, days, lake.lake.partitions(CHUNKS), CHUNK_INDEX, name, context)
    frame = lake.lake.read(CHUNKS, days=days)
    result = sync_chunk_rows(vectors.core(), frame, days, embedder, lake.settings)
    if result.embedder == NO_EMBEDDER:
        context.log.warning("no embedding model available: chunk_index is full-text only")
    per_day_metadata(context, frame, run, _rows_of_a_day)
    return dg.MaterializeResult(
        metadata=_metadata(
            context, "search/chunk_index", result, frame, ["conversation_id", "kind", "token_count", "text"],
            days=len(days)
        )
    )


@dg.asset(
    key_prefix="search",
    group_name="search",
    kinds={"lancedb"},
    deps=[EPISODES_KEY],  # what it indexes; not episodes/pending
    partitions_def=day_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    pool=INDEX_WRITERS,
    automation_condition=EAGER,  # follows its table when that is rebuilt alone (a UI click, pending retries)
)
def episode_index(
    context: dg.AssetExecutionContext, lake: LakeResource, embedder: EmbedderResource, vectors: VectorStoreResource
) -> dg.MaterializeResult:
    """One row per episode in LanceDB: title, summary, topics and decisions, embedded and full-text indexed."""
    run = days = run_days(context)
    embed, name, dim, why = _embedding(embedder, vectors, EPISODE_INDEX)
    days = _whole_if(why, days, lake.lake.partitions(EPISODES), EPISODE_INDEX, name, context)
    frame = episode_index_rows(lake.lake.read(EPISODES, days=days))
    result = vectors.core().sync(
        EPISODE_INDEX,
        frame,
        base_schema=EPISODE_INDEX_SCHEMA,
        key="episode_key",
        scope=day_scope(days),
        embed=embed,  # type: ignore[arg-type]
        embedder=name,
        dim=dim,
        cache=embedder.cache(),
    )
    per_day_metadata(context, frame, run, _rows_of_a_day)
    return dg.MaterializeResult(metadata=_metadata(context, "search/episode_index", result, frame,
                                                      ["conversation_id", "title", "text"], days=len(days)))


@dg.asset(
    key_prefix="search",
    group_name="search",
    kinds={"lancedb"},
    deps=[FACTS_KEY],  # what it indexes; the edges are the profile's
    pool=INDEX_WRITERS,
    automation_condition=EAGER,  # follows its table when that is rebuilt alone (a UI click, pending retries)
)
def fact_index(
    context: dg.AssetExecutionContext, lake: LakeResource, embedder: EmbedderResource, vectors: VectorStoreResource
) -> dg.MaterializeResult:
    """One row per fact version in LanceDB; search returns active facts unless asked otherwise."""
    embed, name, dim, _ = _embedding(embedder, vectors, FACT_INDEX)
    frame = fact_index_rows(lake.lake.read(FACTS))
    result = vectors.core().sync(
        FACT_INDEX,
        frame,
        base_schema=FACT_INDEX_SCHEMA,
        key="fact_key",
        scope="true",  # the facts table is unpartitioned: the index mirrors all of it
        embed=embed,  # type: ignore[arg-type]
        embedder=name,
        dim=dim,
        cache=embedder.cache(),
    )
    return dg.MaterializeResult(metadata=_metadata(context, "search/fact_index", result, frame,
                                                      ["fact_key", "type", "status", "text"]))


ASSETS = [chunk_index, episode_index, fact_index]
CHECKS: list[dg.AssetChecksDefinition] = []
