"""The offline distiller's named entities: found in both speakers' turns, typed by context, with their messages."""

from datetime import UTC, datetime

import pytest

from memlake.distill.models import Conversation, Message
from memlake.distill.offline import distill_offline

SAID = datetime(2023, 5, 8, 10, 0, tzinfo=UTC)


def chat(*turns: tuple[str, str, str | None]) -> Conversation:
    """(role, text, speaker) turns as one conversation, message ids m1, m2, ..."""
    return Conversation("a", "c", None, tuple(Message(f"m{i}", role, text, SAID, speaker)
                                              for i, (role, text, speaker) in enumerate(turns, 1)))


def entities(*texts: str) -> dict[str, tuple[str, list[str]]]:
    """name -> (type, message ids) of the user's turns `texts`."""
    session = distill_offline(chat(*[("user", t, None) for t in texts]))
    return {e.name: (e.type, e.message_ids) for e in session.entities}


def test_a_chat_between_two_people_names_both_speakers_and_what_each_mentions() -> None:
    session = distill_offline(chat(
        ("assistant", "Hey Joanna! I just got back from a trip to Tokyo with my friend Ned.", "Nate"),
        ("user", "Hey Nate! I started an internship at Acme Insurance last week.", "Joanna"),
        ("assistant", "Congrats! Ned says hi.", "Nate"),
    ))
    found = {e.name: (e.type, e.message_ids) for e in session.entities}
    assert found["Joanna"] == ("person", ["m1"])
    assert found["Nate"] == ("person", ["m2"])
    assert found["Tokyo"] == ("place", ["m1"])
    assert found["Ned"] == ("person", ["m1", "m3"])
    assert found["Acme Insurance"] == ("organization", ["m2"])


@pytest.mark.parametrize(
    ("texts", "name", "kind"),
    [
        (["I adopted a puppy last month. My dog Max loves the beach."], "Max", "other"),
        (["We got a kitten named Miso."], "Miso", "other"),
        (["Hi! My name is Priya."], "Priya", "person"),
        (["I finally switched my car policy to Lakeside Insurance."], "Lakeside Insurance", "organization"),
        (["My sister Leela visited and we drove to Lake Tahoe."], "Leela", "person"),
        (["My sister Leela visited and we drove to Lake Tahoe."], "Lake Tahoe", "place"),
        (["I work at Globex now."], "Globex", "organization"),
        (["We moved to Lisbon in March."], "Lisbon", "place"),
        (["We flew to New York last week."], "New York", "place"),
        (["I'm running the Berlin Marathon this fall."], "Berlin Marathon", "event"),
        (["The Nova project is slipping again."], "Nova", "project"),
        (["Project Heron ships on Friday."], "Project Heron", "project"),
    ],
)
def test_a_name_is_typed_by_the_words_around_it(texts: list[str], name: str, kind: str) -> None:
    assert entities(*texts)[name][0] == kind


def test_a_capital_that_only_starts_a_sentence_is_no_name() -> None:
    found = entities("Appreciate it! Sounds like fun. Wow, Game night was great.", "Hope the kids liked the game.")
    assert not {"Appreciate", "Sounds", "Wow", "Game", "Hope"} & set(found)


def test_a_sentence_starting_name_counts_when_the_conversation_names_it_elsewhere() -> None:
    found = entities("We flew to Paris on Monday.", "Paris was lovely.")
    assert found["Paris"] == ("place", ["m1", "m2"])


def test_a_project_the_user_works_on_is_not_called_project_i() -> None:
    session = distill_offline(chat(("user", "There is a side project I am working on with Tom.", None)))
    assert not [e for e in session.entities if e.name.startswith("Project")]
    assert "project i" not in [t.lower() for t in session.topics]


def test_an_ai_assistants_own_prose_gives_no_entities() -> None:
    session = distill_offline(chat(("user", "How do I bake bread?", None),
                                   ("assistant", "Start with King Arthur flour and a Dutch Oven.", "assistant")))
    assert session.entities == []


def test_identifiers_are_no_names() -> None:
    found = entities("parse_ledger_v2 crashes with KeyError: 'currency' on order ORD-58213 for Globex.")
    assert set(found) == {"Globex"}


@pytest.mark.parametrize(
    ("text", "name", "kind"),
    [
        ("I'm reading Rothfuss again, his prose is great.", "Rothfuss", "person"),
        ("I binge-watched a show with Tom last night.", "Tom", "person"),
        ("I have a meeting with the team from Initech on Friday.", "Initech", "organization"),
    ],
)
def test_a_name_is_typed_by_its_sentences_parse(text: str, name: str, kind: str) -> None:
    """The same reading of names as the graph's (memlake.nlp.names): an author read, a person met, a company."""
    assert entities(text)[name][0] == kind


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("My Labrador loves the snow.", "Labrador"),  # a kind of thing, owned
        ("I bought a Prius last year.", "Prius"),
        ("Sept was busy, see you Fri!", "Fri"),  # calendar words
        ("The whole STEM thing is hard.", "STEM"),  # an acronym with no cue
    ],
)
def test_a_capitalised_kind_calendar_word_or_bare_acronym_is_no_entity(text: str, word: str) -> None:
    assert word not in entities(text)
