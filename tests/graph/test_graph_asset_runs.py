"""A rerun of the graph over unchanged turns parses none of them again: each turn's names and stated relations are
kept by its content's hash (graph/turn_reads), and only a turn whose text is new is read. Chats written for these
tests."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import polars as pl
import pytest

import memlake.graph.turn_names as turn_names
from assets import graph as graph_assets
from memlake.lake import Lake
from memlake.schemas import ENTITIES, MENTIONS, RELATIONS, TURN_READS, TURNS
from memlake.settings import load_settings
from resources import HashEmbedderResource, LakeResource
from tests.graph.helpers import turns

DAY_ONE = turns("a1", "c1", "2024-05-02",
                ("Mia", "I got my tortoise Shelly last spring."),
                ("Leo", "Nice! My sister Anna works at Google in Berlin."))
DAY_TWO = turns("a1", "c2", "2024-05-03",
                ("Mia", "We watched Inception with Tom."),
                ("Leo", "I'm reading Rothfuss now."))


@pytest.fixture
def home(tmp_path: Path):  # type: ignore[no-untyped-def]
    settings = load_settings(tmp_path / "home")
    settings.ensure_dirs()
    lake = Lake(settings.lake_dir)
    lake.write_partition(TURNS, "2024-05-02", DAY_ONE)
    lake.write_partition(TURNS, "2024-05-03", DAY_TWO)
    return settings, lake


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every sentence the graph's turn reader parses, in order."""
    sentences: list[str] = []
    real = turn_names.names_in

    def counting(sentence: str):  # type: ignore[no-untyped-def]
        sentences.append(sentence)
        return real(sentence)

    monkeypatch.setattr(turn_names, "names_in", counting)
    return sentences


def _build(settings) -> None:  # type: ignore[no-untyped-def]
    result = dg.materialize([graph_assets.graph], resources={
        "lake": LakeResource(home=str(settings.home)), "embedder": HashEmbedderResource()})
    assert result.success


def _tables(lake: Lake) -> list[pl.DataFrame]:
    return [lake.read(t) for t in (ENTITIES, RELATIONS, MENTIONS)]


def test_a_rerun_over_unchanged_turns_parses_none_and_gives_the_same_tables(home, parsed) -> None:  # type: ignore[no-untyped-def]
    settings, lake = home
    _build(settings)
    first, tables = len(parsed), _tables(lake)
    assert first >= 4 and lake.read(TURN_READS).height == 4
    _build(settings)
    assert len(parsed) == first  # not one sentence parsed again
    for before, after in zip(tables, _tables(lake), strict=True):
        assert after.equals(before)


def test_a_changed_day_reads_only_its_changed_turn_again(home, parsed) -> None:  # type: ignore[no-untyped-def]
    settings, lake = home
    _build(settings)
    parsed.clear()
    changed = DAY_TWO.with_columns(pl.when(pl.col("turn_index") == 1).then(pl.lit("I'm reading Pratchett now."))
                                   .otherwise(pl.col("content")).alias("content"))
    lake.write_partition(TURNS, "2024-05-03", changed)
    _build(settings)
    assert parsed == ["I'm reading Pratchett now."]
    names = set(lake.read(ENTITIES)["name"].to_list())
    assert "Pratchett" in names and "Rothfuss" not in names and {"Shelly", "Inception"} <= names


def test_the_graph_assets_metadata_show_counts_and_a_picture_a_person_reads(home) -> None:  # type: ignore[no-untyped-def]
    settings, lake = home
    result = dg.materialize([graph_assets.graph], resources={
        "lake": LakeResource(home=str(settings.home)), "embedder": HashEmbedderResource()})
    shown = {m.asset_key: m.metadata for m in result.asset_materializations_for_node("graph")}
    entities, relations = shown[graph_assets.ENTITIES_KEY], shown[graph_assets.RELATIONS_KEY]
    assert entities["by_type"].value["animal"] == 1 and entities["by_type"].value["person"] >= 3
    assert relations["by_relation"].value["has_pet"] == 1
    picture = relations["neighbourhood"]
    assert isinstance(picture, dg.MarkdownMetadataValue)
    shelly = lake.read(ENTITIES).filter(pl.col("name") == "Shelly")["entity_id"][0]
    assert "```mermaid\ngraph LR\n" in picture.value and f'["animal {shelly}"]' in picture.value
    assert "-->|has pet|" in picture.value and "Shelly" not in picture.value
