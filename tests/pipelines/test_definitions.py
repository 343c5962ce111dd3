"""The code location loads and validates: assets, checks, jobs, partitions, lineage and automation."""

import subprocess
import sys
from datetime import UTC, datetime

import dagster as dg
import pytest

from memlake.schemas import LANDING_MANIFEST, TURNS
from pipelines.definitions import defs
from tests.conftest import land


def test_definitions_load_and_validate():
    dg.Definitions.validate_loadable(defs)
    keys = {key.to_user_string() for key in defs.resolve_all_asset_keys()}
    assert {"transcripts/landing_manifest", "transcripts/turns"} <= keys
    landing = defs.resolve_job_def("landing_job")  # the main job builds every layer, the graph too
    assert {"graph/entities", "graph/relations", "graph/entity_merges"} <= {
        key.to_user_string() for key in landing.asset_layer.executable_asset_keys}
    reindex = defs.resolve_job_def("reindex_job")  # the UI's way to rebuild lancedb/ from the lake
    assert {key.to_user_string() for key in reindex.asset_layer.executable_asset_keys} == {
        "search/chunk_index", "search/episode_index", "search/fact_index"
    }
    assert defs.resolve_sensor_def("landing_sensor") is not None
    # the sensor's way to fold override and forget entries, and to build the graph again after a split
    folds = defs.resolve_job_def("facts_job")
    assert {key.to_user_string() for key in folds.asset_layer.executable_asset_keys} == {
        "facts/facts", "facts/fact_edges", "profile/profiles", "search/fact_index",
        "graph/entities", "graph/relations", "graph/entity_merges", "graph/mentions",
    }


def test_every_writer_waits_for_the_others_of_its_store():
    """Writers of unpartitioned lake tables share one pool and index writers another (the home's instance limits
    each to one), so two runs never rewrite the same Parquet table or merge into the same LanceDB table at once;
    the per-day writers (each writes only its days' files) share a third, as wide as `run_workers`."""
    from assets.shared import DAY_WRITERS, INDEX_WRITERS, LAKE_WRITERS

    pools = {
        key.to_user_string(): asset.op.pool
        for asset in defs.resolve_asset_graph().assets_defs
        if asset.keys and asset.is_executable  # not the inputs' source nodes, which nothing writes
        for key in asset.keys
    }
    assert {key for key, pool in pools.items() if pool == INDEX_WRITERS} == {
        "search/chunk_index", "search/episode_index", "search/fact_index"
    }
    assert {key for key, pool in pools.items() if pool == DAY_WRITERS} == {
        "transcripts/turns", "transcripts/chunks", "episodes/episodes", "episodes/pending"
    }
    assert {pool for key, pool in pools.items() if pool not in (INDEX_WRITERS, DAY_WRITERS)} == {LAKE_WRITERS}


def test_every_asset_says_its_grain_and_layer():
    for asset in defs.resolve_asset_graph().assets_defs:
        for key in asset.keys:
            assert len(key.path) == 2, key  # [layer, table]
            assert asset.group_names_by_key[key] == key.path[0]
            description = asset.descriptions_by_key.get(key) or ""
            assert description.startswith("One row per") and description.endswith("."), (key, description)


def test_search_layer_is_in_the_code_location():
    from pipelines.definitions import defs

    keys = {key.to_user_string() for key in defs.resolve_all_asset_keys()}
    assert {"transcripts/chunks", "search/chunk_index", "search/episode_index", "search/fact_index"} <= keys


def test_domain_core_imports_no_dagster():
    code = (
        "import sys, pkgutil, importlib, memlake\n"
        "for m in pkgutil.walk_packages(memlake.__path__, 'memlake.'):\n"
        "    importlib.import_module(m.name)\n"
        "print('dagster' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_partitioned_assets_backfill_in_one_run_on_the_shared_day_partitions():
    from assets.partitions import day_partitions

    for asset in defs.resolve_asset_graph().assets_defs:
        if asset.keys and asset.partitions_def is not None:
            assert asset.partitions_def == day_partitions, asset.keys
            assert asset.backfill_policy == dg.BackfillPolicy.single_run(), asset.keys


def test_a_run_ranges_over_days_in_the_order_they_became_partitions():
    from assets.partitions import DAYS, register_days

    with dg.instance_for_test() as instance:
        assert register_days(instance, {"2024-03-07", "2024-03-01"}) == {
            "dagster/asset_partition_range_start": "2024-03-01", "dagster/asset_partition_range_end": "2024-03-07"}
        # a conversation from February lands late: its day goes after the others, not between
        tags = register_days(instance, {"2024-02-10"})
        assert instance.get_dynamic_partitions(DAYS) == ["2024-03-01", "2024-03-07", "2024-02-10"]
        assert tags["dagster/asset_partition_range_start"] == tags["dagster/asset_partition_range_end"] == "2024-02-10"
        both = register_days(instance, {"2024-03-07", "2024-02-10"})
        assert (both["dagster/asset_partition_range_start"], both["dagster/asset_partition_range_end"]) == (
            "2024-03-07", "2024-02-10")
        assert "memlake/days" not in both  # the range is exactly its days
        # a range that holds a day the run did not touch names the days it is for: only those are built
        wide = register_days(instance, {"2024-03-01", "2024-02-10"})
        assert (wide["dagster/asset_partition_range_start"], wide["dagster/asset_partition_range_end"]) == (
            "2024-03-01", "2024-02-10")
        assert wide["memlake/days"] == "2024-02-10,2024-03-01"
        with pytest.raises(ValueError, match="not a day"):
            register_days(instance, {"2024-13-01"})
        assert instance.get_dynamic_partitions(DAYS) == ["2024-03-01", "2024-03-07", "2024-02-10"]


def test_automation_is_on_and_brings_the_folds_and_indexes_up_to_a_day_rebuilt_alone(settings, fast_resources):
    """DESIGN: the unpartitioned folds are kept fresh by declarative automation. Its sensor is on by default,
    and after one day's episodes are rematerialized alone (a UI click), it asks for that day's episode index,
    the facts, the profiles and the fact index, and nothing else."""
    from dagster._core.definitions.sensor_definition import DefaultSensorStatus

    from pipelines.jobs import ASSETS, CHECKS
    from pipelines.runs import run_landing

    assert defs.resolve_sensor_def("memlake_automation").default_status == DefaultSensorStatus.RUNNING
    land(settings, "alice", "a.jsonl",
         '{"conversation_id":"c1","role":"user","content":"I live in Berlin.","created_at":"2024-03-01T10:00:00Z"}\n'
         '{"conversation_id":"c2","role":"user","content":"I like tea.","created_at":"2024-03-07T10:00:00Z"}\n')
    instance = dg.DagsterInstance.ephemeral()
    assert run_landing(settings, resources=fast_resources, instance=instance).success
    fresh = dg.evaluate_automation_conditions(defs=defs, instance=instance)
    assert fresh.total_requested == 0

    one_day = dg.AssetSelection.assets(["episodes", "episodes"]).required_multi_asset_neighbors()
    rebuilt = dg.materialize([*ASSETS, *CHECKS], selection=one_day, partition_key="2024-03-07",
                             resources=fast_resources, instance=instance)
    assert rebuilt.success
    result = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=fresh.cursor)
    requested = {
        key: result.get_requested_partitions(dg.AssetKey(key.split("/")))
        for key in ("search/episode_index", "facts/facts", "profile/profiles", "search/fact_index",
                    "search/chunk_index", "transcripts/turns")
    }
    assert requested["search/episode_index"] == {"2024-03-07"}
    assert requested["facts/facts"] == requested["profile/profiles"] == requested["search/fact_index"] == {None}
    assert requested["search/chunk_index"] == set() and requested["transcripts/turns"] == set()


def test_a_preview_stays_a_table_when_cells_hold_newlines_and_pipes():
    import re

    import polars as pl

    from assets.shared import markdown_preview

    frame = pl.DataFrame({"slot": ["```\nprint(a | b)\n```", "x" * 500], "n": [1, 2]})
    lines = markdown_preview(frame).value.splitlines()
    assert len(lines) == 4  # header, rule, one line per row
    assert all(len(re.findall(r"(?<!\\)\|", line)) == 3 for line in lines)
    assert "print(a \\| b)" in lines[2] and len(lines[3]) < 200


def test_a_preview_shows_ids_labels_counts_and_dates_never_what_was_said():
    """Dagster keeps run metadata where a forget cannot reach: a message, fact or name must never go there."""
    import polars as pl

    from assets.shared import markdown_preview

    frame = pl.DataFrame({"fact_id": ["f_1"], "content": ["My PIN is 4471"], "subject": ["Marta"],
                          "aliases": [["Marty"]], "type": ["fact"], "confidence": [0.9]})
    shown = markdown_preview(frame).value
    assert shown.splitlines()[0] == "| fact_id | type | confidence |"
    assert "4471" not in shown and "Mart" not in shown


def test_every_job_runs_its_steps_in_one_process_as_memlake_run_does():
    """A process per step (Dagster's default) loads the embedding model and GX again for each step: a
    sensor's one-day run under `memlake dev` took 72 s against 7 s for `memlake run`. (Dagster's in-process
    executor, at `memlake run`'s CPU priority: tests/pipelines/test_executor.py.)"""
    for job in ("landing_job", "manifest_job", "reindex_job", "rechunk_job", "facts_job"):
        assert defs.resolve_job_def(job).executor_def.name == "memlake_in_process", job
    assert defs.resolve_implicit_global_asset_job_def().executor_def.name == "memlake_in_process"  # UI runs


def test_lineage_shows_what_each_asset_reads_and_nothing_else():
    """The UI's lineage and the eager automation both follow these edges: a parent that is never read would
    make a retry of pending conversations fold the facts again and draw a false line."""
    graph = defs.resolve_asset_graph()

    def parents(*key: str) -> list[str]:
        return sorted(p.to_user_string() for p in graph.get(dg.AssetKey(list(key))).parent_keys)

    assert parents("facts", "facts") == parents("facts", "fact_edges") == [
        "episodes/episodes", "inputs/forget", "inputs/overrides", "transcripts/turns"]
    assert parents("search", "episode_index") == ["episodes/episodes"]
    assert parents("search", "fact_index") == ["facts/facts"]
    assert parents("profile", "profiles") == ["facts/fact_edges", "facts/facts"]  # the profile reads both


def _graphql(instance: dg.DagsterInstance, query: str, variables: dict | None = None) -> dict:
    """`query` against this code location as the Dagster UI sends it (in process, no code server)."""
    from dagster._core.test_utils import in_process_test_workspace
    from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
    from dagster_graphql.test.utils import execute_dagster_graphql, infer_repository_selector

    origin = LoadableTargetOrigin(module_name="pipelines.definitions", attribute="defs")
    with in_process_test_workspace(instance, origin) as context:
        variables = {"repositorySelector": infer_repository_selector(context), **(variables or {})}
        result = execute_dagster_graphql(context, query, variables)
    assert not result.errors, result.errors
    return result.data


ADD_PARTITION = """
mutation($repositorySelector: RepositorySelector!, $partitionsDefName: String!, $partitionKey: String!) {
  addDynamicPartition(repositorySelector: $repositorySelector, partitionsDefName: $partitionsDefName,
                      partitionKey: $partitionKey) {
    __typename
  }
}"""


def home_instance(settings) -> dg.DagsterInstance:
    """The home's own Dagster instance, the one `memlake dev`'s UI reads."""
    from pipelines.runs import ensure_dagster_home

    ensure_dagster_home(settings)
    return dg.DagsterInstance.get()


def test_a_partition_key_that_is_not_a_day_fails_its_run_with_a_clear_error_and_builds_nothing(
        settings, fast_resources):
    """Any text typed in the UI's partition picker (or sent by the `addDynamicPartition` mutation) became a
    partition key; a run of `not-a-day` built empty with its check passing. It now fails, naming the key and
    how to remove it, before any asset writes anything."""
    from assets.partitions import DAYS
    from memlake.lake import Lake
    from pipelines.jobs import ASSETS, CHECKS, landing_job_selection

    instance = home_instance(settings)
    added = _graphql(instance, ADD_PARTITION, {"partitionsDefName": DAYS, "partitionKey": "not-a-day"})
    assert added["addDynamicPartition"]["__typename"] == "AddDynamicPartitionSuccess"  # Dagster takes any text
    instance.add_dynamic_partitions(DAYS, ["[2024-01-08...2024-01-22]"])  # a range typed as a key
    instance.add_dynamic_partitions(DAYS, ["2099-01-01"])  # a day no conversation can have yet: it built empty
    land(settings, "alice", "a.jsonl",
         '{"conversation_id":"c1","role":"user","content":"hi","created_at":"2024-03-01T10:00:00Z"}\n')

    for key, problem in (("not-a-day", "is not a day (YYYY-MM-DD)"),
                         ("[2024-01-08...2024-01-22]", "is not a day (YYYY-MM-DD)"),
                         ("2099-01-01", "is a day after today")):
        result = dg.materialize([*ASSETS, *CHECKS], selection=landing_job_selection, partition_key=key,
                                resources=fast_resources, instance=instance, raise_on_error=False)
        assert not result.success
        assert not result.get_asset_materialization_events() and not result.get_asset_check_evaluations()
        errors = [event.event_specific_data.error.to_string() for event in result.all_events  # type: ignore
                  if event.is_failure and getattr(event.event_specific_data, "error", None)]
        assert errors and all(f"partition key {key!r} {problem}" in text for text in errors), errors
        assert all("delete_dynamic_partition" in text for text in errors)  # says how to remove it
    assert not any(Lake(settings.lake_dir).files(table) for table in (LANDING_MANIFEST, TURNS))


CHECK_CAN_EXECUTE = """
query($repositorySelector: RepositorySelector!) {
  repositoryOrError(repositorySelector: $repositorySelector) {
    ... on Repository { assetNodes { assetKey { path } assetChecksOrError {
      ... on AssetChecks { checks { name canExecuteIndividually } } } } }
  }
}"""


def test_every_check_runs_on_its_own_as_the_uis_execute_button_runs_it(settings, fast_resources):
    """`turns_expectations` executed alone from its Checks tab failed (`Cannot access partition_key for a
    non-partitioned run`) and the episode checks could not run without their asset: every check now runs
    alone, on every day the lake has, and passes on a good lake."""
    from memlake.maintenance.sweep import run_sweep
    from pipelines.definitions import build_definitions
    from pipelines.runs import run_landing

    instance = home_instance(settings)
    land(settings, "alice", "a.jsonl",
         '{"conversation_id":"c1","role":"user","content":"I live in Lisbon","created_at":"2024-03-01T10:00:00Z"}\n'
         '{"conversation_id":"c2","role":"user","content":"I moved to Porto","created_at":"2024-03-05T10:00:00Z"}\n')
    assert run_landing(settings, resources=fast_resources, instance=instance).success
    for kind in ("consolidation", "lint"):  # a swept lake: the memory-health checks pass too
        run_sweep(settings, kind, datetime(2024, 3, 6, tzinfo=UTC))  # the day after the chats: nothing stale
    nodes = _graphql(instance, CHECK_CAN_EXECUTE)["repositoryOrError"]["assetNodes"]
    executable = {check["name"]: check["canExecuteIndividually"] for node in nodes
                  for check in node["assetChecksOrError"]["checks"]}
    assert executable and set(executable.values()) == {"CAN_EXECUTE"}, executable  # the UI offers Execute

    defs = build_definitions(fast_resources)
    asset_job = defs.resolve_implicit_global_asset_job_def()
    check_keys = defs.resolve_asset_graph().asset_check_keys
    assert {key.name for key in check_keys} == set(executable)
    for key in check_keys:  # what the run the UI launches executes: the asset job with only that check
        alone = asset_job.get_subset(asset_selection=set(), asset_check_selection={key})
        result = alone.execute_in_process(instance=instance, raise_on_error=False)
        [evaluation] = result.get_asset_check_evaluations()
        assert result.success and evaluation.passed and not result.get_asset_materialization_events(), key
        assert evaluation.metadata.get("rows_checked", dg.MetadataValue.int(2)).value >= 2, key  # every day


def test_the_uis_materialize_runs_in_a_job_named_for_it_not_dagsters_asset_job():
    """The UI's "Materialize" (dagster-webserver 1.13, `getCommonJob`) launches its run in the first of the jobs
    that hold every selected asset, in the order the code location lists an asset's jobs (sorted by name); that was
    Dagster's `__ASSET_JOB`, so a click's run was named by accident (issue 40). It must be a job that says the UI
    started it, and tags the run so, for every asset: one asset, a day of a partitioned one, or the sweep."""
    from dagster._core.remote_representation.external_data import asset_node_snaps_from_repo

    from pipelines.run_status import TRIGGER_TAG

    snaps = asset_node_snaps_from_repo(defs.get_repository_def())
    chosen = {snap.asset_key.to_user_string(): snap.job_names[0] for snap in snaps if snap.job_names}
    assert {"transcripts/turns", "maintenance/reports", "search/fact_index"} <= set(chosen)
    assert set(chosen.values()) == {"UI_materialize"}, chosen
    job = defs.resolve_job_def("UI_materialize")
    assert job.tags[TRIGGER_TAG] == "ui"
    assert job.executor_def.name == "memlake_in_process"
    # a backfill picked in the UI is one run, as the assets' own single-run policy made it before
    assert job.backfill_policy == dg.BackfillPolicy.single_run()
    # the automation sensor's runs keep Dagster's implicit job; their tag says who started them
    assert defs.resolve_sensor_def("memlake_automation").run_tags[TRIGGER_TAG] == "memlake_automation"
