"""What the UI's lineage says about each asset, taken from the code and the home that build it: a lake table's
columns (its one schema in memlake/schemas.py), table name and folder; the owner; the kinds of what runs (the
episodes' distiller: the offline one reads with spaCy, a configured endpoint is an OpenAI-compatible model);
and the code version of the assets whose logic has one, so Dagster marks them changed when it changes."""

from collections.abc import Sequence

import dagster as dg

from assets.inputs import LANDING, LOG_TABLES
from assets.maintenance import SWEEP_EDGES_KEY
from memlake.chunks import chunk_recipe
from memlake.distill.offline.distiller import OFFLINE_DISTILLER_VERSION
from memlake.distill.prompt import PROMPT_VERSION
from memlake.facts.profile import PROFILE_RULES
from memlake.inputs import log_dir
from memlake.schemas import CHUNK_INDEX, EPISODE_INDEX, FACT_INDEX, PARTITION_COLUMN, SWEEP_EDGES, TABLES, Table
from memlake.settings import Settings
from memlake.storage import index_store, lake_store

OWNER = "team:memlake"
EPISODES = dg.AssetKey(["episodes", "episodes"])
SEARCH_INDEXES = {dg.AssetKey(["search", name]) for name in (CHUNK_INDEX, EPISODE_INDEX, FACT_INDEX)}
DISTILLER_KINDS = {"openai", "spacy"}  # what the episodes asset may run; the lineage shows the one that does


def described_assets(assets: Sequence[dg.AssetsDefinition], settings: Settings) -> list[dg.AssetsDefinition]:
    """`assets` as the UI shows them for `settings`' home."""
    return list(dg.map_asset_specs(lambda spec: _described(spec, settings), assets))


# A lake table under an asset key of another name (two nodes labelled `fact_edges` could not be told apart).
RENAMED = {SWEEP_EDGES_KEY: SWEEP_EDGES}


def _described(spec: dg.AssetSpec, settings: Settings) -> dg.AssetSpec:
    table = RENAMED.get(spec.key) or TABLES.get(spec.key.to_user_string())
    metadata = {} if table is None else table_metadata(table, settings)
    if spec.key in SEARCH_INDEXES:
        metadata = index_metadata(spec.key.path[-1], settings)
    if spec.key in LOG_TABLES:
        metadata = log_metadata(LOG_TABLES[spec.key], settings)
    if spec.key == LANDING.key:
        metadata = {"path": dg.MetadataValue.path(str(settings.landing_dir))}
    kinds = set(spec.kinds)
    if spec.key == EPISODES:
        kinds = kinds - DISTILLER_KINDS | distiller_kinds(settings)
    return spec.replace_attributes(
        owners=[*spec.owners, OWNER] if OWNER not in spec.owners else spec.owners,
        kinds=kinds,
        code_version=code_versions(settings).get(spec.key, spec.code_version),
    ).merge_attributes(metadata=metadata)


def table_metadata(table: Table, settings: Settings) -> dict[str, object]:
    """A lake table's columns, name and folder, as Dagster's table metadata."""
    columns = _columns(table)
    if table.partitioned:  # a hive folder, a column of every read
        columns.append(dg.TableColumn(PARTITION_COLUMN, "string", description="the conversation day (UTC)"))
    return {
        "dagster/column_schema": dg.TableSchema(columns=columns),
        "dagster/table_name": f"{table.layer}.{table.name}",
        "path": dg.MetadataValue.path(f"{lake_store(settings).uri}/{table.layer}/{table.name}"),
    }


def log_metadata(table: Table, settings: Settings) -> dict[str, object]:
    """An input log's columns and folder (one Parquet file per write)."""
    return {"dagster/column_schema": dg.TableSchema(columns=_columns(table)),
            "path": dg.MetadataValue.path(log_dir(settings, table).uri)}


def _columns(table: Table) -> list[dg.TableColumn]:
    return [dg.TableColumn(field.name, str(field.type)) for field in table.schema]


def index_metadata(name: str, settings: Settings) -> dict[str, object]:
    """A LanceDB table's name and folder (the search layer's own store, rebuildable from the lake)."""
    return {
        "dagster/table_name": f"lancedb.{name}",
        "path": dg.MetadataValue.path(f"{index_store(settings).uri}/{name}.lance"),
    }


def distiller_kinds(settings: Settings) -> set[str]:
    """The kind of the distiller that runs (as `resources.CoreModelResource.distiller` picks it): none when none."""
    if (settings.core_base_url or "").strip():
        return {"openai"}
    return {"spacy"} if settings.offline_distiller else set()


def code_versions(settings: Settings) -> dict[dg.AssetKey, str]:
    """The assets whose logic has a version: the distiller (its prompt and model, or the offline rules), the
    chunker with its settings, the profile rules."""
    if (settings.core_base_url or "").strip():
        distiller = f"{PROMPT_VERSION} {settings.core_model}"
    else:
        distiller = OFFLINE_DISTILLER_VERSION if settings.offline_distiller else "none"
    return {
        EPISODES: distiller,
        dg.AssetKey(["transcripts", "chunks"]): chunk_recipe(settings.chunking),
        dg.AssetKey(["profile", "profiles"]): PROFILE_RULES,
    }
