"""Graph layer: entities resolved from what turns, episodes and facts say, relation versions, the merges made, and
the mentions linking every entity to the messages that name it."""

from collections import Counter

import dagster as dg
import polars as pl

from assets.episodes import EPISODES_KEY
from assets.facts import FACTS_KEY
from assets.inputs import FORGET_LOG, SPLITS_LOG
from assets.shared import EAGER_AFTER_THE_DAYS, LAKE_WRITERS, markdown_preview
from assets.transcripts import turns as turns_asset
from memlake.graph.build import Graph, build_home_graph, counts_by_type
from memlake.graph.picture import neighbourhood_markdown
from memlake.graph.quality import validate_graph
from memlake.graph.reads import named
from memlake.schemas import ENTITIES, ENTITY_MERGES, EPISODES, FACTS, MENTIONS, RELATIONS, TURN_READS, TURNS
from resources.embedder import EmbedderResource
from resources.lake import LakeResource

ENTITIES_KEY = dg.AssetKey(["graph", "entities"])
RELATIONS_KEY = dg.AssetKey(["graph", "relations"])
MERGES_KEY = dg.AssetKey(["graph", "entity_merges"])
MENTIONS_KEY = dg.AssetKey(["graph", "mentions"])


def _spec(key: dg.AssetKey, description: str) -> dg.AssetSpec:
    return dg.AssetSpec(key, deps=[turns_asset.key, EPISODES_KEY, FACTS_KEY, FORGET_LOG, SPLITS_LOG],
                        group_name="graph", kinds={"polars", "parquet"}, automation_condition=EAGER_AFTER_THE_DAYS,
                        description=description)


@dg.multi_asset(
    name="graph",
    specs=[
        _spec(ENTITIES_KEY, "One row per resolved entity per agent: canonical name, type, aliases, provenance."),
        _spec(RELATIONS_KEY, "One row per relation version: source, relation, target, validity, status, provenance."),
        _spec(MERGES_KEY, "One row per merge entity resolution made (rule, reason, score), undone or not."),
        _spec(MENTIONS_KEY, "One row per entity per message naming it: the form said, its type, when."),
    ],
    pool=LAKE_WRITERS,
)
def graph(context: dg.AssetExecutionContext, lake: LakeResource, embedder: EmbedderResource):  # type: ignore[no-untyped-def]
    """One row per entity, relation version, merge and mention: rebuilt whole from turns, episodes, facts, the
    forget log and the splits users made."""
    core = embedder.core()
    built = build_home_graph(lake.settings, lake.lake.read(EPISODES), lake.lake.read(FACTS),
                             core.embed if core is not None else None, lake.lake.read(TURNS),
                             lake.lake.read(TURN_READS))
    closed_now = _closed_since(lake.lake.read(RELATIONS), built.relations)
    lake.lake.write(ENTITIES, built.entities)
    lake.lake.write(RELATIONS, built.relations)
    lake.lake.write(ENTITY_MERGES, built.merges)
    lake.lake.write(MENTIONS, built.mentions)
    lake.lake.write(TURN_READS, built.turn_reads)  # the readings of today's turns only: a forgotten turn's go
    yield from _results(built, closed_now, core.name if core is not None else "none (names and aliases only)")


def _closed_since(before: pl.DataFrame, after: pl.DataFrame) -> int:
    """Relation versions this build closed: closed now, and not closed in the table it replaces."""
    key = ["relation_id", "version"]
    was_closed = before.filter(pl.col("status") != "active").select(key)
    return after.filter(pl.col("status") != "active").select(key).join(was_closed, on=key, how="anti").height


def _results(built: Graph, closed_now: int, embedder: str):  # type: ignore[no-untyped-def]
    entities, relations, merges, mentions = built.entities, built.relations, built.merges, built.mentions
    undone = merges.filter(pl.col("undone_by").is_not_null()).height
    yield dg.MaterializeResult(asset_key=ENTITIES_KEY, metadata={
        "dagster/row_count": entities.height,
        "agents": entities["agent_id"].n_unique() if entities.height else 0,
        "by_type": dg.MetadataValue.json(counts_by_type(entities)),
        "embedder": embedder,
        "preview": markdown_preview(entities.sort("mention_count", descending=True).select(
            "agent_id", "name", "type", "aliases", "mention_count", "first_seen_at", "last_seen_at")),
    })
    yield dg.MaterializeResult(asset_key=RELATIONS_KEY, metadata={
        "dagster/row_count": relations.height,
        "by_status": dg.MetadataValue.json(dict(Counter(relations["status"].to_list()))),
        "by_relation": dg.MetadataValue.json(dict(Counter(relations["relation"].to_list()).most_common(20))),
        "closed_this_run": closed_now,
        "neighbourhood": dg.MetadataValue.md(neighbourhood_markdown(entities, relations)),
        "preview": markdown_preview(named(relations, entities).sort("valid_from", descending=True).select(
            "agent_id", "source_name", "relation", "target_name", "status", "valid_from", "valid_until")),
    })
    yield dg.MaterializeResult(asset_key=MERGES_KEY, metadata={
        "dagster/row_count": merges.height,
        "merges_made": merges.height - undone,
        "undone_by_users": undone,
        "by_rule": dg.MetadataValue.json(dict(Counter(merges["rule"].to_list()))),
        "preview": markdown_preview(merges.sort("score").select(
            "agent_id", "merge_id", "kept_name", "merged_name", "rule", "score", "undone_by")),
    })
    yield dg.MaterializeResult(asset_key=MENTIONS_KEY, metadata={
        "dagster/row_count": mentions.height,
        "messages": mentions["message_id"].n_unique() if mentions.height else 0,
        "by_type": dg.MetadataValue.json(counts_by_type(mentions)),
        "preview": markdown_preview(mentions.sort("said_at", descending=True).select(
            "agent_id", "name", "type", "conversation_id", "message_id", "said_at")),
    })


@dg.asset_check(
    asset=RELATIONS_KEY,
    blocking=True,
    description=(
        "Great Expectations suites: entity ids unique, (relation_id, version) unique, valid_from <= valid_until, "
        "every relation's ends exist and are entities of its own agent (no row refers to another agent's)."
    ),
)
def graph_expectations(lake: LakeResource) -> dg.AssetCheckResult:
    entities, relations = lake.lake.read(ENTITIES), lake.lake.read(RELATIONS)
    result = validate_graph(entities, relations)
    return dg.AssetCheckResult(
        passed=result.success,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={"entities_checked": entities.height, "relations_checked": relations.height,
                  "failed_expectations": dg.MetadataValue.json(result.failures)},
    )


ASSETS = [graph]
CHECKS = [graph_expectations]
