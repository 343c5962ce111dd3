"""The graph assets over the shipped samples, run as `memlake run` runs them: tables, reads, check, metadata,
and a merge a user undid staying undone across runs."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import polars as pl
import pytest
from typer.testing import CliRunner

from assets import graph as graph_assets
from memlake.api import Memory
from memlake.lake import Lake
from memlake.schemas import ENTITIES, ENTITY_MERGES, MENTIONS, RELATIONS, TURNS
from pipelines.cli import app
from resources import HashEmbedderResource, LakeResource
from tests.facts.test_facts_assets import sample_home


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The sample home after one pipeline run over data/samples/demo."""
    return sample_home(tmp_path_factory.mktemp("graph") / "home")


def test_the_assets_are_one_unpartitioned_lake_writer_in_the_graph_group_with_a_blocking_check() -> None:
    asset = graph_assets.graph
    assert asset.partitions_def is None and asset.op.pool == "memlake_lake_writers"
    assert {key.path[0] for key in asset.keys} == {"graph"}
    assert set(asset.group_names_by_key.values()) == {"graph"}
    assert {dep.path[0] for key in asset.keys for dep in asset.asset_deps[key]} == {
        "episodes", "facts", "transcripts", "inputs"}  # inputs: the forget log, the undone merges
    assert all(check.blocking for check in graph_assets.graph_expectations.check_specs)


def test_samples_a_job_change_gives_one_current_employer_and_one_closed(demo) -> None:  # type: ignore[no-untyped-def]
    memory = Memory(settings=demo[0])
    employers = memory.relations("demo", entity="user", relation="works_at").sort("valid_from")
    assert employers.select("target_name", "status").rows() == [
        ("Acme Robotics", "superseded"), ("Northwind Labs", "active")]
    assert employers["valid_until"][0] == employers["valid_from"][1]
    for row in employers.iter_rows(named=True):
        assert row["source_conversation_ids"] and row["source_message_ids"]


def test_samples_as_of_reads_give_the_relations_in_force_then(demo) -> None:  # type: ignore[no-untyped-def]
    memory = Memory(settings=demo[0])

    def targets(relation: str, as_of: str) -> list[str]:
        return memory.relations("demo", entity="user", relation=relation, as_of=as_of)["target_name"].to_list()

    assert targets("works_at", "2024-05-01") == ["Acme Robotics"]
    assert targets("lives_in", "2024-05-01") == ["Berlin"]
    assert targets("works_at", "2024-10-01") == ["Northwind Labs"]
    assert targets("lives_in", "2024-10-01") == ["Lisbon"]


def test_samples_entities_people_and_the_users_own_name(demo) -> None:  # type: ignore[no-untyped-def]
    memory = Memory(settings=demo[0])
    people = memory.entities("demo", type="person")
    assert {"Jonas", "Leela", "Tomás Ruiz", "Aiko Tanaka", "Priya"} <= set(people["name"].to_list())
    # the user speaks as Priya: their entity is called so, and "user" still finds it
    assert memory.entities("demo", name="user")["name"].to_list() == ["Priya"]
    assert "user" not in people["name"].to_list()
    assert memory.entities("demo", name="project heron")["type"].to_list() == ["project"]


def test_samples_every_entity_links_back_to_the_messages_that_name_it(demo) -> None:  # type: ignore[no-untyped-def]
    lake = Lake(demo[0].lake_dir)
    entities, mentions, turns = lake.read(ENTITIES), lake.read(MENTIONS), lake.read(TURNS)
    assert mentions.height > 0
    assert set(mentions["entity_id"].to_list()) <= set(entities["entity_id"].to_list())
    said = mentions.join(turns, on=["agent_id", "conversation_id", "message_id"], how="inner")
    assert said.height == mentions.filter(pl.col("message_id").is_in(turns["message_id"])).height > 0
    # a name a turn says links to that turn (a fact's subject links to the message the fact was read from)
    alvalade = said.filter(pl.col("name") == "Alvalade")
    assert alvalade.height > 0 and all("Alvalade" in text for text in alvalade["content"])


def test_samples_neighbourhood_and_graph_search(demo) -> None:  # type: ignore[no-untyped-def]
    memory = Memory(settings=demo[0])
    near = memory.neighborhood("demo", "Leela", depth=1)
    assert set(near.select("source_name", "relation", "target_name").rows()) == {
        ("Priya", "sibling_of", "Leela"), ("Leela", "lives_in", "Manchester")}
    found = memory.search("Where does Leela live?", "demo", scope="graph", k=3)
    assert found["text"].to_list()[0] == "Leela lives in Manchester"
    assert found["conversation_id"][0] is not None and found["message_ids"][0].len() > 0


def test_samples_the_neighbourhood_prints_as_a_tree_by_hop_with_what_was_said(demo) -> None:  # type: ignore[no-untyped-def]
    shown = CliRunner().invoke(app, ["graph", "neighborhood", "Leela", "--agent", "demo", "--depth", "2",
                                     "--home", str(demo[0].home)])
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[0] == "Leela (person)"
    assert any(line.startswith("  Priya -sibling_of-> Leela (said: sibling) since 2024-") for line in lines)
    assert any(line.startswith("    ") for line in lines)  # a second hop, indented under the first


def test_samples_the_graph_built_again_is_the_same_and_says_what_it_did(demo) -> None:  # type: ignore[no-untyped-def]
    settings = demo[0]
    lake = Lake(settings.lake_dir)
    before = [lake.read(t) for t in (ENTITIES, RELATIONS, ENTITY_MERGES)]
    result = dg.materialize([graph_assets.graph], resources={
        "lake": LakeResource(home=str(settings.home)), "embedder": HashEmbedderResource()},
        selection=[graph_assets.graph])
    assert result.success
    for table, old in zip((ENTITIES, RELATIONS, ENTITY_MERGES), before, strict=True):
        assert lake.read(table).equals(old), table.path
    metadata = {m.asset_key.path[-1]: m.metadata for m in result.asset_materializations_for_node("graph")}
    assert metadata["entities"]["by_type"].data["person"] >= 5
    assert metadata["relations"]["closed_this_run"].value == 0  # all closed by the first run already
    preview = metadata["relations"]["preview"].value  # ids and labels: a name said in a chat is no metadata
    assert "works_at" in preview and "Northwind Labs" not in preview
    # the merge the samples need: the speaker "Priya" of the notes chat is the user, who said so; the distiller
    # lists names as the turns read them (memlake.nlp.names), so Lisbon, SQLAlchemy and Heron are one entity each
    # with no merge, and no untyped "Acme" is left to join Acme Robotics
    assert metadata["entity_merges"]["by_rule"].data == {"user_name": 1}
    names = lake.read(ENTITIES)["name"].to_list()
    assert [names.count(n) for n in ("Lisbon", "SQLAlchemy", "Heron", "Acme Robotics")] == [1, 1, 1, 1]
    assert "Acme" not in names
    assert metadata["mentions"]["dagster/row_count"].value > 0


def test_samples_the_first_run_passes_the_graph_check_and_closes_the_old_relations(demo) -> None:  # type: ignore[no-untyped-def]
    settings, run = demo
    outcome = run()  # nothing new: no run; the first run's check is what the home has
    assert not outcome.failed_checks
    relations = Lake(settings.lake_dir).read(RELATIONS)
    assert relations.filter(pl.col("status") != "active").height >= 2  # Acme Robotics, Berlin


def test_an_undone_merge_stays_undone_after_later_runs(tmp_path: Path) -> None:
    settings, run = sample_home(tmp_path / "home")
    later = {"conversation_id": "late-1", "message_id": "late-1-m1", "role": "user",
             "content": "My colleague Tomás reviewed my pull request today.", "created_at": "2024-11-04T10:00:00Z"}
    (settings.landing_dir / "demo" / "later.jsonl").write_text(json.dumps(later) + "\n")
    run()
    memory = Memory(settings=settings)
    merge = memory.entity_merges("demo").filter(pl.col("merged_name") == "Tomás")
    assert merge.select("kept_name", "rule").rows() == [("Tomás Ruiz", "alias")]
    assert memory.entities("demo", name="Tomás")["name"].to_list() == ["Tomás Ruiz"]

    split = CliRunner().invoke(app, ["graph", "split", merge["merge_id"][0], "--agent", "demo",
                                     "--home", str(settings.home)])
    assert split.exit_code == 0, split.output
    run()  # no new chat: the split alone makes the run build the graph again
    assert sorted(Memory(settings=settings).entities("demo", name="Tomás")["name"].to_list()) == ["Tomás"]
    even_later = {**later, "conversation_id": "late-2", "message_id": "late-2-m1", "created_at": "2024-11-11T10:00:00Z"}
    (settings.landing_dir / "demo" / "even_later.jsonl").write_text(json.dumps(even_later) + "\n")
    run()
    memory = Memory(settings=settings)
    assert sorted(memory.entities("demo", type="person")["name"].to_list()).count("Tomás") == 1
    assert memory.entity_merges("demo").filter(pl.col("merge_id") == merge["merge_id"][0])["undone_by"][0]
    again = CliRunner().invoke(app, ["graph", "split", merge["merge_id"][0], "--agent", "demo",
                                     "--home", str(settings.home)])
    assert again.exit_code != 0 and "already undone" in str(again.exception)


def test_samples_a_search_with_the_graph_hop_orders_the_same_hits_by_shared_entities(demo) -> None:  # type: ignore[no-untyped-def]
    memory = Memory(settings=demo[0])
    plain = memory.search("Leela's birthday gift", "demo", k=20)
    hopped = memory.search("Leela's birthday gift", "demo", k=20, graph_hop_weight=1.0, graph_hop_seeds=1)
    assert "graph_hop" not in plain.columns  # off by default
    assert sorted(hopped["key"].to_list()) == sorted(plain["key"].to_list())  # the same hits, ordered again
    seed = plain["conversation_id"][0]
    assert hopped["conversation_id"][0] in {seed, *hopped.filter(pl.col("graph_hop") > 0)["conversation_id"]}
    assert hopped.filter(pl.col("graph_hop") > 0).height > 0  # Leela is named in another conversation too
