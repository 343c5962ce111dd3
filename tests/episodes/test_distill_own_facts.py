"""The user's own facts as a stranger's trial export told them (issue 23): an introduction after a lead-in, an
ending said as an idiom, a move told by its day."""

from datetime import UTC, datetime

import pytest

from memlake.distill.models import Conversation, DistilledSession, Message
from memlake.distill.offline import distill_offline

SAID = datetime(2026, 3, 10, 9, 0, tzinfo=UTC)


def one(text: str, said: datetime = SAID) -> DistilledSession:
    return distill_offline(Conversation("a", "c", None, (Message("m1", "user", text, said),)))


def slots(text: str, said: datetime = SAID) -> list[tuple[str | None, str, str]]:
    return [(c.slot, c.subject, c.value) for c in one(text, said).fact_candidates if c.slot]


# --- an introduction after a greeting and a lead-in that announces it -------------------------------------------


@pytest.mark.parametrize(
    ("text", "name"),
    [
        # the trial's opening
        ("Hi! Quick intro since I'll be using you a lot: I'm Rowan, I'm a data analyst at Kestrel Insurance in "
         "Bristol.", "Rowan"),
        ("Hello! A bit about me: I'm Priya and I teach maths in Leeds.", "Priya"),
        ("Hey there, some background before we start: I'm Tomás, I run a small bakery.", "Tomás"),
        ("Good morning! First things first: I'm Ana Lima.", "Ana Lima"),
    ],
)
def test_an_introduction_after_a_greeting_and_a_lead_in_names_the_user(text, name):
    assert ("name", "user", name) in slots(text)


@pytest.mark.parametrize(
    "text",
    [
        "Hi! Quick question: I'm German, is that a problem for the visa?",  # a nationality, not a name
        "Hi! My sister always says: I'm Bella.",  # reported: someone else's words
        "Hi! I moved house last week. Anyway: I'm Sam.",  # a statement came between the greeting and it
        "Quick intro: I'm Rowan.",  # no greeting: "I'm <capitalised word>" alone is too often no name
    ],
)
def test_a_lead_in_without_a_greeting_or_with_a_statement_names_no_one(text):
    assert [s for s in slots(text) if s[0] == "name"] == []


# --- an ending said as an idiom -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "ended"),
    [
        # the trial's: "so Kestrel is behind me" after the new job
        ("I accepted Halvard's offer! I started there last Monday as a senior analyst, so Kestrel is behind me.",
         "Kestrel"),
        ("Globex is in the past now.", "Globex"),
        ("Honestly Initech is history for me.", "Initech"),
        ("I'm finally done with Acme Robotics.", "Acme Robotics"),
        ("We've moved on from Brightline.", "Brightline"),
        ("I've put my old job at the bank behind me.", "their old job at the bank"),
        ("We've finally moved on from the night shifts.", "the night shifts"),
    ],
)
def test_an_idiom_of_ending_says_what_ended_never_the_idiom_literally(text, ended):
    contents = [c.content for c in one(text).fact_candidates]
    assert f"The user is done with {ended}." in contents
    assert not any("behind the user" in c or "history for the user" in c or "in the past" in c for c in contents)


@pytest.mark.parametrize(
    "text",
    [
        "I'm not done with Acme yet.",  # negated
        "I'm done with this.",  # only the chat says what
        "I'm done with work for today.",  # a day's work, not a job ended
        "I'm done with the intro to my next movie.",  # a task finished, as often as a state ended
        "Sam is behind me in the queue.",  # where someone stands
        "Sam is right behind me.",
        "If Globex is behind me by June, I'll celebrate.",  # hypothetical
    ],
)
def test_what_only_sounds_like_an_ending_ends_nothing(text):
    assert not any(c.content.startswith("The user is done with") for c in one(text).fact_candidates)


# --- a move told by its day ahead -----------------------------------------------------------------------------

JULY_20 = datetime(2026, 7, 20, 9, 21, tzinfo=UTC)  # a Monday


@pytest.mark.parametrize(
    ("text", "city", "day"),
    [
        # the trial's
        ("Also Imogen has just landed a new job as head of geography at Kingswood School, she starts in September. "
         "And we've signed for a flat in Bath, the move is on 1 August.", "Bath", "2026-08-01"),
        ("We found a house in Leeds, we move on the 14th.", "Leeds", "2026-08-14"),
        ("We've bought a place in Porto and we're moving in on 3 August.", "Porto", "2026-08-03"),
        ("We signed the lease on an apartment in Oslo. The move is on Saturday.", "Oslo", "2026-07-25"),
        ("Moving day is 12 August, we got a flat in York!", "York", "2026-08-12"),
        ("I signed the lease on a flat in Ancoats, Manchester, moving on September 1st.", "Manchester", "2026-09-01"),
    ],
)
def test_a_home_got_with_a_move_day_ahead_is_a_plan_until_that_day_and_home_from_it(text, city, day):
    candidates = one(text, JULY_20).fact_candidates
    homes = [(c.value, c.valid_from) for c in candidates if c.slot == "home_city" and c.subject == "user"]
    assert homes == [(city, day)]
    plans = [(c.content, c.valid_until) for c in candidates if c.type == "commitment" and c.subject == "user"]
    assert plans == [(f"The user plans to move to {city} (around {day}).", day)]


@pytest.mark.parametrize(
    "text",
    [
        "The move is on 1 August.",  # no home named: where to?
        "We sold our flat in Bath, the move is on 1 August.",  # a home left, not got
        "We found a flat in Bath and one in Bristol, the move is on 1 August.",  # which one?
    ],
)
def test_a_move_day_without_one_home_got_plans_no_move(text):
    candidates = one(text, JULY_20).fact_candidates
    assert not any("plans to move" in c.content or c.slot == "home_city" for c in candidates)


# --- the city of work, guessed as home, and what others' homes say of it ----------------------------------------


def conversation(*texts: str) -> DistilledSession:
    messages = tuple(Message(f"m{i}", "user", text, SAID) for i, text in enumerate(texts, 1))
    return distill_offline(Conversation("a", "c", None, messages))


@pytest.mark.parametrize(
    "other",
    [
        "And my brother Tomasz lives in Cardiff.",  # the trial's
        "My parents are based in Swansea.",
        "Our friend Noor commutes from Newport.",
    ],
)
def test_where_someone_else_lives_leaves_the_users_city_of_work_as_their_guessed_home(other):
    session = conversation("I'm a data analyst at Kestrel Insurance in Bristol.", other)
    homes = [(c.value, c.tags) for c in session.fact_candidates if c.slot == "home_city" and c.subject == "user"]
    assert homes == [("Bristol", ["home", "inferred"])]


@pytest.mark.parametrize(
    "mine",
    ["I commute in from Bath every day.", "I work remotely most days.", "We're based in Bath, to be honest."],
)
def test_where_the_user_says_they_live_or_work_from_drops_the_guess(mine):
    session = conversation("I'm a data analyst at Kestrel Insurance in Bristol.", mine)
    assert "Bristol" not in [c.value for c in session.fact_candidates if c.slot == "home_city"]
