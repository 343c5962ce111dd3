"""Facts and profile layers: the verification fold over every episode's fact candidates, and the profiles."""

from collections import Counter

import dagster as dg
import polars as pl

from assets.episodes import EPISODES_KEY
from assets.inputs import FORGET_LOG, OVERRIDES_LOG
from assets.shared import EAGER, EAGER_AFTER_THE_DAYS, LAKE_WRITERS, markdown_preview
from assets.transcripts import turns
from memlake.distill.confidence import shown
from memlake.erase import forgotten_content_left, read_receipts
from memlake.facts.candidates import candidates_from_episodes
from memlake.facts.fold import FoldConfig, fold
from memlake.facts.overrides import FOLDED_ENTRIES, log_entries, read_forgets, read_overrides
from memlake.facts.profile import PROFILE_RULES, PROFILE_RULES_STAMP, profile_versions
from memlake.facts.profile_model import ProfileWriter
from memlake.facts.quality import HELD_BACK, broken_rows, describe_rows, hold_back_broken_agents, validate_facts
from memlake.schemas import EPISODES, FACT_EDGES, FACTS, PROFILES, TURNS
from resources import CoreModelResource
from resources.embedder import EmbedderResource
from resources.lake import LakeResource

FACTS_KEY = dg.AssetKey(["facts", "facts"])
EDGES_KEY = dg.AssetKey(["facts", "fact_edges"])


@dg.multi_asset(
    name="facts",
    specs=[
        dg.AssetSpec(
            FACTS_KEY,
            deps=[EPISODES_KEY, turns, OVERRIDES_LOG, FORGET_LOG],  # not episodes/pending: the fold never reads it
            group_name="facts",
            kinds={"polars", "parquet"},
            automation_condition=EAGER_AFTER_THE_DAYS,
            description="One row per fact version, per agent: typed, verified, with validity and provenance.",
        ),
        dg.AssetSpec(
            EDGES_KEY,
            deps=[EPISODES_KEY, turns, OVERRIDES_LOG, FORGET_LOG],  # not episodes/pending: the fold never reads it
            group_name="facts",
            kinds={"polars", "parquet"},
            automation_condition=EAGER_AFTER_THE_DAYS,
            description="One row per typed edge between fact versions (update, contradict).",
        ),
    ],
    pool=LAKE_WRITERS,
)
def facts(context: dg.AssetExecutionContext, lake: LakeResource, embedder: EmbedderResource):  # type: ignore[no-untyped-def]
    """One row per fact version: every episode's candidates, the overrides and the forget log, folded in time order."""
    settings = lake.settings
    batch = candidates_from_episodes(lake.lake.read(EPISODES), lake.lake.read(TURNS))
    # named before the logs are read: an entry written meanwhile leaves the stamp behind, so it is folded next run
    entries = log_entries(settings)
    overrides, forgets = read_overrides(settings), read_forgets(settings)
    core = embedder.core()
    result = fold(batch.candidates, overrides, forgets, FoldConfig.from_settings(settings),
                  core.embed if core is not None else None)
    # an agent whose new rows break a chain rule keeps its last rows, so the blocking check passes for the others
    sound = hold_back_broken_agents(result.facts, result.edges, lake.lake.read(FACTS), lake.lake.read(FACT_EDGES))
    lake.lake.write(FACTS, sound.facts, stamp={FOLDED_ENTRIES: entries, HELD_BACK: sound.stamp()})
    lake.lake.write(FACT_EDGES, sound.edges)
    for agent, rows in sound.held_back.items():
        context.log.warning(f"facts of agent {agent!r} held back (its last facts kept): " + "; ".join(rows))
    stats = result.stats.as_dict()
    active = pl.col("status") == "active"
    if stats["unresolved_overrides"]:
        context.log.warning(f"overrides whose target fact was not found: {stats['unresolved_overrides']}")
    yield dg.MaterializeResult(
        asset_key=FACTS_KEY,
        metadata={
            "dagster/row_count": sound.facts.height,
            "agents": sound.facts["agent_id"].n_unique() if sound.facts.height else 0,
            "by_status": dg.MetadataValue.json(dict(Counter(sound.facts["status"].to_list()))),
            # active facts the agent is shown, and those held back as candidates (below `shown_confidence`)
            "active_shown": sound.facts.filter(active & shown(settings.shown_confidence)).height,
            "active_candidates": sound.facts.filter(active & ~shown(settings.shown_confidence)).height,
            "held_back": dg.MetadataValue.json(sound.held_back),
            "fold": dg.MetadataValue.json(stats),
            "skipped_candidates": dg.MetadataValue.json(dict(batch.skipped)),
            "embedder": core.name if core is not None else "none (Jaccard rules only)",
            "preview": markdown_preview(
                sound.facts.sort("created_at", descending=True).select(
                    "agent_id", "fact_id", "version", "type", "subject", "slot", "value", "status", "confidence",
                    "created_at",
                )
            ),
        },
    )
    yield dg.MaterializeResult(
        asset_key=EDGES_KEY,
        metadata={
            "dagster/row_count": sound.edges.height,
            "by_type": dg.MetadataValue.json(dict(Counter(sound.edges["edge_type"].to_list()))),
            "preview": markdown_preview(sound.edges.sort("created_at", descending=True)),
        },
    )


@dg.asset_check(
    asset=FACTS_KEY,
    blocking=True,
    description=(
        "Great Expectations suite: (fact_id, version) unique, confidence and importance in [0, 1], "
        "valid_from <= valid_until, superseded_by names an existing fact of the same agent, each "
        "slot chain (agent, subject, slot; and value for a multi-valued slot) has exactly one active version. "
        "The facts asset holds back an agent whose rows break a chain rule; this is the backstop."
    ),
)
def facts_expectations(lake: LakeResource) -> dg.AssetCheckResult:
    frame = lake.lake.read(FACTS)
    result = validate_facts(frame)
    broken = describe_rows(broken_rows(frame)) if not result.success else []
    return dg.AssetCheckResult(
        passed=result.success,
        severity=dg.AssetCheckSeverity.ERROR,
        description="; ".join(broken) or None,  # the rows to look at, where a chain rule is what broke
        metadata={"rows_checked": frame.height, "failed_expectations": dg.MetadataValue.json(result.failures),
                  "broken_rows": dg.MetadataValue.json(broken)},
    )


@dg.asset(
    key_prefix="profile",
    group_name="profile",
    kinds={"polars", "parquet"},
    deps=[facts],
    automation_condition=EAGER,
    pool=LAKE_WRITERS,
)
def profiles(
    context: dg.AssetExecutionContext, lake: LakeResource, core_model: CoreModelResource
) -> dg.MaterializeResult:
    """One row per agent per profile version: cited lines by the core model when configured, else assembled."""
    settings = lake.settings
    writer = ProfileWriter.load(core_model.config(), lake.lake) if core_model.configured else None
    frame = profile_versions(
        lake.lake.read(FACTS), lake.lake.read(FACT_EDGES), settings.profile_regenerate_threshold,
        writer.write if writer is not None else None, shown_confidence=settings.shown_confidence,
    )
    lake.lake.write(PROFILES, frame, stamp={PROFILE_RULES_STAMP: PROFILE_RULES})
    latest = frame.sort("version").group_by("agent_id").last() if frame.height else frame
    metadata: dict[str, object] = {
        "dagster/row_count": frame.height,
        "agents": latest.height,
        "writer": "assembled from active facts (no core model call)",
        "regenerate_threshold": settings.profile_regenerate_threshold,
        "preview": markdown_preview(
            latest.select("agent_id", "version", "contributions", pl.col("lines").list.len().alias("lines"))
        ),
    }
    if writer is not None:
        writer.save(lake.lake)
        model = writer.metadata()
        metadata["writer"] = f"core model {writer.name} (assembled where it could not write)"
        metadata["by_writer"] = dg.MetadataValue.json(dict(Counter(frame["writer"].to_list())))
        metadata["profile_model"] = dg.MetadataValue.json(model)
        if model["fallbacks"]:
            metadata["fallback_note"] = (
                f"{model['fallbacks']} version(s) assembled instead: {model['fallback_reasons']}"
            )
            context.log.warning(f"profile versions assembled, core model failed: {model['fallback_reasons']}")
    return dg.MaterializeResult(metadata=metadata)  # type: ignore[arg-type]


@dg.asset_check(
    asset=FACTS_KEY,
    blocking=False,
    description=(
        "Every forget's receipt (inputs/forget_receipts) names the messages and content hashes it removed; this "
        "scans every store (each lake table, every version of each LanceDB table, landing, the embedding cache) "
        "for them and fails naming each store that still holds one. Runs with every fold, which a forget starts."
    ),
)
def forgotten_content_absent(lake: LakeResource) -> dg.AssetCheckResult:
    left = forgotten_content_left(lake.settings)
    receipts = read_receipts(lake.settings)
    return dg.AssetCheckResult(
        passed=not left,
        severity=dg.AssetCheckSeverity.ERROR,
        description=("forgotten content still in: " + ", ".join(f"{store} ({n})" for store, n in left.items()))
        if left else None,
        metadata={"receipts": receipts.height, "stores_holding_forgotten_content": dg.MetadataValue.json(left),
                  "latest_receipt": markdown_preview(receipts.tail(5).select(
                      "forget_id", "agent_id", "scope", "target", "asked_at", "written_at"))},
    )


ASSETS = [facts, profiles]
CHECKS = [facts_expectations, forgotten_content_absent]
