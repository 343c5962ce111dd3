"""The graph built from episodes and facts: entity resolution, relation versions, reruns."""

from datetime import UTC, datetime

import polars as pl
import pytest

from memlake.embedding import HashEmbedder
from memlake.facts.fold import chain_id, slot_of
from memlake.graph.build import build_graph
from memlake.graph.reads import named, neighborhood, select_relations
from memlake.graph.resolve import Split
from tests.graph.helpers import episode, episodes, fact, facts, no_facts, same_everything

HASH = HashEmbedder().embed


def _build(frame: pl.DataFrame, embed=HASH, splits=()):  # type: ignore[no-untyped-def]
    return build_graph(frame, no_facts(), embed, 0.85, splits=splits)


def test_two_spellings_of_one_person_are_one_entity() -> None:
    graph = _build(episodes(
        episode("a1", "c1", "2024-01-10", [("Priya Nair", "person")], [("user", "works_with", "Priya Nair")]),
        episode("a1", "c2", "2024-02-10", [("priya  nair", "person")]),
        episode("a1", "c3", "2024-03-10", [("Priya K. Nair", "person")]),
    ))
    people = graph.entities.filter(pl.col("name") != "user")
    assert people.height == 1
    assert people["name"][0] == "Priya K. Nair"  # the fullest form
    assert sorted(people["aliases"][0]) == ["Priya Nair", "priya  nair"]
    assert people["source_conversation_ids"][0].to_list() == ["c1", "c2", "c3"]
    assert sorted(graph.merges["rule"].to_list()) == ["alias", "normalized_name"]
    assert graph.merges["undone_by"].is_null().all()


def test_two_people_with_one_first_name_stay_two_even_when_their_names_embed_alike() -> None:
    graph = _build(episodes(
        episode("a1", "c1", "2024-01-10", [("Alex", "person")], [("user", "sibling_of", "Alex")]),
        episode("a1", "c2", "2024-02-10", [("Alex", "person")], [("user", "works_with", "Alex")]),
        episode("a1", "c3", "2024-03-10", [("Sam Lee", "person"), ("Sam Ortiz", "person")]),
        episode("a1", "c4", "2024-04-10", [("Sam", "person")]),
    ), embed=same_everything)
    people = graph.entities.filter(pl.col("name") != "user").sort("name")
    assert people["name"].to_list() == ["Alex", "Alex", "Sam", "Sam Lee", "Sam Ortiz"]
    assert graph.merges.height == 0


def test_a_first_name_said_alone_is_the_one_full_name_it_belongs_to() -> None:
    graph = _build(episodes(
        episode("a1", "c1", "2024-01-10", [("Tomás Ruiz", "person")]),
        episode("a1", "c2", "2024-02-10", [("Tomás", "person")]),
    ))
    assert graph.entities["name"].to_list() == ["Tomás Ruiz"]
    assert graph.merges.select("kept_name", "merged_name", "rule").row(0) == ("Tomás Ruiz", "Tomás", "alias")


def test_a_job_change_across_two_sessions_closes_the_old_employer() -> None:
    graph = _build(episodes(
        episode("a1", "c1", "2024-01-10", [("Acme", "organization")], [("user", "works_at", "Acme")]),
        episode("a1", "c2", "2024-06-01", [("Globex", "organization")], [("user", "works for", "Globex")]),
    ))
    employers = select_relations(graph.relations, graph.entities, relation="works_at").sort("valid_from")
    assert employers.select("target_name", "status").rows() == [("Acme", "superseded"), ("Globex", "active")]
    assert employers["valid_until"].to_list() == [datetime(2024, 6, 1, tzinfo=UTC), None]
    assert employers["relation_text"].to_list() == ["works_at", "works for"]


def test_a_new_holder_of_a_one_holder_relation_closes_the_old_one() -> None:
    graph = _build(episodes(
        episode("a1", "c1", "2024-01-10", [("Alice", "person"), ("Project Nova", "project")],
                [("Alice", "leads", "Project Nova")]),
        episode("a1", "c2", "2024-05-10", [("Bob", "person"), ("Project Nova", "project")],
                [("Bob", "leads", "Project Nova")]),
    ))
    rows = select_relations(graph.relations, graph.entities, entity="Project Nova").sort("valid_from")
    assert rows.select("source_name", "status").rows() == [("Alice", "superseded"), ("Bob", "active")]


def test_as_of_gives_the_relation_in_force_then() -> None:
    graph = _build(episodes(
        episode("a1", "c1", "2024-01-10", [("Acme", "organization")], [("user", "works_at", "Acme")]),
        episode("a1", "c2", "2024-06-01", [("Globex", "organization")], [("user", "works_at", "Globex")]),
    ))

    def employer(day: str) -> list[str]:
        moment = datetime.fromisoformat(day).replace(tzinfo=UTC)
        return select_relations(graph.relations, graph.entities, "user", "works_at", moment)["target_name"].to_list()

    assert employer("2023-12-01") == []
    assert employer("2024-03-01") == ["Acme"]
    assert employer("2024-07-01") == ["Globex"]


def test_as_of_counts_a_relation_from_when_it_was_first_said_though_a_later_talk_dates_it_back() -> None:
    graph = _build(episodes(
        episode("a1", "c1", "2024-01-10", [("Acme", "organization")], [("user", "works_at", "Acme")]),
        episode("a1", "c2", "2024-09-09", [("Acme", "organization"), ("Globex", "organization")],
                [("user", "works_at", "Acme"), ("user", "works_at", "Globex")],
                since={("user", "works_at", "Acme"): "2020-08-05", ("user", "works_at", "Globex"): "2024-09-02"}),
    ))
    moment = datetime(2024, 5, 1, tzinfo=UTC)
    then = select_relations(graph.relations, graph.entities, "user", "works_at", moment)
    assert then["target_name"].to_list() == ["Acme"]
    assert then["created_at"].to_list() == [datetime(2024, 1, 10, tzinfo=UTC)]


def test_a_relation_said_to_be_over_is_ended_and_a_new_one_opens_a_second_version() -> None:
    graph = _build(episodes(
        episode("a1", "c1", "2024-01-10", [("Lisbon", "place")], [("user", "lives_in", "Lisbon")],
                ended={("user", "lives_in", "Lisbon"): "2024-03-01"}),
        episode("a1", "c2", "2024-09-01", [("Lisbon", "place")], [("user", "lives_in", "Lisbon")]),
    ))
    rows = graph.relations.sort("version")
    assert rows.select("version", "status").rows() == [(1, "ended"), (2, "active")]
    assert rows["relation_id"].n_unique() == 1


def test_an_undone_merge_stays_undone_when_the_graph_is_built_again() -> None:
    frame = episodes(
        episode("a1", "c1", "2024-01-10", [("Tomás Ruiz", "person")]),
        episode("a1", "c2", "2024-02-10", [("Tomás", "person")]),
    )
    merge_id = _build(frame).merges["merge_id"][0]
    split = Split("s_1", "a1", merge_id)
    for _ in range(2):
        graph = _build(frame, splits=[split])
        assert sorted(graph.entities["name"].to_list()) == ["Tomás", "Tomás Ruiz"]
        assert graph.merges.select("merge_id", "undone_by").row(0) == (merge_id, "s_1")


def test_an_undone_merge_is_not_made_again_through_a_third_form() -> None:
    frame = episodes(
        episode("a1", "c1", "2024-01-10", [("Priya Nair", "person")]),
        episode("a1", "c2", "2024-02-10", [("priya nair", "person")]),
        episode("a1", "c3", "2024-03-10", [("Priya K. Nair", "person")]),
    )
    merges = _build(frame).merges
    normalized = merges.filter(pl.col("rule") == "normalized_name")["merge_id"][0]
    alias = merges.filter(pl.col("rule") == "alias").row(0, named=True)
    graph = _build(frame, splits=[Split("s_1", "a1", alias["merge_id"])])
    assert graph.entities.height == 2
    assert graph.merges.filter(pl.col("undone_by").is_null())["merge_id"].to_list() == [normalized]


def test_depth_two_traversal_returns_exactly_the_neighbourhood() -> None:
    # user -works_at-> Acme <-works_at- Leela -lives_in-> Paris; Acme -member_of-> Consortium (3 hops from user
    # through Acme? no: 2); Paris -part_of-> France is three hops away
    graph = _build(episodes(
        episode("a1", "c1", "2024-01-10",
                [("Acme", "organization"), ("Leela", "person"), ("Paris", "place"), ("France", "place"),
                 ("Consortium", "organization"), ("Sam", "person")],
                [("user", "works_at", "Acme"), ("Leela", "works_at", "Acme"), ("Leela", "lives_in", "Paris"),
                 ("Paris", "part_of", "France"), ("Acme", "member_of", "Consortium"), ("Sam", "knows", "Leela")]),
    ))
    near = neighborhood(graph.relations, graph.entities, "user", depth=2)
    assert near.select("depth", "source_name", "relation", "target_name").rows() == [
        (1, "user", "works_at", "Acme"),
        (2, "Acme", "member_of", "Consortium"),
        (2, "Leela", "works_at", "Acme"),
    ]
    one = neighborhood(graph.relations, graph.entities, "Leela", depth=1)
    assert set(one["relation"].to_list()) == {"works_at", "lives_in", "knows"}


def test_a_neighbourhood_of_an_unknown_name_or_a_bad_depth_is_a_clear_error() -> None:
    graph = _build(episodes(episode("a1", "c1", "2024-01-10", [("Acme", "organization")],
                                    [("user", "works_at", "Acme")])))
    with pytest.raises(ValueError, match="no entity called 'Nobody'"):
        neighborhood(graph.relations, graph.entities, "Nobody")
    with pytest.raises(ValueError, match="depth is a whole number"):
        neighborhood(graph.relations, graph.entities, "Acme", depth=0)


def test_a_rebuild_from_the_same_inputs_in_another_order_gives_the_same_tables() -> None:
    rows = [
        episode("a1", "c1", "2024-01-10", [("Acme", "organization"), ("Tomás Ruiz", "person")],
                [("user", "works_at", "Acme"), ("user", "works_with", "Tomás Ruiz")]),
        episode("a1", "c2", "2024-06-01", [("Globex", "organization"), ("Tomás", "person")],
                [("user", "works_at", "Globex")]),
        episode("a2", "c1", "2024-02-01", [("Acme", "organization")], [("user", "works_at", "Acme")]),
    ]
    first, again = _build(episodes(*rows)), _build(episodes(*reversed(rows)))
    for name in ("entities", "relations", "merges"):
        assert getattr(first, name).equals(getattr(again, name)), name


def test_no_row_of_one_agent_names_another_agents_entity() -> None:
    graph = _build(episodes(
        episode("a1", "c1", "2024-01-10", [("Acme", "organization")], [("user", "works_at", "Acme")]),
        episode("a2", "c1", "2024-01-10", [("Acme", "organization")], [("user", "works_at", "Acme")]),
    ))
    owner = dict(graph.entities.select("entity_id", "agent_id").rows())
    assert graph.entities.height == 4
    for agent, source, target in graph.relations.select("agent_id", "source_entity_id", "target_entity_id").rows():
        assert owner[source] == owner[target] == agent


def test_names_that_embed_alike_and_are_spelled_alike_merge_with_the_score_recorded() -> None:
    graph = _build(episodes(
        episode("a1", "c1", "2024-01-10", [("Jon Smith", "person")]),
        episode("a1", "c2", "2024-02-10", [("John Smith", "person")]),
    ), embed=same_everything)
    assert graph.entities.height == 1
    merge = graph.merges.row(0, named=True)
    assert (merge["rule"], merge["score"]) == ("embedding", 1.0)
    assert "cosine 1.00 >= 0.85" in merge["reason"]


def test_a_forgotten_employer_fact_takes_the_relation_its_talk_stated_out_of_the_graph() -> None:
    said = [episode("a1", "c1", "2024-01-10", [("Acme", "organization")], [("user", "works_at", "Acme")]),
            episode("a1", "c2", "2024-03-10", [("Lisbon", "place")], [("user", "lives_in", "Lisbon")])]
    employer = chain_id("a1", "user", slot_of("employer", "Acme"), "fact", "")
    graph = build_graph(episodes(*said), no_facts(), None, 0.85,
                        forgotten_facts=[("a1", employer, datetime(2024, 2, 1, tzinfo=UTC))])
    assert named(graph.relations, graph.entities)["relation"].to_list() == ["lives_in"]
    said_again = episode("a1", "c3", "2024-05-10", [("Acme", "organization")], [("user", "works_at", "Acme")])
    graph = build_graph(episodes(*said, said_again), no_facts(), None, 0.85,
                        forgotten_facts=[("a1", employer, datetime(2024, 2, 1, tzinfo=UTC))])
    assert graph.relations.filter(pl.col("relation") == "works_at")["source_conversation_ids"].to_list() == [["c3"]]


def test_a_forgotten_conversation_or_agent_leaves_the_graph() -> None:
    said = episodes(episode("a1", "c1", "2024-01-10", [("Acme", "organization")], [("user", "works_at", "Acme")]),
                    episode("a1", "c2", "2024-03-10", [("Lisbon", "place")], [("user", "lives_in", "Lisbon")]),
                    episode("a2", "c1", "2024-03-10", [("Oslo", "place")], [("user", "lives_in", "Oslo")]))
    graph = build_graph(said, no_facts(), None, 0.85, forgotten=[("a1", "c1"), ("a2", None)])
    assert graph.entities.select("agent_id", "name").sort("name").rows() == [("a1", "Lisbon"), ("a1", "user")]


def test_names_that_differ_in_a_number_stay_two_however_alike_they_embed() -> None:
    graph = _build(episodes(
        episode("a1", "c1", "2024-01-10", [("Apollo 11", "project"), ("Heron", "project")]),
        episode("a1", "c2", "2024-02-10", [("Apollo 13", "project"), ("Heron 2", "project")]),
    ), embed=same_everything)
    assert sorted(graph.entities["name"].to_list()) == ["Apollo 11", "Apollo 13", "Heron", "Heron 2"]


def test_facts_add_their_slot_relations_and_subjects_typed_as_the_episodes_named_them() -> None:
    said = episodes(episode("a1", "c1", "2024-01-10", [("Heron", "project")]))
    known = facts(fact("a1", "c1", "2024-01-10", "Heron", "project_deadline", "2024-03-14"),
                  fact("a1", "c2", "2024-02-01", "user", "employer", "Acme"),
                  fact("a1", "c2", "2024-02-01", "user", "name", "Priya Nair"),
                  fact("a1", "c3", "2024-03-01", "Leela", "home_city", "Manchester"),
                  fact("a1", "c3", "2024-03-01", "Jonas", "home_city", "Oslo", status="forgotten"))
    graph = build_graph(said, known, None, 0.85)
    assert graph.entities.select("name", "type").sort("name").rows() == [
        ("Acme", "organization"), ("Heron", "project"), ("Leela", "person"), ("Manchester", "place"),
        ("user", "person")]
    assert graph.entities.filter(pl.col("name") == "user")["aliases"].to_list() == [["Priya Nair"]]
    assert sorted(named(graph.relations, graph.entities).select("source_name", "relation", "target_name").rows()) == [
        ("Leela", "lives_in", "Manchester"), ("user", "works_at", "Acme")]


def test_an_entity_cites_the_messages_that_name_it() -> None:
    row = episode("a1", "c1", "2024-01-10")
    row["entities"] = [{"name": "Leela", "type": "person", "message_ids": ["c1-m2", "c1-m5"]},
                       {"name": "Lisbon", "type": "place", "message_ids": ["c1-m3"]}]
    graph = _build(episodes(row))
    cited = dict(graph.entities.select("name", "source_message_ids").iter_rows())
    assert cited["Leela"] == ["c1-m2", "c1-m5"]
    assert cited["Lisbon"] == ["c1-m3"]


def test_a_city_and_a_trail_named_after_it_stay_two_places() -> None:
    graph = _build(episodes(
        episode("a1", "c1", "2024-01-10", [("Berlin", "place")]),
        episode("a1", "c2", "2024-02-10", [("Berlin Wall Trail", "place"), ("New York", "place")]),
        episode("a1", "c3", "2024-03-10", [("New York City", "place")]),
    ))
    assert sorted(graph.entities["name"].to_list()) == ["Berlin", "Berlin Wall Trail", "New York City"]


def test_a_name_said_untyped_is_the_one_typed_entity_of_that_name() -> None:
    graph = _build(episodes(
        episode("a1", "c1", "2024-01-10", [("Lisbon", "place"), ("Max", "person")]),
        episode("a1", "c2", "2024-02-10", [("Lisbon", "other"), ("Heron", "other")]),
        episode("a1", "c3", "2024-03-10", [("Max", "other"), ("Max", "place")]),
    ))
    types = dict(graph.entities.select("name", "type").iter_rows())
    assert graph.entities.filter(pl.col("name") == "Lisbon")[["type", "source_conversation_ids"]].rows() == [
        ("place", ["c1", "c2"])]
    assert types["Heron"] == "concept"  # nothing typed it anywhere
    # "Max" listed a person and a place, once each: one name is one entity of one type, the first said on a tie
    assert graph.entities.filter(pl.col("name") == "Max")["type"].to_list() == ["person"]


def test_a_pet_the_user_named_is_an_animal_wherever_its_name_is_said() -> None:
    """A stranger's trial: "my tortoise Biscuit" in one talk, "Biscuit's birthday" (a person's cue) in another and
    facts about Biscuit (a subject is guessed a person) made Biscuit a person. The relation that introduced the name
    types it: the user's pet is an animal, one entity, in every conversation."""
    said = episodes(
        episode("a1", "c1", "2026-03-10", [("Biscuit", "other"), ("Tomasz", "person")],
                [("user", "has_pet", "Biscuit"), ("user", "sibling_of", "Tomasz")]),
        episode("a1", "c3", "2026-07-20", [("Biscuit", "person")]),
    )
    known = facts(fact("a1", "c1", "2026-03-10", "Biscuit", None, "tortoise"),
                  fact("a1", "c3", "2026-07-20", "Biscuit", None, "twelve"))
    graph = build_graph(said, known, HASH, 0.85)
    assert graph.entities.filter(pl.col("name") == "Biscuit").select("type", "source_conversation_ids").rows() == [
        ("animal", ["c1", "c3"])]
    assert dict(graph.entities.select("name", "type").iter_rows())["Tomasz"] == "person"
    assert named(graph.relations, graph.entities).filter(pl.col("relation") == "has_pet").select(
        "source_name", "target_name").rows() == [("user", "Biscuit")]


def test_a_short_name_said_untyped_is_the_one_organisation_it_begins() -> None:
    """A stranger's trial: "Imogen is enjoying Kingswood" stayed a concept beside "Kingswood School"."""
    graph = _build(episodes(
        episode("a1", "c3", "2026-07-20", [("Kingswood School", "organization"), ("Imogen", "person"),
                                           ("Acme Robotics", "organization"), ("Acme Foods", "organization")]),
        episode("a1", "c4", "2026-10-05", [("Kingswood", "other"), ("Acme", "other"), ("School", "other")]),
    ))
    rows = {name: (type_, aliases) for name, type_, aliases in graph.entities.select("name", "type", "aliases").rows()}
    assert rows["Kingswood School"] == ("organization", ["Kingswood"])
    assert "Kingswood" not in rows
    assert rows["Acme"][0] == "concept"  # the short name of two: which one is not said
    assert rows["School"][0] == "concept"  # not a first word
