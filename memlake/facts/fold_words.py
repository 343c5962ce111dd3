"""How the facts fold reads a statement's words: the cues of a change or an end, what ended, values compared
loosely. Pure functions over text (`memlake.facts.fold` applies them)."""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet

from memlake.text import content_words, words

_CHANGE_CUE = re.compile(
    r"\b(instead of|rather than|no longer|not any ?more|any ?more|switched|switching|changed|stopped|quit|"
    r"used to|replaced)\b",
    re.IGNORECASE,
)
# A statement that says a value it names ended ("I left Acme", "we moved out of Berlin", "I stopped working at
# Acme", "The user is done with Acme": how the distiller says "Acme is behind me"). Ordinary English verbs of ending,
# not phrases of any one chat.
_ENDINGS = (r"left|leaving|quit|quitting|resigned|no longer|not any ?more|moved (?:away |out )?(?:of|from)|"
            r"stopped|stopping|gave up|given up|giving up|done with|moved on from")
_END_CUE = re.compile(rf"\b({_ENDINGS})\b", re.IGNORECASE)
# ... and a state or a trip: "I've gone off oat milk", "we're back from Lisbon" (never a slot's value: "back from
# Acme's offsite" leaves the employer as it was).
_STATE_END_CUE = re.compile(
    rf"\b({_ENDINGS}|(?:gone|went|going|gotten|got) off|(?:back|returned|got back|came back|come back) from)\b",
    re.IGNORECASE,
)
# After these cues a verb comes first ("no longer goes to the gym"): the thing ended is what follows it.
_CUE_BEFORE_A_VERB = re.compile(r"^(?:no longer|not any ?more)$", re.IGNORECASE)
# Words that say when, not what: "stopped playing squash last week" ended squash, not weeks.
TIME_WORDS = frozenset({"day", "days", "week", "weeks", "month", "months", "year", "years", "ago", "last", "since",
                         "yesterday", "today", "recently", "now", "anymore", "around", "weekend", "morning",
                         "evening", "night", "after", "before", "until"})
# A word of manner after what ended ("completely", "totally", "entirely"): an -ly word, nouns ending so aside.
_MANNER = re.compile(r"(?!(?:family|italy|jelly|belly|lily|holly|rally|ally|supply|assembly|july|fly|butterfly|"
                     r"monopoly|anomaly|bully|reply|rugby|poetry|pottery|jewelry|jewellery|dairy|curry|ugly)$)"
                     r"[a-z]{3,}ly")
_ATOMIC_WORDS = 2  # values of at most this many content words are compared as atoms


# Words that name the same thing inside a value ("backend developer" is a "backend engineer").
_VALUE_SYNONYMS = {"developer": "engineer", "programmer": "engineer", "dev": "engineer"}


def _value_words(value: str | None) -> set[str]:
    found = content_words(value) | {w for w in words(value) if w.isdigit()}
    return {_VALUE_SYNONYMS.get(w, w) for w in found}


def _norm_value(value: str | None) -> str:
    return " ".join(_VALUE_SYNONYMS.get(w, w) for w in words(value))


def same_value_loosely(a: str | None, b: str | None) -> bool:
    """Equal once normalised, or one's content words contain the other's ("Acme" / "Acme Robotics")."""
    if not a or not b:
        return False
    if _norm_value(a) == _norm_value(b):
        return True
    wa, wb = _value_words(a), _value_words(b)
    return bool(wa and wb) and (wa <= wb or wb <= wa)


def _is_atomic(value: str | None) -> bool:
    return bool(value) and len(_value_words(value)) <= _ATOMIC_WORDS


_TOKEN = re.compile(r"[\w'’-]+")


def _capitalised_names(text: str) -> list[str]:
    """The runs of capitalised words in `text` ("The", "Acme Robotics")."""
    runs: list[list[str]] = [[]]
    for token in _TOKEN.findall(text):
        if token[0].isupper():
            runs[-1].append(token)
        elif runs[-1]:
            runs.append([])
    return [" ".join(run) for run in runs if run]


def _names(text: str, value: str | None) -> bool:
    """Whether `text` names `value`: every content word of the value is in it ("Acme Robotics" in "left Acme
    Robotics"), or a capitalised name in it is the value loosely, as slot values compare ("left Acme")."""
    value_words = _value_words(value)
    if not value_words:
        return False
    if value_words <= _value_words(text):
        return True
    return any(_value_words(name) and same_value_loosely(name, value) for name in _capitalised_names(text))


def _names_goal(text: str, value: str | None) -> bool:
    """Whether `text` names `value` as where it goes, not where it comes from: "move from Berlin to Lisbon"
    names Lisbon as its goal, and Berlin as its origin."""
    if not _names(text, value):
        return False
    said, named = words(text), words(value)
    starts = [i for i in range(len(said) - len(named) + 1) if said[i:i + len(named)] == named]
    return not starts or any(i == 0 or said[i - 1] != "from" for i in starts)


def _ended_object(content: str) -> frozenset[str]:
    """The content words of what a statement says ended: after its end cue, up to the clause's end or the first
    word of when ("stopped playing squash after the injury" -> squash; "no longer goes to the gym" -> gym)."""
    cue = _STATE_END_CUE.search(content)
    if cue is None:
        return frozenset()
    clause = re.split(r"[,.;:!?()]|\s[-–—]\s|\b(?:and|but|because|so|when|while)\b", content[cue.end():], maxsplit=1)[0]
    said = []
    for word in words(clause):
        if word in TIME_WORDS or any(ch.isdigit() for ch in word):
            break
        if _MANNER.fullmatch(word):
            continue  # how it ended, not what: "given up coffee completely"
        said.append(word)
    if said and (said[0].endswith("ing") or _CUE_BEFORE_A_VERB.match(cue.group(1))):
        said = said[1:]  # the verb of what ended ("playing squash", "no longer goes to"): the thing is after it
    return frozenset(_value_words(" ".join(said)))


def words_loosely_in(wanted: AbstractSet[str], found: AbstractSet[str]) -> bool:
    """Whether every wanted word is in `found`, a plural and its singular counting as one ("sugar", "sugars")."""
    return all(w in found or f"{w}s" in found or f"{w}es" in found or w.rstrip("s") in found for w in wanted)


def has_change_cue(content: str) -> bool:
    """Whether a statement says something changed ("instead of", "no longer", "switched", …)."""
    return bool(_CHANGE_CUE.search(content))


def _jaccard_sets(a: AbstractSet[str], b: AbstractSet[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)
