"""What the UI's lineage says about each asset is true: every lake table's columns (from memlake/schemas.py),
its table name and where it lives; an owner; the kinds of what runs (episodes are not "openai" when the offline
distiller runs); the code version of assets whose logic has one."""

import dagster as dg

from memlake.schemas import TABLES


def _graph(settings):
    from pipelines.definitions import build_definitions

    return build_definitions(settings=settings).resolve_asset_graph()


def _value(metadata: object) -> object:
    """A metadata entry's value, whether Dagster keeps it raw or as a MetadataValue."""
    return getattr(metadata, "value", metadata)


def test_every_lake_table_shows_its_columns_table_name_and_path_from_the_one_schema(settings):
    graph = _graph(settings)
    by_table = {}
    for key in graph.get_all_asset_keys():
        node = graph.get(key)
        assert node.owners, f"{key.to_user_string()} has no owner"
        if "dagster/table_name" in node.metadata:
            by_table[_value(node.metadata["dagster/table_name"])] = node
    for table in TABLES.values():
        if table.path in CACHES:
            continue
        node = by_table[f"{table.layer}.{table.name}"]  # every lake table is an asset's, whatever its key says
        schema = _value(node.metadata["dagster/column_schema"])
        expected = [field.name for field in table.schema] + (["day"] if table.partitioned else [])
        assert [column.name for column in schema.columns] == expected
        assert _value(node.metadata["path"]) == str(settings.lake_dir / table.layer / table.name)


# The tables that keep a model's (or a parser's) answers by their inputs' hash, so a rerun never pays twice: each is
# the inside of the one asset that keeps it, as `judge_cache` was an asset and the other three were not (issue 40).
CACHES = {"episodes/distill_cache", "profile/model_cache", "maintenance/judge_cache", "graph/turn_reads"}


def test_no_cache_is_an_asset_and_every_node_has_a_name_of_its_own(settings):
    """Two nodes were both labelled `fact_edges` (the UI labels a node by its key's last part), and one of the four
    caches showed as an asset while three did not."""
    graph = _graph(settings)
    keys = [key for key in graph.get_all_asset_keys()]
    assert not {key.to_user_string() for key in keys} & CACHES
    labels = [key.path[-1] for key in keys]
    assert sorted(labels) == sorted(set(labels)), sorted(label for label in labels if labels.count(label) > 1)
    # the lint sweep's contradiction edges are a node of their own name, on the lake table they always had
    contradictions = graph.get(dg.AssetKey(["maintenance", "contradictions"]))
    assert _value(contradictions.metadata["dagster/table_name"]) == "maintenance.fact_edges"


def test_lineage_starts_at_the_landing_folder_and_the_logs_people_write(settings):
    """What the pipeline reads besides its own tables: the landing folder, and the override, forget, access and
    graph-split logs. Each is a source node (never materialized by memlake) with its folder, and its columns when
    it is a log, drawn into every asset that reads it and no other."""
    from memlake.inputs import log_dir
    from memlake.schemas import ACCESS, FORGET, GRAPH_SPLITS, OVERRIDES

    graph = _graph(settings)

    def children(name: str) -> set[str]:
        node = graph.get(dg.AssetKey(["inputs", name]))
        assert not node.is_materializable and node.owners, name
        return {child.to_user_string() for child in node.child_keys}

    sweep = {"maintenance/fact_status", "maintenance/reports", "maintenance/audit", "maintenance/contradictions"}
    folds = {"facts/facts", "facts/fact_edges"}
    graph_tables = {"graph/entities", "graph/relations", "graph/entity_merges", "graph/mentions"}
    assert children("landing") == {"transcripts/landing_manifest", "transcripts/turns"}
    assert children("overrides") == folds
    assert children("forget") == folds | graph_tables
    assert children("graph_splits") == graph_tables
    assert children("access") == sweep  # the consolidation's use counts
    landing = graph.get(dg.AssetKey(["inputs", "landing"]))
    assert _value(landing.metadata["path"]) == str(settings.landing_dir)
    for table in (OVERRIDES, FORGET, ACCESS, GRAPH_SPLITS):
        node = graph.get(dg.AssetKey(["inputs", table.name]))
        assert _value(node.metadata["path"]) == log_dir(settings, table).uri
        columns = [column.name for column in _value(node.metadata["dagster/column_schema"]).columns]
        assert columns == [field.name for field in table.schema]


def test_episodes_kinds_say_which_distiller_runs_and_code_versions_say_which_logic(settings):
    from memlake.chunks import chunk_recipe
    from memlake.distill.offline.distiller import OFFLINE_DISTILLER_VERSION
    from memlake.facts.profile import PROFILE_RULES
    from memlake.settings import load_settings

    offline = _graph(settings)
    episodes = offline.get(dg.AssetKey(["episodes", "episodes"]))
    assert "openai" not in episodes.kinds and "spacy" in episodes.kinds
    assert episodes.code_version == OFFLINE_DISTILLER_VERSION
    assert offline.get(dg.AssetKey(["transcripts", "chunks"])).code_version == chunk_recipe(settings)
    assert offline.get(dg.AssetKey(["profile", "profiles"])).code_version == PROFILE_RULES

    online = _graph(load_settings(settings.home, core_base_url="http://127.0.0.1:9/v1", core_model="some-model"))
    episodes = online.get(dg.AssetKey(["episodes", "episodes"]))
    assert "openai" in episodes.kinds and "spacy" not in episodes.kinds
    assert "some-model" in str(episodes.code_version)


def test_every_search_index_shows_its_lancedb_table_and_folder(settings):
    graph = _graph(settings)
    for name in ("chunk_index", "episode_index", "fact_index"):
        node = graph.get(dg.AssetKey(["search", name]))
        assert _value(node.metadata["dagster/table_name"]) == f"lancedb.{name}"
        assert _value(node.metadata["path"]) == str(settings.lancedb_dir / f"{name}.lance")
