"""Every fact the offline distiller keeps stands alone (issue 23, precision): a thing only the chat shows, a vague
head, a verb whose object is left out or passing talk of the week gives no fact, and a condition the sentence hung
the statement on stays with it."""

from datetime import UTC, datetime

import pytest

from memlake.distill.models import Conversation, Message
from memlake.distill.offline import distill_offline

SAID = datetime(2025, 6, 2, 10, 0, tzinfo=UTC)


def contents(user_text: str, role: str = "user") -> list[str]:
    """The fact contents of one message, after a question of the other side."""
    messages = (Message("m0", "assistant", "How was your week?", SAID, "Priya"),
                Message("m1", role, user_text, SAID, "Ana"))
    return [f.content for f in distill_offline(Conversation("a", "c", None, messages)).fact_candidates]


@pytest.mark.parametrize(
    ("text", "left_out"),
    [
        ("I'm thinking of getting boots like that for the winter.", "like that"),  # like what: only the chat shows
        ("I finally got a photo of the northern lights, check it out!", "check it"),  # "it" is the photo in the chat
        ("I always turn to something warm.", "something"),  # a vague head names nothing
        ("We did one nice thing for the neighbours on Saturday.", "one nice thing"),
        ("My cat is doing much better now.", "better"),  # better than what, only the chat says
        ("I promised to be more careful next time.", "careful"),  # careful about what
        ("My week has been busy with the move.", "week"),  # how the week went: passing talk
        ("I bought some cool stuff at the market in Porto.", "cool stuff"),
        ("I went to the concert with my cousin.", "the concert"),  # which concert, only the chat says
        ("My kids loved the show so much.", "the show"),
    ],
)
def test_a_fact_that_does_not_stand_alone_is_not_kept(text, left_out):
    assert not [c for c in contents(text) if left_out in c]


def test_a_thing_pointed_at_is_kept_only_as_a_thing_named():
    # "that lamp" is only in the chat; a lamp bought at the flea market is what the user said of their own life
    assert not [c for c in contents("I bought that lamp at the flea market yesterday.") if "that lamp" in c]


def test_a_statement_keeps_the_condition_its_sentence_hung_it_on():
    assert contents("When I'm anxious, I always bake bread.") == ["The user always bakes bread when they're anxious."]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("I bought a secondhand cello from a shop in Leeds.", "secondhand cello"),
        ("I fixed my old bike and rode it to work.", "rode it to work"),  # "it" is the bike the fact names
        ("I've been into birdwatching since I was a teenager.", "birdwatching"),
        ("I started learning Portuguese in March.", "Portuguese"),
        ("I love fantasy stuff.", "fantasy stuff"),  # a kind of stuff
        ("Family is the most important thing to me.", "Family"),
        ("I went to the trip to Rome with my cousin Ali.", "Ali"),
    ],
)
def test_a_fact_that_names_what_it_is_about_is_kept(text, words):
    assert [c for c in contents(text) if words in c]


def test_the_other_side_says_nothing_of_the_user():
    assert contents("When I'm anxious, I always bake bread.", role="assistant") == []


def test_a_they_the_fact_names_no_one_for_is_not_kept():
    assert not [c for c in contents("I love how they make me laugh every time.") if "they make" in c]


def test_a_statement_after_a_dash_is_read_when_the_whole_sentence_gave_nothing():
    # the first part speaks to the other side, the second tells of the user's own life
    said = contents("Priya, you won't believe it - I got coached by this brilliant chess player yesterday!")
    assert said == ["The user got coached by a brilliant chess player on 2025-06-01."]
    # praise of what the other side does, after a dash, is no statement of the user's
    assert contents("Baking sourdough and selling it at the market - that's amazing!") == []
