"""The offline distiller reads a self-statement whose title, "you" or "it" the same message says what it is
(memlake-offline-15, issue 23): each fact stands alone, the assistant's words and what only the chat shows give none."""

from datetime import UTC, datetime

import pytest

from memlake.distill.models import Conversation, FactCandidate, Message
from memlake.distill.offline import distill_offline
from memlake.distill.offline.meaning import by_meaning
from memlake.distill.offline.readers.referents import RESOLVED
from memlake.embedding import HashEmbedder

SAID = datetime(2025, 6, 2, 10, 0, tzinfo=UTC)


def facts(user_text: str, other_side: str = "Priya", other_text: str = "How was your week?") -> list[FactCandidate]:
    """The fact candidates of one user message, after a message of the other side (named `other_side`)."""
    messages = (Message("m0", "assistant", other_text, SAID, other_side),
                Message("m1", "user", user_text, SAID, "Ana"))
    return distill_offline(Conversation("a", "c", None, messages)).fact_candidates


def contents(user_text: str, **kwargs: str) -> list[str]:
    return [f.content for f in facts(user_text, **kwargs)]


def test_a_title_in_quotes_is_a_name():
    found = facts('I finally read "The Overstory" by Richard Powers.')
    assert [(f.content, f.message_ids) for f in found] == [
        ('The user finally read "The Overstory" by Richard Powers.', ["m1"])]


def test_your_thing_is_the_other_side_by_name():
    assert 'The user joined "Trail Blazers", a hiking club in Denver.' in contents(
        'I took your advice and joined "Trail Blazers", a hiking club in Denver.')
    # with the other side's thing set aside, "took advice" names nothing of the user's own; nor does "value"
    assert "The user took Priya's advice." not in contents(
        'I took your advice and joined "Trail Blazers", a hiking club in Denver.')
    assert contents("I value your opinion!") == []


def test_your_thing_with_no_name_for_the_other_side_gives_nothing():
    assert contents('I took your advice and joined "Trail Blazers", a hiking club in Denver.',
                    other_side="assistant") == []


def test_it_is_the_title_the_message_said_before():
    assert contents('I started "Middlemarch" in May. It taught me a lot about patience.') == [
        'The user started "Middlemarch" in May 2025.', '"Middlemarch" taught the user a lot about patience.']


def test_it_opening_a_sentence_is_the_one_thing_the_sentence_before_named():
    assert contents("I went to a support group last week. It made me feel accepted and gave me courage.")[1:] == [
        "The support group made the user feel accepted and gave them courage."]
    assert contents("I bought a used camera. It was great.") == ["The user bought a used camera."]
    assert contents("Last week we had a quiet evening at a jazz bar in Oslo. It really made an impact on my kids.")[
        1:] == ["The quiet evening at a jazz bar in Oslo really made an impact on the user's kids."]


def test_we_with_an_adverb_before_the_verb_is_still_what_they_did():
    assert contents("We finally painted the kitchen green.") == [
        "The user and others finally painted the kitchen green."]


def test_a_good_time_with_its_time_before_its_place_is_a_memory():
    assert contents("We had a blast last summer at the Calgary Stampede.") == [
        "The user and others had a blast in summer 2024 at the Calgary Stampede."]  # "last summer" read later
    assert contents("I had a great time last weekend.") == []  # where, nothing says


def test_a_past_with_no_ed_is_said_as_a_past():
    assert contents("I learnt to sail on Lake Geneva as a teenager.") == [
        "The user learnt to sail on Lake Geneva as a teenager."]


def test_a_taste_said_in_the_past_is_typed_by_its_meaning():
    found = facts('I adored "Spirited Away" as a kid.')
    assert [(f.type, f.content) for f in found] == [("preference", 'The user adored "Spirited Away" as a kid.')]


def test_a_thing_the_user_made_or_describes_is_a_thing_whichever_the_chat_showed():
    assert contents("I made this quilt for my niece's wedding.") == ["The user made a quilt for their niece's wedding."]
    assert contents("My favourite dessert is this lemon tart.") == ["The user's favourite dessert is a lemon tart."]
    assert contents("This necklace means a lot to me.") == ["The user's necklace means a lot to them."]


def test_ing_words_that_own_something_of_the_users_are_the_subject():
    assert contents("Seeing my daughter learn to swim motivates me.") == [
        "Seeing the user's daughter learn to swim motivates them."]


@pytest.mark.parametrize(("text", "fact"), [
    ("I started teaching refugees and helping them find jobs, which feels great.",
     "The user started teaching refugees and helping them find jobs."),
    ("Last spring I found a pottery studio that I love, and it changed my weekends.",
     "In spring 2025, the user found a pottery studio that they love."),
])
def test_a_pronoun_the_clause_itself_explains_keeps_the_clause_without_its_aside(text, fact):
    assert contents(text) == [fact]


@pytest.mark.parametrize("text", [
    "Losing my job was a bummer.",  # how a moment felt
    "I love this genre.",  # which genre, only the chat shows
    "These moments show me what matters.",
    "This photo is from a special day.",  # what it shows, only the chat says
    "I'm determined to make this studio work.",
    "Your support means a lot to me.",  # thanks to the other side
    'I\'ll keep you posted about "Dune".',  # a promise to the other side
    'Thanks for your help with "Dune", I loved it.',
    "I loved it.",  # "it" only the chat shows
    "I really love your garden.",  # praise of the other side's thing
])
def test_thanks_praise_promises_and_what_only_the_chat_shows_give_nothing(text):
    assert contents(text) == []


def test_a_verdict_on_a_title_after_it_gives_nothing_more():
    assert contents('I finally watched "Heat". It was amazing.') == ['The user finally watched "Heat".']


def test_the_assistants_words_give_nothing():
    messages = (Message("m0", "assistant", 'I loved "Becoming Nicole" by Amy Ellis Nutt. Your advice helped me.',
                        SAID, "Priya"),
                Message("m1", "user", "Thanks!", SAID, "Ana"))
    assert distill_offline(Conversation("a", "c", None, messages)).fact_candidates == []


def test_a_resolved_fact_said_again_in_other_words_is_one_fact():
    said = FactCandidate(type="event", content='The user finally read "The Overstory" by Richard Powers.',
                         value="read", message_ids=["m1"], tags=["said"])
    again = FactCandidate(type="event", content='The user read "The Overstory" by Richard Powers at last.',
                          value="read", message_ids=["m2"], tags=["said", RESOLVED])
    merged = by_meaning([said, again], embedder=HashEmbedder())
    assert [(f.content, f.message_ids) for f in merged] == [(said.content, ["m1", "m2"])]
