"""What a chat with an AI assistant says that is no fact of the user's life (issue 23, precision on RealMem).

In a chat with an assistant (the other side has no person's name), much of what the user says is about the chat
itself, and a product keeps only what is true of the person beyond it. Read by the shape of what is said, not by
phrases:

- a pasted document: a long message mostly not in the first person ("You do such great work. Let us help you ..."),
  or one introduced as pasted ("Here is the text: ...", "This is information about myself: ..."), or lines of
  labelled fields ("Venue: ...", "Budget: ...") of any length. Its words are the document's, not statements the user
  makes now;
- role-play the user writes: stage directions in asterisks or brackets at the message's start ("*draws her sword*");
- the chat's own work: "we" with no one else named is the user and the assistant ("We talked about a weekly plan",
  "we want to maximize the reply rate");
- a state of the moment: a body part or the mind as the subject ("My chest is tight", "My head is splitting"; a
  condition, "My heart condition ...", is a thing the user has), or a state marked as lasting only until now ("is
  still", "right now", "at the moment", "already ... now").

A chat between two people (LoCoMo's speakers name each other) is read as before: there "we" is a couple or friends.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memlake.distill.models import Conversation, FactCandidate, Message
from memlake.text import content_words

# A pasted document is long and mostly not the user speaking: fewer than this share of its sentences say I/my/me/we.
PASTED_MIN_WORDS = 120
PASTED_FIRST_PERSON_SHARE = 0.34

_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|me|my|mine|myself|we|our|us)\b")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
# "Here is the text:", "This is the content:", "Below is my bio", "information about myself:", "the following ...:"
_INTRODUCED = re.compile(r"\b(?:here(?:'s| is| are)|below is|this is (?:the|my)|the following|information about "
                         r"(?:me|myself))\b[^.!?\n]{0,60}:|\bas follows\s*:", re.I)
# A document of labelled fields ("Owner: Facilities", "Venue: I have booked ...", "Budget: 9,500"), whatever its
# length: this many lines that open with a short label and a colon.
LABELLED_FIELDS = 3
_LABELLED_FIELD = re.compile(r"^[A-Z][\w&/ -]{1,30}:[ \t]+\S", re.M)
# "*leans closer*", "[walks to the door]", "(smiles)" opening a message: stage directions of a scene.
_STAGE_DIRECTION = re.compile(r"^\s*(?:\*[^*\n]{2,80}\*|\[[^\]\n]{2,80}\]|\((?:[a-z][^)\n]{2,80})\))")

# Parts of the body and of the mind that a state of the moment is said of, as it goes on or felt ("My hands are
# shaking", "My chest feels so tight"; "My eyes are weak" is lasting).
_BODY_OR_MIND = ("head|heart|chest|stomach|hands?|palms|legs?|knees|feet|eyes|throat|back|neck|body|mind|brain|"
                 "thoughts|patience|nerves|pulse")
_BODILY_STATE = re.compile(rf"^The user's (?:{_BODY_OR_MIND})\b(?! (?:condition|disease|problem|surgery|issue)s?\b)"
                           r"(?: (?:is|are|was|were)(?: still| already)? (?:all|so|too|very|really|completely|"
                           r"totally|truly|incredibly|absolutely|\w+ing\b)| (?:still |just )?(?:feels?|keeps?|won't|"
                           r"can't)\b| still\b)", re.I)
# A state said to hold only until now, or of this very moment ("is still working through the flashcards", "is
# already on the last chapter"; "is still a member of the club" names what lasts).
_OF_THE_MOMENT = re.compile(r"^The user (?!and others\b).*?\b(?:(?:is|are|feels?) still (?:\w+ly )?(?:\w+ing\b|"
                            r"\w+ed\b|so|too|very|really|a bit)|right now|at the moment|at this point|by now|"
                            r"already on)\b", re.I)
# The head noun after "the"/"this"/"that"/"these"/"those" (one describing word may stand before it).
_POINTED_THING = re.compile(r"\b(?:the|this|that|these|those)\s+(?:[a-z]+\s+)?([a-z]{3,})\b"
                            r"(?!\s+(?:of|for|to|with|in|at)\b)")
# Names an assistant answers under in an export (a reply under another capitalised name is a person's).
ASSISTANT_NAMES = frozenset({"assistant", "chatgpt", "claude", "gpt", "ai", "bot", "gemini", "copilot"})
_WE = re.compile(r"^The user and others\b")
_A_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}(?:st|nd|rd|th)? of [A-Z][a-z]+")


def is_assistant_chat(conversation: Conversation) -> bool:
    """Whether the other side of `conversation` is an assistant (`replies_from_an_assistant`)."""
    users = {m.speaker for m in conversation.messages if m.role == "user"}
    return replies_from_an_assistant([(m.role, m.speaker) for m in conversation.messages if m.role != "user"], users)


def replies_from_an_assistant(replies: Sequence[tuple[str, str | None]], user_speakers: set[str | None]) -> bool:
    """Whether a conversation is a chat with an assistant: someone replies (`replies`: the role and speaker of every
    message not the user's), and no reply comes from a person with a name. A statement told alone, as `remember`
    tells one, is no chat. The one rule both the offline distiller and the facts' confidence read."""
    return bool(replies) and not any(
        speaker and speaker not in user_speakers and speaker[0].isupper() and speaker.lower() not in ASSISTANT_NAMES
        for _, speaker in replies)


def spoken_part(message: Message) -> str | None:
    """What the user says in their own words in a message: all of it; the text before an introduced paste ("I have
    an app. Review the description as follows: <pasted>"); or None for a role-play scene or a long message mostly
    not in the first person (a pasted document)."""
    text = message.content
    if _STAGE_DIRECTION.match(text):
        return None
    introduced = _INTRODUCED.search(text)
    if introduced:
        return text[:introduced.start()]
    fields = list(_LABELLED_FIELD.finditer(text))
    if len(fields) >= LABELLED_FIELDS:  # a form, a brief, a CV: the document starts at its first field
        return text[:fields[0].start()]
    if len(text.split()) < PASTED_MIN_WORDS:
        return text
    sentences = [s for s in _SENTENCE.split(text) if len(s.split()) >= 3]
    first_person = sum(1 for s in sentences if _FIRST_PERSON.search(s))
    return None if sentences and first_person / len(sentences) < PASTED_FIRST_PERSON_SHARE else text


def _said_in(candidate: FactCandidate, spoken: str) -> bool:
    """Whether the fact's words are mostly in the spoken part (it was read there, not in the pasted text)."""
    words = {w for w in content_words(candidate.content) - {"user"} if not w[0].isdigit()}  # a date is resolved
    return not words or len(words & content_words(spoken)) >= 0.6 * len(words)


def why_of_this_chat(candidate: FactCandidate) -> str | None:
    """Why a fact read from an assistant chat is about the chat or this moment, not the user's life; None if it is
    not. A fact with a slot (a job, a home, a partner) is the user's whatever the chat."""
    if candidate.slot is not None:
        return None
    content = candidate.content
    if _WE.match(content) and not _A_DATE.search(content):  # "We're heading off on 20 December": a family's trip
        return "'we' in a chat with an assistant is the chat's own work"
    if _BODILY_STATE.match(content):
        return "a bodily state of the moment"
    if _OF_THE_MOMENT.search(content):
        return "a state of this moment"
    return None


def _brought_by_the_assistant(conversation: Conversation) -> set[str]:
    """The words the assistant said before the user did: the things it brought into the chat."""
    said_by_user: set[str] = set()
    brought: set[str] = set()
    for message in conversation.messages:
        words = content_words(message.content)
        if message.role == "user":
            said_by_user |= words
        else:
            brought |= words - said_by_user
    return brought


def _the_assistants_thing(candidate: FactCandidate, assistant_words: set[str]) -> bool:
    """Whether the fact is about a thing the assistant brought into the chat: "the review", "this checklist", "the
    breathing exercise" with its head noun said by the assistant before, and no name of its own ("the application
    for Acme Corp" names one)."""
    content = candidate.content[len("The user"):]
    if re.search(r"\b[A-Z][a-z]", content):
        return False
    return any(noun.lower() in assistant_words for noun in _POINTED_THING.findall(content))


def without_chat_talk(conversation: Conversation, candidates: list[FactCandidate]) -> list[FactCandidate]:
    """The candidates less those an assistant chat's pasted documents, role-play, own work or moment gave."""
    if not is_assistant_chat(conversation):
        return candidates
    spoken = {m.message_id: spoken_part(m) for m in conversation.messages if m.role == "user" and m.content}
    # the spoken parts that a paste follows: a fact from that message must be read in them
    pasted_after = {part for m in conversation.messages if (part := spoken.get(m.message_id)) and part != m.content}
    assistant_words = _brought_by_the_assistant(conversation)
    kept = []
    for candidate in candidates:
        parts = [spoken.get(m, "") for m in candidate.message_ids]
        if all(part is None or (part.strip() and part in pasted_after and not _said_in(candidate, part))
               for part in parts):
            continue  # read only in pasted text or a scene
        if why_of_this_chat(candidate) is None and not (candidate.slot is None
                                                        and _the_assistants_thing(candidate, assistant_words)):
            kept.append(candidate)
    return kept
