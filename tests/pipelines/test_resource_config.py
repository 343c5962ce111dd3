"""The settings a run uses are the resources' config: the launchpad shows them with the home's values, a value
changed there reaches that run only, and memlake.toml stays as it was."""

import dagster as dg
import pytest

from memlake.lake import Lake
from memlake.schemas import CHUNK_INDEX, CHUNKS
from memlake.settings import Settings, load_settings
from memlake.vectors import VectorStore
from tests.conftest import land
from tests.search.helpers import ALICE
from tests.transcripts.helpers import jsonl

HOME_TOML = """\
# the home's own choices, kept as written
chunk_window_size = 3
max_message_chars = 5000
contradiction_policy = "supersede"
embedding_batch_size = 16
embedding_backend = "torch"
core_model = "llama3"
core_timeout_seconds = 12.5
"""
DAY = "2024-03-01"
CHUNKS_KEY = dg.AssetKey(["transcripts", "chunks"])
CHUNK_INDEX_KEY = dg.AssetKey(["search", CHUNK_INDEX])


def resource_config_field(defs: dg.Definitions, resource: str):  # type: ignore[no-untyped-def]
    """`resource`'s config as the launchpad has it for the asset job (the UI's Materialize): its fields, and as
    its default (what the launchpad fills in) the values the resource was built with."""
    schema = defs.resolve_implicit_global_asset_job_def().run_config_schema.config_type
    return schema.fields["resources"].config_type.fields[resource].config_type.fields["config"]


def launchpad_values(defs: dg.Definitions, resource: str) -> dict[str, object]:
    return resource_config_field(defs, resource).default_value


def group_descriptions(defs: dg.Definitions, resource: str, group: str) -> dict[str, str | None]:
    fields = resource_config_field(defs, resource).config_type.fields[group].config_type.fields
    return {name: field.description for name, field in fields.items()}


@pytest.fixture
def home(settings) -> Settings:
    (settings.home / "memlake.toml").write_text(HOME_TOML)
    return load_settings(settings.home)


def test_the_launchpad_shows_every_run_setting_with_the_homes_value(home):
    from pipelines.definitions import build_definitions

    defs = build_definitions()  # the code location as `memlake dev` loads it: MEMLAKE_HOME is the home
    lake = launchpad_values(defs, "lake")
    assert lake["home"] == str(home.home)
    assert lake["chunking"] == home.chunking.model_dump() and lake["chunking"]["chunk_window_size"] == 3
    assert lake["limits"] == home.limits.model_dump() and lake["limits"]["max_message_chars"] == 5000
    assert lake["fold"]["contradiction_policy"] == "supersede"
    embedding = launchpad_values(defs, "embedder")["embedding"]
    assert (embedding["embedding_batch_size"], embedding["embedding_backend"]) == (16, "torch")
    core = launchpad_values(defs, "core_model")["core"]
    assert (core["core_model"], core["core_timeout_seconds"]) == ("llama3", 12.5)
    # each setting says what it is, as in memlake/settings.py; the key is never shown
    groups = (("lake", "chunking"), ("lake", "limits"), ("lake", "fold"), ("embedder", "embedding"),
              ("core_model", "core"))
    for resource, group in groups:
        assert all(group_descriptions(defs, resource, group).values()), (resource, group)
    assert not any("api_key" in name for name in group_descriptions(defs, "core_model", "core"))


def chunk_kinds(home: Settings) -> set[str]:
    return set(Lake(home.lake_dir).read(CHUNKS, days=[DAY])["kind"])


def test_a_launchpad_override_reaches_that_run_only_and_leaves_memlake_toml_unchanged(home):
    from pipelines.jobs import ASSETS
    from pipelines.runs import run_landing
    from resources import HashEmbedderResource, build_resources

    resources = {**build_resources(home), "embedder": HashEmbedderResource()}
    instance = dg.DagsterInstance.ephemeral()
    land(home, "alice", "chat.jsonl", jsonl(*ALICE))
    assert run_landing(home, resources=resources, instance=instance).success
    assert "window" in chunk_kinds(home)

    no_windows = {"resources": {"lake": {"config": {"chunking": {"chunk_window_size": 0}}}}}
    overridden = dg.materialize(ASSETS, selection=[CHUNKS_KEY], partition_key=DAY, resources=resources,
                                instance=instance, run_config=no_windows)
    assert overridden.success
    assert "window" not in chunk_kinds(home)  # the run used the launchpad's value
    assert (home.home / "memlake.toml").read_text() == HOME_TOML  # and the home kept its own
    assert load_settings(home.home).chunk_window_size == 3

    again = dg.materialize(ASSETS, selection=[CHUNKS_KEY], partition_key=DAY, resources=resources, instance=instance)
    assert again.success and "window" in chunk_kinds(home)  # the next run, with no override, the home's


def test_a_launchpad_override_of_the_embedding_model_reaches_the_index(home):
    """The real embedder resource, told by the run's config to use no model: the index is full-text only and no
    model is loaded."""
    from pipelines.jobs import ASSETS
    from pipelines.runs import run_landing
    from resources import HashEmbedderResource, build_resources

    instance = dg.DagsterInstance.ephemeral()
    land(home, "alice", "chat.jsonl", jsonl(*ALICE))
    assert run_landing(home, resources={**build_resources(home), "embedder": HashEmbedderResource()},
                       instance=instance).success

    no_model = {"resources": {"embedder": {"config": {"embedding": {"embedding_model": "none"}}}}}
    result = dg.materialize(ASSETS, selection=[CHUNK_INDEX_KEY], partition_key=DAY, resources=build_resources(home),
                            instance=instance, run_config=no_model)
    assert result.success
    assert VectorStore(home.lancedb_dir).embedder_of(CHUNK_INDEX) == "none"
    assert (home.home / "memlake.toml").read_text() == HOME_TOML


def test_a_bad_launchpad_value_fails_the_run_naming_the_setting(home):
    from assets.partitions import DAYS
    from pipelines.jobs import ASSETS
    from resources import HashEmbedderResource, build_resources

    resources = {**build_resources(home), "embedder": HashEmbedderResource()}
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(DAYS, [DAY])
    bad = {"resources": {"lake": {"config": {"chunking": {"chunk_long_turn_words": 0}}}}}
    result = dg.materialize(ASSETS, selection=[CHUNKS_KEY], partition_key=DAY, resources=resources,
                            instance=instance, run_config=bad, raise_on_error=False)
    assert not result.success
    failure = next(event for event in result.all_events if event.is_failure)
    assert "chunk_long_turn_words" in str(failure.event_specific_data), failure


def test_every_setting_is_run_config_or_said_not_to_be(settings):
    """A setting added to a group reaches the launchpad by itself; any other says why a run cannot change it."""
    from resources import build_resources
    from resources.run_config import NOT_RUN_CONFIG, run_config_settings

    in_config = run_config_settings(build_resources(settings).values())
    assert in_config.isdisjoint(NOT_RUN_CONFIG)
    assert in_config | set(NOT_RUN_CONFIG) == set(Settings.model_fields)
    assert all(len(why) > 20 for why in NOT_RUN_CONFIG.values())
    assert {"chunk_window_size", "max_message_chars", "embedding_model", "core_base_url"} <= in_config


def test_settings_changed_in_memory_reach_the_run(settings):
    """`build_resources` refused settings changed only in memory; the run settings are now its config, so they
    are honoured, and no memlake.toml is written."""
    from pipelines.runs import run_landing
    from resources import HashEmbedderResource, build_resources

    in_memory = load_settings(settings.home, chunk_window_size=0)
    resources = {**build_resources(in_memory), "embedder": HashEmbedderResource()}
    land(settings, "alice", "chat.jsonl", jsonl(*ALICE))
    assert run_landing(in_memory, resources=resources, instance=dg.DagsterInstance.ephemeral()).success
    assert "window" not in chunk_kinds(in_memory)
    assert not (settings.home / "memlake.toml").exists()


def test_a_setting_changed_in_memory_that_no_run_config_holds_is_refused_naming_it(settings):
    from resources import build_resources

    with pytest.raises(ValueError, match="shown_confidence") as refused:
        build_resources(load_settings(settings.home, shown_confidence=0.9, chunk_window_size=0))
    assert "chunk_window_size" not in str(refused.value)


def test_the_chunks_staleness_key_is_the_whole_chunking_group(home):
    """The chunk recipe, the chunks' code version, names every setting of the group the launchpad shows."""
    from memlake.chunks import chunk_recipe
    from pipelines.definitions import build_definitions

    defs = build_definitions()
    recipe = chunk_recipe(home.chunking)
    assert all(name in recipe for name in group_descriptions(defs, "lake", "chunking"))
    assert defs.resolve_assets_def(CHUNKS_KEY).code_versions_by_key[CHUNKS_KEY] == recipe

