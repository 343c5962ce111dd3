"""The user's people, pets and name as the reader table reads them from the parse (issue 37: readers/table_people.py).

From a stranger's trial: "We adopted a beagle named Biscuit" became the user's *team* adopting something, hidden. From
RealMem's judged samples: a name said inside a role-play or a pretend game, or in a letter the user asks to have
rewritten, was kept as the user's own name. Each test has phrasings of its own, not the trial's sentences.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memlake.distill.confidence import shown
from memlake.distill.models import Conversation, DistilledSession, Message
from memlake.settings import Settings
from memlake_bench.shown import fold_conversations

THRESHOLD = Settings.model_fields["shown_confidence"].default


def _chat(*texts: str, other: str = "assistant") -> Conversation:
    """The user's messages `texts`, each answered by an assistant or by a friend named `other`."""
    when = datetime(2026, 5, 2, 18, tzinfo=UTC)
    role, speaker = ("assistant", None) if other == "assistant" else ("user", other)
    messages = []
    for i, text in enumerate(texts):
        messages += [Message(f"c1-u{i}", "user", text, when, speaker="Rowan"),
                     Message(f"c1-a{i}", role, "Oh nice, tell me more.", when, speaker=speaker)]
    return Conversation("rowan", "c1", None, tuple(messages))


def _distilled(*texts: str) -> DistilledSession:
    from memlake.distill.offline import distill_offline

    return distill_offline(_chat(*texts))


def _shown(*texts: str, other: str = "Sam") -> list[str]:
    facts = fold_conversations([_chat(*texts, other=other)])
    return facts.filter(shown(THRESHOLD))["content"].to_list()


def _names(*texts: str) -> list[str]:
    """The user's names the distiller read, as a slot or kept as said ("The user's name is Carla.")."""
    return [c.content for c in _distilled(*texts).fact_candidates if c.slot == "name" or "name is" in c.content]


def _the_users(fact: str) -> bool:
    """Said of the user alone: "The user adopted ...", "In March 2026, the user got ..."."""
    return "the user " in fact.lower() and "the user's team" not in fact.lower() and "and others" not in fact


@pytest.mark.parametrize("text, kind, name", [
    ("We adopted a beagle named Biscuit last month.", "beagle", "Biscuit"),
    ("We got a kitten called Mochi in March.", "kitten", "Mochi"),
    ("We rescued a greyhound named Juno in the spring.", "greyhound", "Juno"),
    ("My wife and I adopted a tabby called Pickle last week.", "tabby", "Pickle"),
])
def test_a_named_pet_the_user_adopted_or_got_is_theirs_with_its_kind(text: str, kind: str, name: str) -> None:
    # read in a chat with an assistant: the user's pet, by kind and name, and no team of theirs
    facts = [c.content for c in _distilled(text).fact_candidates]
    assert any(_the_users(c) and kind in c and name in c for c in facts), facts
    assert not any("team" in c or "others" in c for c in facts), facts
    # and shown after one saying (in a chat between people: an assistant chat's bar is `ASSISTANT_CHAT_FACTOR`'s)
    shown_now = _shown(text)
    assert any(_the_users(c) and kind in c and name in c for c in shown_now), shown_now


@pytest.mark.parametrize("text, kind", [
    ("We rescued a cat last weekend.", "cat"),
    ("We adopted a puppy in March.", "puppy"),
    ("Two weeks ago we finally got a dog!", "dog"),
])
def test_an_unnamed_pet_the_user_adopted_is_shown_as_theirs(text: str, kind: str) -> None:
    shown_now = _shown(text)
    assert any(_the_users(c) and f" {kind} " in c for c in shown_now), shown_now
    assert not any("team" in c or "others" in c for c in shown_now), shown_now


@pytest.mark.parametrize("text", [
    "We adopted a new framework at work.",  # no animal
    "My sister adopted a cat named Olive.",  # the sister's pet
    "We might adopt a dog called Rex one day.",  # a wish
    "I didn't get a puppy in the end.",  # denied
])
def test_what_is_no_pet_of_the_users_is_none(text: str) -> None:
    pets = [c.content for c in _distilled(text).fact_candidates if "kin_or_pet" in c.tags and "user" in c.content
            and c.subject in ("user", None)]
    assert pets == []


@pytest.mark.parametrize("texts", [
    ("Let's do a role-play. You play my landlord. My name is Carla and I'm behind on rent.",),
    ("Pretend you are a hotel receptionist. Hi, I'm Jonah, I have a booking.",),
    ("For this practice interview, my name is Priya and you're the hiring manager.",),
    ("Let's play a game where you're a barista.", "Hello, my name is Tariq! One flat white please."),
    ("Can we roleplay a job interview? You are the interviewer.", "Hi, I'm Grace, thanks for having me."),
])
def test_a_name_said_in_a_role_play_or_pretend_frame_is_not_the_users(texts: tuple[str, ...]) -> None:
    assert _names(*texts) == []


@pytest.mark.parametrize("text", [
    "Please rewrite this cover letter: Dear hiring manager, my name is Elena Rossi and I am applying for the analyst "
    "role. Kind regards, Elena",
    "Fix the grammar in this letter please.\n\nDear Anna,\nMy name is Oskar and I am your new neighbour.\nBest,\nOskar",
    "Can you shorten this email? Hello all, I'm Wei, the new intern. Looking forward to meeting you. Wei",
    "Make this message more polite: Hi Tom, this is Bea from the third floor. Your music is too loud. Bea",
])
def test_a_name_in_a_letter_the_user_asks_to_rewrite_is_not_theirs(text: str) -> None:
    assert _names(text) == []


@pytest.mark.parametrize("texts, name", [
    (("My name is Omar and I need help with my CV.",), "Omar"),
    (("Hi, I'm Lena! Can you rewrite this email? Dear team, the meeting moved to Friday. Thanks",), "Lena"),
    (("I'm Dana, nice to meet you.", "Let's do a role-play now: you're my landlord."), "Dana"),
    # a game played or a role had, told as what was: no frame set up with the assistant
    (("We played a board game last night.", "My name is Ines, by the way."), "Ines"),
    (("My mentor played a big role in my career.", "I can't imagine it otherwise.", "Call me Oren."), "Oren"),
])
def test_the_users_own_name_beside_a_frame_is_still_read(texts: tuple[str, ...], name: str) -> None:
    assert [c.value for c in _distilled(*texts).fact_candidates if c.slot == "name"] == [name]


# The shapes the parse gives some phrasings of `bench changes` (the regex readers read them as words; the rows must
# read them as the small model parses them): a name hung on the greeting, "me" as a compound of the name, "my name"
# under "from", a left-out "I", an ending told before the new partner.
@pytest.mark.parametrize("text, slot, value", [
    ("Hi, Maggie here.", "name", "Maggie"),
    ("Hi, Priya Nair here.", "name", "Priya Nair"),
    ("My husband Ines cooks most nights.", "partner", "Ines"),
    ("Everyone calls me Maggie.", "name", "Maggie"),
    ("From now on my name is Alexandra.", "name", "Alexandra"),
    ("Been going out with Noor for a few months.", "partner", "Noor"),
    ("Chen and I split up, and now I'm dating Noor.", "partner", "Noor"),
])
def test_shapes_of_the_parse_still_give_the_slot(text: str, slot: str, value: str) -> None:
    assert [(c.slot, c.value) for c in _distilled(text).fact_candidates if c.slot] == [(slot, value)]
