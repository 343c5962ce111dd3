"""What frames a user's words as no statement of their own life, read from the parse: a role-play or a pretend game
they set up with the assistant, and a text they ask the assistant to rework (a letter, an email). A name said inside
either is not the user's (readers/table_people.py); the frame is told by its structure, not by a phrase.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memlake.distill.offline.readers.table_patterns import _subject
from memlake.nlp import parse
from memlake.nlp.words import letter_words

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

    from memlake.distill.offline.sentences import Sentence

# Verbs a user asks an assistant to rework a text with ("rewrite this email", "fix the grammar in this letter").
_REWORK = frozenset({"rewrite", "reword", "rephrase", "paraphrase", "edit", "proofread", "polish", "fix", "shorten",
                     "improve", "tighten", "translate", "correct", "check", "review", "make", "draft", "format",
                     "clean", "redo", "revise", "summarize", "summarise"})
_TEXTS = frozenset({"letter", "email", "e-mail", "mail", "message", "note", "text", "post", "bio", "draft", "reply",
                    "paragraph", "this", "it", "following", "below", "grammar", "wording", "intro", "introduction"})
# What sets a role-play or a pretend game: verbs of pretending, and the nouns of a game played with the assistant.
_PRETEND = frozenset({"pretend", "roleplay", "role-play", "imagine", "simulate"})
_PLAY_AS = frozenset({"act", "reply", "respond", "answer", "speak", "talk", "play", "pose", "behave"})
_GAMES = frozenset({"roleplay", "role-play", "role", "game", "scenario", "simulation"})
_PRACTICE = frozenset({"practice", "practise", "mock", "pretend", "fake"})
# The words a sentence setting such a frame holds one of (only such sentences are parsed for one).
FRAME_WORDS = frozenset({*_PRETEND, "pretending", "imagining", *_PLAY_AS, "acting", "playing", *_GAMES, "games",
                         *_PRACTICE})


def reworked(before: str) -> bool:
    """Whether the message's text `before` a word asks to rework a text: the word is in that text."""
    return _asks_to_rework(parse(before)) if set(before.lower().split()) & _REWORK else False


def _asks_to_rework(doc: Doc) -> bool:
    """A request to rework a text: a verb of `_REWORK` with a text for its object ("rewrite this email", "fix the
    grammar in this letter", "make this message more polite"), asked ("Can you ...", "Please ...", "Help me ...")."""
    for verb in doc:
        if verb.lemma_ not in _REWORK or verb.pos_ != "VERB":
            continue
        objects = [c for c in verb.children if c.dep_ in ("dobj", "nsubj", "ccomp", "xcomp")]
        objects += [g for c in objects for g in c.children if g.dep_ in ("prep", "nsubj")]
        objects += [g for c in objects for g in c.children if g.dep_ == "pobj"]
        asked = _subject(verb) in (None, "you") or verb.head.lemma_ in ("help", "need", "want", "like")
        if asked and any(o.lemma_ in _TEXTS or o.lower_ in _TEXTS for o in objects):
            return True
    return False


def pretend_messages(sentences: list[Sentence]) -> set[str]:
    """The messages said inside a role-play or a pretend game: from the first sentence that sets one up on."""
    inside: set[str] = set()
    for sentence in sentences:
        if inside or (FRAME_WORDS.intersection(letter_words(sentence.text))
                      and sets_a_pretend_frame(parse(sentence.text))):
            inside.add(sentence.message.message_id)
    return inside


def sets_a_pretend_frame(doc: Doc) -> bool:
    """Whether a sentence sets up a role-play or a pretend game with the assistant: "Let's do a role-play", "Pretend
    you are a receptionist", "For this practice interview, ...", "Let's play a game where ...", "Please reply as
    Simone", "Can we roleplay a job interview?" (not what was: "we played a game", "she played a big role", "I can't
    imagine", "a practice session")."""
    for token in doc:
        if token.lower_ in ("roleplay", "role-play") or (token.lower_ == "role" and token.head.lower_ == "play"
                                                         and token.head.pos_ == "NOUN"):
            return True
        if (token.lemma_ in _PRETEND and _asked(token)) or (
                token.lemma_ in _GAMES and token.dep_ == "dobj" and token.head.lemma_ in ("play", "do", "start", "try")
                and _asked(token.head)):
            return True
        if token.lemma_ in _PRACTICE and token.dep_ in ("compound", "amod") and token.head.lemma_ in _SPOKEN:
            return True
        if token.lemma_ in _PLAY_AS and _asked(token) and any(
                c.dep_ == "prep" and c.lower_ == "as" and any(g.dep_ == "pobj" for g in c.children)
                for c in token.children):
            return True
    return False


# What one practises with an assistant playing the other side ("a practice interview", "a mock negotiation").
_SPOKEN = frozenset({"interview", "conversation", "call", "negotiation", "dialogue", "chat", "meeting", "pitch"})


def _asked(verb: Token) -> bool:
    """A verb asked of the assistant, or of the two together: "Pretend ...", "Let's play ...", "Can we ...", "you
    play my landlord" (not told of what was, nor of another)."""
    subject = _subject(verb)
    return verb.tag_ in ("VB", "VBP") and (verb.head.lemma_ == "let" or subject in (None, "you", "'s") or (
        subject == "we" and any(c.dep_ == "aux" and c.tag_ == "MD" for c in verb.children)))
