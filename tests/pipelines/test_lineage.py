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
    described = 0
    for key in graph.get_all_asset_keys():
        node = graph.get(key)
        assert node.owners, f"{key.to_user_string()} has no owner"
        table = TABLES.get(key.to_user_string())
        if table is None:
            continue
        described += 1
        schema = _value(node.metadata["dagster/column_schema"])
        expected = [field.name for field in table.schema] + (["day"] if table.partitioned else [])
        assert [column.name for column in schema.columns] == expected
        assert _value(node.metadata["dagster/table_name"]) == f"{table.layer}.{table.name}"
        assert _value(node.metadata["path"]) == str(settings.lake_dir / table.layer / table.name)
    assert described >= 10  # the lake's tables, not a few


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
