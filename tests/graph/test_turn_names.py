"""The graph reads the names every turn says, typed by their sentences, and links each entity to the messages
that said it (the graph/mentions table). Chats written for these tests."""

from __future__ import annotations

import polars as pl

from memlake.graph.build import build_graph
from tests.graph.helpers import episode, episodes, no_facts, turns

CHAT = turns("a1", "c1", "2024-05-02",
             ("Mia", "I got my tortoise Shelly last spring, and our snake Susie is shy."),
             ("Leo", "Nice! We adopted a cockatiel named Kiwi. My Labrador hates her."),
             ("Mia", "Ha. I'm reading Rothfuss now, and we watched Inception on Fri."),
             ("assistant", "You might like Brandon Sanderson too."))


def _graph():  # type: ignore[no-untyped-def]
    return build_graph(episodes(), no_facts(), None, 0.85, turns=CHAT)


def test_names_said_in_turns_are_entities_of_their_sentences_types() -> None:
    types = dict(_graph().entities.select("name", "type").iter_rows())
    assert types["Shelly"] == "animal" and types["Susie"] == "animal" and types["Kiwi"] == "animal"
    assert types["Rothfuss"] == "person"
    assert types["Inception"] == "work"
    assert "Labrador" not in types and "Fri" not in types


def test_an_assistants_turns_name_no_entities() -> None:
    assert "Brandon Sanderson" not in _graph().entities["name"].to_list()


def test_every_entity_links_to_the_messages_that_said_it() -> None:
    graph = _graph()
    shelly = graph.entities.filter(pl.col("name") == "Shelly").row(0, named=True)
    rows = graph.mentions.filter(pl.col("entity_id") == shelly["entity_id"])
    assert rows.select("agent_id", "conversation_id", "message_id", "name").rows() == [("a1", "c1", "c1-m0", "Shelly")]
    assert rows["said_at"][0] == CHAT["created_at"][0]
    kiwi = graph.entities.filter(pl.col("name") == "Kiwi")["entity_id"][0]
    assert graph.mentions.filter(pl.col("entity_id") == kiwi)["message_id"].to_list() == ["c1-m1"]


def test_a_name_gets_one_type_per_agent_the_cue_over_the_pipelines_guess() -> None:
    chat = turns("a2", "c2", "2024-05-03",
                 ("Mia", "My dog Pepper chewed a shoe."),
                 ("Mia", "Then Pepper ran off and Pepper came back muddy."),
                 ("Leo", "Mia, you should walk Pepper more."))
    types = build_graph(episodes(), no_facts(), None, 0.85, turns=chat).entities.select("name", "type").rows()
    assert ("Pepper", "animal") in types and [n for n, _ in types].count("Pepper") == 1
    assert ("Mia", "person") in types


def test_a_chats_role_words_and_request_verbs_are_no_entities_and_an_organisation_is_read_from_its_turn() -> None:
    """As a trial's ChatGPT export read: the distiller listed "Summarise", "Assistant" and "Monzo" (untyped); the
    turns say what each is."""
    chat = turns("a3", "c3", "2024-05-04",
                 ("user", "Summarise the call I had with Dana for Tom."),
                 ("assistant", "Sure, here is the summary."),
                 ("user", "Also: I bank with Monzo, and the Assistant said Monzo is fine."))
    listed = episodes(episode("a3", "c3", "2024-05-04",
                              entities=[("Monzo", "other"), ("Assistant", "person"), ("User", "person"),
                                        ("Dana", "person")]))
    types = build_graph(listed, no_facts(), None, 0.85, turns=chat).entities.select("name", "type").rows()
    names = [n for n, _ in types]
    assert ("Monzo", "organization") in types and names.count("Monzo") == 1
    assert not {"Summarise", "Assistant", "User"} & set(names)
    assert ("Dana", "person") in types


def test_a_request_verb_a_distiller_listed_as_an_untyped_name_is_no_entity() -> None:
    """The offline distiller lists a capitalised sentence opener ("Summarise this for me.") as an entity of type
    other; a word only a verb, that no person's turn reads as a name, is none."""
    chat = turns("a4", "c4", "2024-05-05",
                 ("user", "Summarise this for me."), ("user", "Explain it like I'm five."),
                 ("user", "Rob says hi, and Draft is our dog's name."))
    listed = episodes(episode("a4", "c4", "2024-05-05",
                              entities=[("Summarise", "other"), ("Explain", "other"), ("Rob", "other"),
                                        ("Berlin", "place"), ("Kafka", "other")]))
    names = build_graph(listed, no_facts(), None, 0.85, turns=chat).entities["name"].to_list()
    assert "Summarise" not in names and "Explain" not in names
    assert {"Rob", "Berlin", "Kafka"} <= set(names)  # a verb a turn names ("Rob says hi"), a place, a noun


def test_a_name_asked_about_takes_its_type_from_its_other_mentions_not_from_the_request() -> None:
    chat = turns("a5", "c5", "2024-05-06",
                 ("user", "Describe Lisbon to me."),
                 ("user", "Tell me about Monzo."),
                 ("user", "What do you know about Ghent?"),
                 ("user", "I am moving to Lisbon next month, and I bank with Monzo."),
                 ("user", "My cousin studies in Ghent."))
    graph = build_graph(episodes(), no_facts(), None, 0.85, turns=chat)
    types = dict(graph.entities.select("name", "type").iter_rows())
    assert types["Lisbon"] == "place" and types["Monzo"] == "organization" and types["Ghent"] == "place"
    said = graph.mentions.filter(pl.col("name").is_in(["Lisbon", "Monzo", "Ghent"]))
    assert "person" not in said["type"].to_list()


def test_a_city_the_pipeline_labels_a_person_alone_is_one_place_in_an_agents_chats() -> None:
    """(Issue 40: "Porto" was both a person and a place: bare mentions of a city the small model knows less well
    read as a person; where the user says someone lives, and what the city is listed with, say it is a place.)"""
    chat = turns("a3", "c3", "2024-05-04",
                 ("Mia", "Porto was lovely in the spring."),
                 ("Mia", "Porto and Lisbon are my favourite cities."),
                 ("Mia", "My sister lives in Porto now."))
    types = build_graph(episodes(), no_facts(), None, 0.85, turns=chat).entities.select("name", "type").rows()
    assert [t for n, t in types if n == "Porto"] == ["place"]
    assert ("Lisbon", "place") in types
