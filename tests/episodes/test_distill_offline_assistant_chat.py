"""The offline distiller in a chat with an AI assistant (issue 23, precision on long assistant chats): what the user
says about the chat's own work, a state of the moment, a pasted document or a role-play scene is no fact of their
life, while what is true of them beyond the chat stays. Phrasings written for these tests."""

from datetime import UTC, datetime

import pytest

from memlake.distill.models import Conversation, Message
from memlake.distill.offline import distill_offline

SAID = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
REPLY = "Sure, here is what I suggest for the next step, with a few options to choose from."


def contents(*user_texts: str, assistant: str | None = None) -> list[str]:
    """The facts of a chat where the user says `user_texts`, each answered by the assistant (`assistant` names the
    other side when it is a person)."""
    messages = []
    for i, text in enumerate(user_texts):
        messages.append(Message(f"u{i}", "user", text, SAID))
        messages.append(Message(f"a{i}", "assistant", REPLY, SAID, assistant))
    session = distill_offline(Conversation("a", "c", None, tuple(messages)))
    return [c.content for c in session.fact_candidates]


@pytest.mark.parametrize("text", ["We went over the second outline for the report.",
                                  "We agreed on the second outline for the report.",
                                  "We want to push the open rate of the newsletter."])
def test_we_in_a_chat_with_an_assistant_is_the_chats_own_work(text):
    assert not [c for c in contents(text) if c.startswith("The user and others")]


def test_we_said_with_a_person_named_stays_a_fact_of_two_people():
    """Between two people "we" is the two of them, or a couple: the rule is for assistant chats only."""
    facts = contents("We repainted the kitchen together.", assistant="Priya")
    assert [c for c in facts if c.startswith("The user and others")]


def test_we_with_a_day_in_an_assistant_chat_stays():
    facts = contents("We're flying out to Crete on the 14th of August with the kids.")
    assert [c for c in facts if "Crete" in c]


@pytest.mark.parametrize("text", ["My stomach is churning so badly.", "My hands keep trembling.",
                                  "My mind is racing and I can't settle.", "I'm still so jittery.",
                                  "I'm totally overwhelmed at the moment.",
                                  "I'm already on the last chapter of the workbook.",
                                  "I'm still working through the second set of flashcards.",
                                  "I'm still completely drained.", "My palms were all sweaty."])
def test_a_bodily_state_or_a_state_of_the_moment_is_no_fact(text):
    assert contents(text) == []


@pytest.mark.parametrize(("text", "word"), [("My heart condition means I avoid caffeine.", "caffeine"),
                                            ("I run a bakery in Lagos.", "bakery"),
                                            ("I'm writing a fantasy novel.", "novel"),
                                            ("My eyes are weak, so I always wear glasses.", "eyes are weak"),
                                            ("I'm still a member of the chess club.", "chess club")])
def test_a_lasting_fact_of_the_same_shape_stays(text, word):
    assert [c for c in contents(text) if word in c]


LONG_NOT_FIRST_PERSON = ("The museum opens at nine and closes at six. Guided tours start every hour from the main "
                         "hall. Tickets include the sculpture garden and the east wing. Children under twelve enter "
                         "free with an adult. The cafe serves lunch until three. Photography is allowed without "
                         "flash. Lockers are available near the entrance. The shop sells prints and catalogues. "
                         "Audio guides come in six languages. Members get early access on Sundays. The library is "
                         "open by appointment only. Wheelchairs can be borrowed at the desk. Large bags must be "
                         "left in the cloakroom. The terrace offers views of the river and the old bridge. Evening "
                         "openings happen on the first Friday of each month with live music. Volunteers lead family "
                         "workshops on weekends. I manage the volunteers who lead those workshops.")


def test_a_long_message_mostly_not_in_the_first_person_is_a_paste():
    assert contents(LONG_NOT_FIRST_PERSON) == []


def test_a_document_introduced_as_pasted_gives_no_facts():
    pasted = "Please shorten this. Here is the text: " + LONG_NOT_FIRST_PERSON[:300]
    assert not [c for c in contents(pasted) if "tours" in c or "museum" in c]


def test_what_the_user_says_before_a_paste_stays():
    facts = contents("I run a small tea shop in Leeds. Rewrite my shop's About page, which reads as follows: "
                     "Founded long ago, the shop sells loose leaf teas from many gardens and hosts tastings.")
    assert [c for c in facts if "tea shop" in c]
    assert not [c for c in facts if "tastings" in c]


def test_a_role_play_scene_gives_no_facts():
    assert contents("[walks to the window] I tell Mira the ship is leaving at dawn.") == []
    assert contents("*draws her sword and steps into the hall* I give the innkeeper a bag of gold coins.") == []


def test_a_first_person_message_is_read_as_before():
    assert [c for c in contents("I'm writing a fantasy novel about a lighthouse keeper.") if "novel" in c]


def test_a_statement_told_alone_is_no_assistant_chat():
    """`remember "We adopted a rescue greyhound"` has no reply: "we" is the user's household, as before."""
    session = distill_offline(Conversation("a", "c", None, (Message("m1", "user", "We adopted a rescue greyhound.",
                                                                    SAID),)))
    assert [c for c in session.fact_candidates if "greyhound" in c.content]


def chat(*turns: tuple[str, str]) -> list[str]:
    messages = tuple(Message(f"m{i}", role, text, SAID) for i, (role, text) in enumerate(turns))
    return [c.content for c in distill_offline(Conversation("a", "c", None, messages)).fact_candidates]


def test_a_thing_the_assistant_brought_into_the_chat_is_the_chats_work():
    facts = chat(("user", "Help me get ready for Monday."),
                 ("assistant", "Here is a packing checklist and a short stretching routine for the morning."),
                 ("user", "I printed the checklist and tried the stretching routine."))
    assert not [c for c in facts if "checklist" in c or "routine" in c]


def test_a_thing_the_user_named_first_stays():
    facts = chat(("user", "I keep a vegetable garden behind the house."),
                 ("assistant", "Lovely! A garden is a great way to unwind. What do you grow?"),
                 ("user", "I water the garden every evening before dinner."))
    assert [c for c in facts if "garden" in c]


def test_a_document_of_labelled_fields_is_a_paste_whatever_its_length():
    """A stranger's trial pasted a short proposal ("Venue: I have provisionally booked ...", "I live in Bath, so I can
    be on site"): its first-person lines became the user's facts, and "I live in Bath" their new home."""
    facts = contents("could you tidy this up for the board. I lead the events team at Northwind Labs.\n\n"
                     "EVENT BRIEF: Spring offsite\nOwner: Operations\nWhere: I have reserved the boathouse in Henley.\n"
                     "Contact: I live in Reading, so I can open up at 8am.\nBudget: 4,000 in all.")
    assert [c for c in facts if "Northwind Labs" in c]
    assert not [c for c in facts if "boathouse" in c or "Reading" in c]
