"""What the agent is shown is right: a fact's confidence comes from how it was read and what it says, not only from
the family of rule that read it (issue 37, "Precision first"; `memlake.distill.confidence`).

Each case goes through the offline distiller and the facts fold, as a home's facts do, and asks what is shown at the
default `shown_confidence`: a fact that points at the chat, a fragment, a hypothetical, or text the user asked an
assistant to rewrite stays a candidate; a plain, specific statement is shown after one saying.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memlake.distill.confidence import shown
from memlake.distill.models import Conversation, Message
from memlake.settings import Settings
from memlake_bench.shown import fold_conversations

THRESHOLD = Settings.model_fields["shown_confidence"].default


def _chat(text: str, other: str) -> Conversation:
    """One message of the user's and a reply: from a friend named `other`, or from an assistant."""
    when = datetime(2024, 3, 1, 18, tzinfo=UTC)
    reply_role = "assistant" if other == "assistant" else "user"
    return Conversation("ann", "c1", None, (Message("c1-m1", "user", text, when, speaker="Ann"),
                                            Message("c1-m2", reply_role, "Oh nice, tell me more!", when,
                                                    speaker=None if other == "assistant" else other)))


def _read(text: str, other: str = "Sam") -> tuple[list[str], list[str]]:
    """The facts read in `text`: those shown, and those kept as candidates."""
    facts = fold_conversations([_chat(text, other)])
    shown_now = facts.filter(shown(THRESHOLD))["content"].to_list()
    return shown_now, [c for c in facts["content"].to_list() if c not in shown_now]


@pytest.mark.parametrize("text", [
    "We talked about how it helped us and the trust it builds.",  # "it": only the chat says what
    "I spent the weekend with them at the lake.",  # "them": whom, only the chat says
    "Sara and I talked for hours about how it changed everything.",
    "My kids adore them!",  # "them" is not the kids (that would be "themselves"): what, only the chat says
    "My neighbours bought them last week.",
])
def test_a_fact_pointing_at_the_chat_is_a_candidate(text: str) -> None:
    shown_now, candidates = _read(text)
    assert candidates and not shown_now, (shown_now, candidates)


@pytest.mark.parametrize("text", [
    "I hit a major snag.",  # what snag, it does not say
    "We shared stories all night.",  # with whom, what stories
    "I tried a new routine.",
])
def test_a_vague_or_bare_fact_is_a_candidate(text: str) -> None:
    shown_now, candidates = _read(text)
    assert candidates and not shown_now, (shown_now, candidates)


@pytest.mark.parametrize("text", [
    "If the offer comes through, I'm moving to Berlin in June.",  # read as a plan, its condition lost
    "If I get the grant, I'll study marine biology in Bergen.",
    "Unless the lease falls through, I'm moving into a flat in Glasgow next month.",
])
def test_a_hypothetical_is_at_most_a_candidate(text: str) -> None:
    shown_now, _ = _read(text)
    assert not shown_now, shown_now


@pytest.mark.parametrize("text", [
    "Rewrite this for my cover letter: I work as a data analyst at Deloitte and I live in Madrid.",
    "Please rewrite to sound formal: Maria is the head of marketing at Unilever.",
    "Translate into French for the flyer: I live in Manchester with my two cats.",
])
def test_text_the_user_asks_an_assistant_to_rewrite_is_not_shown_as_theirs(text: str) -> None:
    shown_now, _ = _read(text, other="assistant")
    assert not shown_now, shown_now


@pytest.mark.parametrize(("text", "expected"), [
    ("I work as a nurse at St Mary's.", "The user works as a nurse."),
    ("My sister Ana lives in Porto.", "Ana lives in Porto."),
    ("My friend Priya teaches chemistry at a high school in Leeds.", "teaches chemistry at a high school in Leeds"),
    ("My cousin Malik collects vintage cameras from Leica.", "collects vintage cameras from Leica"),
    ("I play the cello in a community orchestra.", "The user plays the cello in a community orchestra."),
])
def test_a_plain_specific_statement_is_shown_after_one_saying(text: str, expected: str) -> None:
    shown_now, _ = _read(text)
    assert any(expected in fact for fact in shown_now), shown_now


def test_a_slot_said_in_an_assistant_chat_is_still_shown() -> None:
    shown_now, _ = _read("I live in Porto. I work as a nurse at the city hospital.", other="assistant")
    assert "The user lives in Porto." in shown_now and "The user works as a nurse." in shown_now


@pytest.mark.parametrize("text", [
    "I just got back from my run.",  # an event of the moment, nothing lasting in it
    "I lost my wallet again.",
    "I'm catching my breath.",  # a state of the moment
    "I was packing my bags.",
    "I finally got home.",
])
def test_a_passing_moment_is_a_candidate(text: str) -> None:
    shown_now, candidates = _read(text)
    assert candidates and not shown_now, (shown_now, candidates)


@pytest.mark.parametrize(("text", "expected"), [
    ("I usually swim in the lake before work.", "The user usually swims in the lake before work."),  # a habit
    ("I've been volunteering at the animal shelter for years.", "volunteering at the animal shelter"),
    ("I'm learning Portuguese for my move to Lisbon.", "learning Portuguese"),  # ongoing, named
    ("I have two kids, Mia and Leo.", "two kids"),
    ("I just finished reading Middlemarch.", "Middlemarch"),  # a one-off event, but of a named thing
    ("I took a pottery class at the community centre.", "a pottery class"),  # an event with a specific object
])
def test_a_lasting_or_specific_statement_is_shown_after_one_saying(text: str, expected: str) -> None:
    shown_now, _ = _read(text)
    assert any(expected in fact for fact in shown_now), shown_now


@pytest.mark.parametrize("text", [
    "I almost forgot my umbrella.",  # read as "The user almosts forgot ...": the user is no longer the subject
    "I almost lost my passport in Rome.",
])
def test_a_garbled_reading_is_not_shown(text: str) -> None:
    shown_now, _ = _read(text)
    assert not shown_now, shown_now


def _read_turns(turns: list[str]) -> list[str]:
    """The facts shown from several turns of the user's in one chat with an assistant."""
    when = datetime(2024, 3, 1, 18, tzinfo=UTC)
    messages = []
    for i, text in enumerate(turns):
        messages += [Message(f"c1-m{2 * i + 1}", "user", text, when, speaker="Ann"),
                     Message(f"c1-m{2 * i + 2}", "assistant", "Sure, go on.", when)]
    facts = fold_conversations([Conversation("ann", "c1", None, tuple(messages))])
    return facts.filter(shown(THRESHOLD))["content"].to_list()


@pytest.mark.parametrize("text", [
    "This jacket means so much to me.",  # which jacket: the photo in the chat shows it, the fact says "the user's"
    "This blanket means a lot to me.",
    "This necklace reminds me of my mom.",
    "This painting took me ages.",
])
def test_a_thing_the_user_pointed_at_with_this_or_that_is_a_candidate(text: str) -> None:
    shown_now, candidates = _read(text)
    assert candidates and not shown_now, (shown_now, candidates)


@pytest.mark.parametrize("text", [
    "I was looking at flights to Tokyo.",  # a scene set in the past progressive: a moment, named or not
    "I was reading about Roman aqueducts.",
])
def test_a_scene_told_as_going_on_then_is_a_candidate(text: str) -> None:
    shown_now, candidates = _read(text)
    assert candidates and not shown_now, (shown_now, candidates)


@pytest.mark.parametrize("turns", [
    ["Let's pretend you are my landlord and I'm your tenant.", "My name is Carla and I work as a plumber in Derby."],
    ["Act as a hiring manager and interview me.", "I am an accountant at KPMG and I live in Leeds."],
    ["Hi Rex, please reply as Rex the pirate.", "My name is Jonas and I live in Bergen."],
    ["Let's practise my interview for the nursing job.", "My name is Carla and I live in Derby."],
    ["Imagine you are a travel agent.", "I live in Graz and I work as a teacher at Graz University."],
])
def test_what_the_user_says_inside_a_role_play_or_practice_frame_is_not_shown(turns: list[str]) -> None:
    assert not _read_turns(turns)


def test_the_same_statements_without_a_frame_are_shown() -> None:
    shown_now = _read_turns(["My name is Jonas and I live in Bergen."])
    assert "The user lives in Bergen." in shown_now and "The user's name is Jonas." in shown_now


@pytest.mark.parametrize("text", [
    "Let's begin with **Step 2: Planning A Weekly Budget**.",  # a heading cut at its markup
    "Project title: Improved Kitchen Layouts",  # a label and what it labels, no sentence
])
def test_a_heading_or_label_is_not_read_as_a_fact(text: str) -> None:
    shown_now, _ = _read(text)
    assert not shown_now, shown_now


@pytest.mark.parametrize(("text", "expected"), [
    ("I run a bakery in Porto.", "The user runs a bakery in Porto."),
    ("I use Shopify for my online shop.", "The user uses Shopify for their online shop."),
    ("I prefer trains over planes for trips under 500 km.", "The user prefers trains over planes for trips under 500"),
])
def test_a_lasting_specific_first_person_fact_is_shown_in_an_assistant_chat(text: str, expected: str) -> None:
    shown_now, _ = _read(text, other="assistant")
    assert any(expected in fact for fact in shown_now), shown_now
