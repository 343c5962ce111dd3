"""The small picture of the graph a person sees in the graph asset's metadata: the largest agent's neighbourhood
as Mermaid text, at most 25 nodes, each node its type and entity id (Dagster's run storage is beyond a forget's
reach, so no name said goes there). Graphs written for these tests."""

from __future__ import annotations

import re

import polars as pl

from memlake.graph.build import build_graph
from memlake.graph.picture import MAX_NODES, neighbourhood_mermaid
from tests.graph.helpers import episode, episodes, no_facts


def _graph(*rows):  # type: ignore[no-untyped-def]
    return build_graph(episodes(*rows), no_facts(), None, 0.85)


def _nodes(text: str) -> set[str]:
    return set(re.findall(r'(n\d+)\["', text))


def test_the_picture_is_the_largest_agents_neighbourhood_with_its_relations_named() -> None:
    graph = _graph(
        episode("small", "c1", "2024-05-01", [("Berlin", "place")], [("user", "lives_in", "Berlin")]),
        episode("big", "c2", "2024-05-01", [("Acme Robotics", "organization"), ("Lisbon", "place"), ("Anna", "person")],
                [("user", "works_at", "Acme Robotics"), ("user", "lives_in", "Lisbon"), ("user", "sibling_of", "Anna"),
                 ("Anna", "lives_in", "Lisbon")]))
    text = neighbourhood_mermaid(graph.entities, graph.relations)
    assert text.startswith("graph LR")
    ids = dict(graph.entities.select("name", "entity_id").iter_rows())
    assert ids["Berlin"] not in text  # the other agent's
    for name, kind in (("Acme Robotics", "organization"), ("Lisbon", "place"), ("Anna", "person")):
        assert f'"{kind} {ids[name]}"' in text
    assert '["user"] -->|works at| ' in text
    assert len(re.findall(r"-->\|works at\|", text)) == 1 and len(re.findall(r"-->\|lives in\|", text)) == 2


def test_a_crowded_neighbourhood_is_cut_to_the_most_nodes_a_person_reads() -> None:
    people = [f"Friend{i:02d}" for i in range(40)]
    graph = _graph(episode("a1", "c1", "2024-05-01", [(p, "person") for p in people],
                           [("user", "friend_of", p) for p in people]))
    text = neighbourhood_mermaid(graph.entities, graph.relations)
    assert len(_nodes(text)) == MAX_NODES == 25
    edges = re.findall(r'^\s*(n\d+)\["[^"]*"\] -->\|[^|]+\| (n\d+)\["[^"]*"\]$', text, flags=re.M)
    assert len(edges) == MAX_NODES - 1 and all({a, b} <= _nodes(text) for a, b in edges)


def test_no_name_anyone_said_is_in_the_picture() -> None:
    graph = _graph(episode("a1", "c1", "2024-05-01", [("QUOKKA Bank", "organization"), ("Kiwi", "animal")],
                           [("user", "works_at", "QUOKKA Bank"), ("user", "has_pet", "Kiwi")]))
    text = neighbourhood_mermaid(graph.entities, graph.relations)
    assert "QUOKKA" not in text and "Kiwi" not in text
    kiwi = graph.entities.filter(pl.col("name") == "Kiwi")["entity_id"][0]
    assert f'["animal {kiwi}"]' in text


def test_no_relation_shown_gives_no_picture() -> None:
    assert neighbourhood_mermaid(*(lambda g: (g.entities, g.relations))(_graph())) == ""
