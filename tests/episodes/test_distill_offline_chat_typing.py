"""The offline distiller on how people type in an assistant chat (issue 23): contractions without their apostrophe,
questions without their mark, and "This ..." about the chat's own work. Phrasings written for these tests."""

from datetime import UTC, datetime

import pytest

from memlake.distill.models import Conversation, Message
from memlake.distill.offline import distill_offline

SAID = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)


def contents(text: str) -> list[str]:
    session = distill_offline(Conversation("a", "c", None, (Message("m1", "user", text, SAID),)))
    return [c.content for c in session.fact_candidates]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I dont eat pork.", "The user doesn't eat pork."),
        ("im vegetarian these days", "The user is vegetarian."),
        ("Ive been a nurse for six years.", "The user works as a nurse."),
    ],
)
def test_a_contraction_typed_without_its_apostrophe_reads_as_the_contraction(text, expected):
    assert expected in contents(text)


@pytest.mark.parametrize("text", ["I didnt know what to say.", "I havent decided yet."])
def test_a_negation_typed_without_its_apostrophe_is_still_a_negation(text):
    assert not [c for c in contents(text) if "dont" in c or "didnts" in c or "havents" in c]


@pytest.mark.parametrize("text", ["how many hours should my team work on this",
                                  "what is my best option for the flight",
                                  "can you help me plan my week",
                                  "where do my invoices go after approval"])
def test_a_question_typed_without_its_mark_is_no_fact(text):
    assert contents(text) == []


@pytest.mark.parametrize("text", ["When I was a kid, I lived in Porto.", "What I love most is sailing."])
def test_a_statement_opening_with_a_question_word_is_still_read(text):
    assert contents(text)


@pytest.mark.parametrize("text", ["This outline is solid, mate.", "This plan looks much better.",
                                  "This feels like real progress.", "This draft is still dragging, my guy.",
                                  "This candidate must have five years of experience."])
def test_this_thing_of_the_chats_is_not_the_users(text):
    assert not [c for c in contents(text) if c.startswith("The user's")]


def test_this_thing_the_sentence_says_is_the_users_is_theirs():
    assert "The user's quilt took them two months." in contents("This quilt took me two months.")


@pytest.mark.parametrize("text", ["Just send me the final checklist now.",
                                  "Please draft a reply to my landlord for me.",
                                  "Write a plan to help me study for my exam.",
                                  "Regarding my budget, nothing over 50."])
def test_an_ask_of_the_assistant_or_a_preposition_opening_is_no_fact(text):
    assert contents(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Helped my mum move house last weekend.",
         "The user helped their mum move house on the weekend of 2026-02-28."),
        ("I later learned to swim in Greece.", "The user later learned to swim in Greece."),
        ("I then bake bread every Sunday.", "The user then bakes bread every Sunday."),
    ],
)
def test_a_past_with_its_i_left_out_or_an_adverb_before_the_verb_reads_in_the_third_person(text, expected):
    assert expected in contents(text)
