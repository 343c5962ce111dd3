"""The relevance gate: which one section of memory a question needs, and why.

Heuristic: cues in the question, checked in a fixed order (the first that fires wins). Exact words ask for
the transcript; a shared past ("we discussed", "remember when") or a follow-up led by a pronoun asks for
episodes; "who am I" asks for identity; the name of a subject the facts are about asks for facts; another name
said in past conversations (a speaker, an entity of an episode) asks for matched excerpts of them; a recall
verb or a question about oneself asks for facts; nothing fired, no section (the block is the date and the
overrides). `off` always answers facts, the section most questions need. The `llm` mode (memlake.context.
llm_gate) asks the core model and falls back to this one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from memlake.distill.offline.vocabulary import OTHER_RELATIVES, PARTNER_WORDS, SIBLING_WORDS
from memlake.errors import BadRequest

SECTIONS = ("transcript", "episodes", "identity", "facts", "excerpts", "none")

_TRANSCRIPT = ("exact words", "verbatim", "word for word", "exactly what i said", "exactly what you said", "quote")
_EPISODES = ("we discussed", "we discuss", "we talked", "we talk", "we spoke", "we've discussed", "we've talked",
             "remember when", "last time", "our conversation", "we chatted", "that conversation", "you told me",
             "i told you")
_PRONOUN_LEAD = ("it", "that", "this", "those", "these", "they", "them", "he", "she", "there")
_IDENTITY = ("what's my name", "what is my name", "who am i", "my name", "about me", "what do you know about me")
_RECALL_VERBS = ("remember", "recall", "remind", "what do you know", "did i say", "did i mention", "have i")
_FIRST_PERSON = re.compile(r"\b(i|i'm|im|my|me|mine|myself|i've|i'd)\b")
_PAST_OR_CHANGE = ("used to", "before", "previously", "formerly", "earlier", "originally", "change", "changed",
                   "history", "moved from", "anymore", "no longer", "old", "former", "past", "was i", "did i")

# What a question about oneself names -> the slots of the user's facts that answer it (distill/models.py)
_SLOT_CUES = {
    "home_city": ("live", "living", "home", "city", "moved", "move", "reside", "based"),
    "employer": ("work", "working", "job", "employer", "company"),
    "job_title": ("job", "role", "title", "position", "do for a living"),
    "name": ("name", "called"),
    "partner": ("partner", "wife", "husband", "girlfriend", "boyfriend", "spouse"),
    "sibling": ("sister", "brother", "sibling"),
    "diet": ("diet", "eat", "vegetarian", "vegan", "food"),
}
# Someone the user speaks of: a slot cue right after one of them ("what's my dog called", "where does my sister
# live", "my brother's job") asks about them, not about the user.
_SOMEONE_ELSE = frozenset(word for word in (*PARTNER_WORDS, *SIBLING_WORDS, *OTHER_RELATIVES, "dog", "puppy", "cat",
                                            "kitten", "pet", "kid", "child", "baby") if " " not in word)


@dataclass(frozen=True)
class GateDecision:
    """The section a question needs, the cue that fired (None: none did) and why, in words."""

    section: str
    fired: str | None
    reason: str
    wants_history: bool = False  # the question asks about the past or about changes
    slots: tuple[str, ...] = field(default=())  # the user's slots the question names


def _words(text: str) -> str:
    return " ".join(re.findall(r"[\w']+", text.lower().replace("\u2019", "'")))


def _first_in(text: str, cues: Iterable[str]) -> str | None:
    """The first cue that is in `text` as whole words."""
    padded = f" {text} "
    return next((cue for cue in cues if f" {cue} " in padded), None)


def _users_cue_in(text: str, cues: Iterable[str]) -> bool:
    """Whether one of `cues` is in `text` as whole words about the user: not right after someone else the user
    speaks of ("my dog called", "my brother's job")."""
    words = text.split()
    for cue in cues:
        said = cue.split()
        spots = [at for at in range(len(words) - len(said) + 1) if words[at:at + len(said)] == said]
        if spots and not any(at > 0 and words[at - 1].removesuffix("'s") in _SOMEONE_ELSE for at in spots):
            return True
    return False


def first_name_in(text: str, names: Iterable[str]) -> str | None:
    """The first of `names` that `text` holds as whole words, ignoring case, or as a possessive ("Caroline's")."""
    return _first_name_in(_words(text), names)


def _first_name_in(text: str, names: Iterable[str]) -> str | None:
    """`first_name_in` of a text already `_words`."""
    return next((name for name in names if _words(name) and _first_in(text, [_words(name), f"{_words(name)}'s"])),
                None)


def decide(query: str, mode: str = "heuristic", known_subjects: Iterable[str] = (),
           known_names: Iterable[str] = ()) -> GateDecision:
    """The gate's decision for `query`; `known_subjects` are the names the agent's facts are about,
    `known_names` the other names its conversations hold (speakers, episodes' entities)."""
    if mode not in ("heuristic", "off"):
        raise BadRequest(f"unknown gate mode {mode!r}: heuristic or off (llm is ModelGate's)")
    text = _words(query)
    history = _first_in(text, _PAST_OR_CHANGE) is not None
    slots = tuple(slot for slot, cues in _SLOT_CUES.items() if _users_cue_in(text, cues))
    if mode == "off":
        return GateDecision("facts", None, "gate off: facts for every question", history, slots)
    for section, cues, why in (
        ("transcript", _TRANSCRIPT, "asks for exact words"),
        ("episodes", _EPISODES, "refers to a past conversation"),
        ("identity", _IDENTITY, "asks who the user is"),
    ):
        cue = _first_in(text, cues)
        if cue is not None:
            return GateDecision(section, cue, f"{why} ({cue!r})", history, slots)
    words = text.split()
    if words and words[0] in _PRONOUN_LEAD:
        return GateDecision("episodes", words[0], f"a follow-up led by a pronoun ({words[0]!r})", history, slots)
    subject = _first_name_in(text, (s for s in known_subjects if s.lower() != "user"))
    if subject is not None:
        return GateDecision("facts", subject, f"names a known subject ({subject!r})", history, slots)
    person = _FIRST_PERSON.search(text)
    if person is not None and slots:
        return GateDecision("facts", person.group(0), f"asks about the user's {', '.join(slots)}", history, slots)
    name = _first_name_in(text, known_names)
    if name is not None:
        return GateDecision("excerpts", name, f"names someone or something from past conversations ({name!r})",
                            history, slots)
    verb = _first_in(text, _RECALL_VERBS)
    if verb is not None:
        return GateDecision("facts", verb, f"a recall verb ({verb!r})", history, slots)
    if person is not None and query.strip().endswith("?"):
        return GateDecision("facts", person.group(0), f"a question about the user ({person.group(0)!r})", history,
                            slots)
    return GateDecision("none", None, "no cue fired", history, slots)
