"""Relations people state, read from the parse between the speaker and the names a sentence holds. Sentences
written for these tests."""

from __future__ import annotations

import pytest

from memlake.graph.build import build_graph
from memlake.graph.stated import SHOWN_CONFIDENCE, relations_in
from memlake.nlp.names import names_in
from tests.graph.helpers import episodes, no_facts, turns


def _read(text: str) -> set[tuple[str, str, str]]:
    return {(s.source, s.relation, s.target) for s in relations_in(text, names_in(text))}


@pytest.mark.parametrize(("text", "relation"), [
    ("I went to Paris last summer.", ("I", "visited", "Paris")),
    ("We finally visited Japan in April!", ("I", "visited", "Japan")),
    ("I work at Google now.", ("I", "works_at", "Google")),
    ("I've lived in Berlin for two years.", ("I", "lives_in", "Berlin")),
    ("My sister Anna is coming over.", ("I", "sibling_of", "Anna")),
    ("We adopted a cockatiel named Kiwi.", ("I", "has_pet", "Kiwi")),
    ("I got my tortoise Shelly last spring.", ("I", "has_pet", "Shelly")),
    ("Anna works at Google in Berlin.", ("Anna", "works_at", "Google")),
    ("I play in the Riverside Orchestra.", ("I", "member_of", "Riverside Orchestra")),
    ("I'm from Sweden originally.", ("I", "from", "Sweden")),
    ("I grew up in Ohio.", ("I", "from", "Ohio")),
    ("Last weekend I took the kids to Yellowstone.", ("I", "visited", "Yellowstone")),
    ("I really enjoyed the Hamilton musical.", ("I", "likes", "Hamilton")),
    ("We spent a week in Lisbon.", ("I", "visited", "Lisbon")),
    ("I listened to Folklore all day.", ("I", "listened_to", "Folklore")),
])
def test_a_stated_relation_is_read_normalised(text: str, relation: tuple[str, str, str]) -> None:
    assert relation in _read(text)


@pytest.mark.parametrize("text", [
    "I didn't go to Paris in the end.",
    "I want to go to Paris someday.",
    "I might visit Japan next year.",
    "Did you go to Paris?",
    "She went to Paris.",  # whom "she" is, the parse cannot say
    "I went to the museum with my kids.",  # no name
    "I'm actually going to Tokyo next month.",  # a plan
    "I'm gonna stay in Galway for a while.",
    "I'm going to visit Rome in June.",
    "I've worked for weeks on this car.",  # "weeks" is no organization
])
def test_what_is_not_stated_as_done_gives_no_relation(text: str) -> None:
    assert _read(text) == set()


@pytest.mark.parametrize(("text", "relation"), [
    ("We took a road trip to Montana in May.", ("I", "visited", "Montana")),
    ("I went on a vacation to Crete with my parents.", ("I", "visited", "Crete")),
    ("Last month I went to a jazz festival in Montreal.", ("I", "visited", "Montreal")),
    ("I was in Kraków for a week.", ("I", "visited", "Kraków")),
    ("I've been to Lisbon twice.", ("I", "visited", "Lisbon")),
    ("I took this photo in Peru.", ("I", "visited", "Peru")),
    ("We explored Iceland by car.", ("I", "visited", "Iceland")),
])
def test_a_trip_told_by_its_noun_or_by_being_there_is_a_visit(text: str, relation: tuple[str, str, str]) -> None:
    assert relation in _read(text)


@pytest.mark.parametrize(("text", "relation"), [
    ('I\'m currently reading "The Overstory" and loving it.', ("I", "reads", "The Overstory")),
    ("I'm playing Stardew Valley these days.", ("I", "plays", "Stardew Valley")),
])
def test_what_someone_is_reading_or_playing_now_is_stated(text: str, relation: tuple[str, str, str]) -> None:
    assert relation in _read(text)


@pytest.mark.parametrize("text", [
    "I want to take a trip to Montana.",
    "I'm planning a trip to Crete next year.",
    "My friend was in Kraków last week.",
    "I was in the Riverside Orchestra for years.",  # being in an organisation is no visit
    "I'll call you when I'm in Kraków.",  # a condition, not a statement
    "If I go to Lisbon, I'll bring you a tile.",
])
def test_a_trip_wished_planned_or_someone_elses_is_no_visit(text: str) -> None:
    assert _read(text) == set()


def test_the_graph_holds_relations_the_turns_state_with_their_message_and_time() -> None:
    chat = turns("a1", "c1", "2024-05-02", ("user", "Hi!"), ("user", "I went to Paris with my sister Anna."))
    graph = build_graph(episodes(), no_facts(), None, 0.85, turns=chat)
    names = dict(graph.entities.select("entity_id", "name").iter_rows())
    rows = {(names[r["source_entity_id"]], r["relation"], names[r["target_entity_id"]]): r
            for r in graph.relations.iter_rows(named=True)}
    assert set(rows) >= {("user", "visited", "Paris"), ("user", "sibling_of", "Anna")}
    paris = rows[("user", "visited", "Paris")]
    assert paris["source_message_ids"] == ["c1-m1"] and paris["relation_text"] == "go to"
    assert paris["created_at"] == chat["created_at"][1] and paris["confidence"] >= SHOWN_CONFIDENCE


def test_a_relation_whose_object_the_chat_types_otherwise_is_dropped() -> None:
    chat = turns("a3", "c3", "2024-05-04", ("Ana", "My dog Toby is the best."), ("Ana", "I love Toby!"),
                 ("Nate", "Cool!"), ("Ana", "I love the thought Nate!"))
    graph = build_graph(episodes(), no_facts(), None, 0.85, turns=chat)
    assert set(graph.relations["relation"].to_list()) == {"has_pet"}


def test_a_pets_kind_said_once_types_its_name_in_every_chat_of_the_agent() -> None:
    chat = turns("a4", "c4", "2024-05-05", ("Ana", "My pup Toby is so active."), ("Ana", "I do love Toby!"),
                 ("Ana", "Yes, I love Toby!"), ("Ben", "Haha yeah, I do love Toby!"), ("Ana", "We all love Toby!"))
    graph = build_graph(episodes(), no_facts(), None, 0.85, turns=chat)
    assert graph.entities.filter(graph.entities["name"] == "Toby")["type"].to_list() == ["animal"]
    assert set(graph.relations["relation"].to_list()) == {"has_pet"}


def test_a_relation_below_the_shown_confidence_is_a_candidate_kept_in_history_not_in_the_neighbourhood() -> None:
    from memlake.graph.reads import neighborhood, select_relations
    from tests.graph.helpers import episode

    said = episode("a5", "c5", "2024-05-06", [("Anna", "person"), ("Oslo", "place"), ("Acme", "organization")],
                   [("Anna", "lives_in", "Oslo"), ("Anna", "works_at", "Acme")])
    said["relations"][1]["confidence"] = SHOWN_CONFIDENCE - 0.2  # type: ignore[index]
    graph = build_graph(episodes(said), no_facts(), None, 0.85)
    near = neighborhood(graph.relations, graph.entities, "Anna", depth=1)
    assert near["relation"].to_list() == ["lives_in"]
    assert set(select_relations(graph.relations, graph.entities, "Anna")["relation"].to_list()) == {
        "lives_in", "works_at"}
