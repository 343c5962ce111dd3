"""One entity, one type, chosen from all its mentions' evidence: the sentences of the turns that name it and the
types an episode listed it with (issue 39: "Feedzai" was both an organization and a place, "Northwind Labs" too;
"Kafka" and "Redis" were people). Chats written for these tests."""

from __future__ import annotations

import polars as pl

from memlake.graph.build import build_graph
from tests.graph.helpers import episode, episodes, fact, facts, no_facts, turns


def _types(graph) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return graph.entities.select("name", "type").rows()


def test_an_organisation_an_episode_listed_as_a_place_is_one_organisation() -> None:
    chat = turns("t1", "c1", "2024-06-01",
                 ("user", "Big news: I joined Quintela Labs in March!"),
                 ("user", "Quintela Labs is fully remote, which I love."))
    listed = episodes(episode("t1", "c1", "2024-06-01", entities=[("Quintela Labs", "place")]),
                      episode("t1", "c2", "2024-06-08", entities=[("Quintela Labs", "place")]))
    graph = build_graph(listed, no_facts(), None, 0.85, turns=chat)
    assert [t for n, t in _types(graph) if n == "Quintela Labs"] == ["organization"]
    said = graph.mentions.filter(pl.col("name") == "Quintela Labs")
    assert said["type"].unique().to_list() == ["organization"]


def test_software_the_user_runs_is_one_tool_however_else_it_is_said() -> None:
    chat = turns("t2", "c1", "2024-06-02",
                 ("user", "We deployed Kafka on three brokers."),
                 ("user", "Honestly Kafka is a beast."),
                 ("user", "I installed Redis on my laptop, and Redis keeps crashing."))
    listed = episodes(episode("t2", "c1", "2024-06-02", entities=[("Kafka", "person"), ("Redis", "person")]))
    types = _types(build_graph(listed, no_facts(), None, 0.85, turns=chat))
    assert [t for n, t in types if n == "Kafka"] == ["tool"]
    assert [t for n, t in types if n == "Redis"] == ["tool"]


def test_a_name_labelled_a_person_but_never_in_a_persons_role_is_no_person() -> None:
    """The small model labels an unknown capitalised word a person; a name no sentence puts where a person goes
    (saying, meeting, a relative) is not one."""
    chat = turns("t3", "c1", "2024-06-03",
                 ("user", "Traefik was acting up again today."),
                 ("user", "I think Traefik hates me."))
    types = _types(build_graph(episodes(), no_facts(), None, 0.85, turns=chat))
    assert ("Traefik", "person") not in types


def test_a_person_named_once_in_a_persons_role_stays_a_person_in_every_mention() -> None:
    chat = turns("t4", "c1", "2024-06-04",
                 ("user", "Brigid was at the market."),
                 ("user", "Anyway, Brigid said the flat is ready."),
                 ("user", "I'm reading Rothfuss now."))
    graph = build_graph(episodes(), no_facts(), None, 0.85, turns=chat)
    types = _types(graph)
    assert [t for n, t in types if n == "Brigid"] == ["person"]
    assert ("Rothfuss", "person") in types
    assert graph.mentions.filter(pl.col("name") == "Brigid")["type"].unique().to_list() == ["person"]


def test_a_speaker_is_a_person_whatever_an_episode_listed() -> None:
    chat = turns("t5", "c1", "2024-06-05", ("Hanna", "We adopted a cockatiel named Kiwi."), ("Leo", "Aw!"))
    listed = episodes(episode("t5", "c1", "2024-06-05", entities=[("Hanna", "organization"), ("Kiwi", "person")]))
    types = _types(build_graph(listed, no_facts(), None, 0.85, turns=chat))
    assert [t for n, t in types if n == "Hanna"] == ["person"]
    assert [t for n, t in types if n == "Kiwi"] == ["animal"]


def test_a_name_at_a_persons_end_of_a_relation_an_episode_or_a_fact_states_is_a_person() -> None:
    chat = turns("t6", "c1", "2024-06-06",
                 ("user", "Orsolya Kiss reviewed the design doc."),
                 ("user", "Bertram Ode approved the budget."))
    listed = episodes(episode("t6", "c1", "2024-06-06", entities=[("Orsolya Kiss", "person")],
                              relations=[("user", "works_with", "Orsolya Kiss")]))
    stated = facts(fact("t6", "c1", "2024-06-06", "user", "sibling", "Bertram Ode"))
    types = _types(build_graph(listed, stated, None, 0.85, turns=chat))
    assert [t for n, t in types if n == "Orsolya Kiss"] == ["person"]
    assert [t for n, t in types if n == "Bertram Ode"] == ["person"]


def test_the_users_own_name_said_in_no_persons_role_is_the_user_not_a_thing() -> None:
    """The user said their name; a chat that names them in no person's role ("This is Kim, back with ...", "the list
    from Kim") typed the name a concept beside the user, who had it as an alias (stranger's trial)."""
    chat = turns("t5", "c1", "2024-06-05",
                 ("user", "This is Kim, back with the packing list."),
                 ("user", "The packing list from Kim is done."))
    known = facts(fact("t5", "c1", "2024-06-05", "user", "name", "Kim"),
                  fact("t5", "c1", "2024-06-05", "user", "home_city", "Lisbon"))
    graph = build_graph(episodes(), known, None, 0.85, turns=chat)
    assert [n for n, _ in _types(graph) if n == "Kim"] == []  # no entity of its own
    assert graph.entities.filter(pl.col("name") == "user")["aliases"].to_list() == [["Kim"]]


def test_the_pipelines_words_for_the_user_are_no_entities() -> None:
    """A fact's subject or an episode's name built on the placeholder for the user ("the user's mum") is a
    description, not a name: no entity of its own (LoCoMo's judged sample had "the user's mum")."""
    listed = episodes(episode("t7", "c1", "2024-06-07", entities=[("the user's sister", "person"),
                                                                  ("User's dentist", "person"), ("Porto", "place")]))
    stated = facts(fact("t7", "c1", "2024-06-07", "the user's mum", "home_city", "Leeds"),
                   fact("t7", "c1", "2024-06-07", "user", "employer", "Quintela"))
    names = [n for n, _ in _types(build_graph(listed, stated, None, 0.85))]
    assert [n for n in names if "user" in n.lower() and n != "user"] == []
    assert "Porto" in names and "Quintela" in names


def test_the_user_who_speaks_under_a_name_is_called_by_it_not_by_the_placeholder() -> None:
    """In a chat between two people the user's turns carry their name: the user's entity is that person, one entity
    with the user's relations and the other speaker's mentions of them ("Hey Tamsin")."""
    chat = turns("t8", "c1", "2024-06-08",
                 ("Tamsin", "Big news, I moved to Leeds last spring."),
                 ("Gideon", "Hey Tamsin, how is Leeds treating you?"),
                 user="Tamsin")
    stated = facts(fact("t8", "c1", "2024-06-08", "user", "employer", "Quintela"))
    graph = build_graph(episodes(), stated, None, 0.85, turns=chat)
    assert graph.entities.filter(pl.col("name") == "user").is_empty()
    tamsin = graph.entities.filter(pl.col("name") == "Tamsin")
    assert tamsin.select("type", "aliases").rows() == [("person", ["user"])]
    works_at = graph.relations.filter(pl.col("relation") == "works_at")
    assert works_at["source_entity_id"].to_list() == tamsin["entity_id"].to_list()
