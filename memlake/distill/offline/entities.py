"""The named entities a conversation mentions, from the turns of both speakers, each typed by the words around it.

A name is a run of capitalised words ("Joanna", "Acme Insurance", "University of Toronto"), without function
words, greetings and titles at its ends, and no identifier ("ORD-58213", "KeyError"). A capital that sentence
position explains is no name: a one-word name the conversation only ever says at the start of a sentence counts
only as a speaker's name ("Paris was lovely" counts after "we flew to Paris"; "Appreciate it!" never), a longer
one only with a type cue; a one-word name the conversation also says in lowercase ("Game night", "the game")
needs a strong cue. A name's type is voted by the cues around its mentions, never by a list of names:

- the name's own last word: "Acme Insurance" (organization), "Lake Tahoe", "Central Park" (place), "Pride
  Festival" (event), "Project Nova" and "the Nova project" (project);
- the words before it: "my sister Leela", "Dr. Ruiz", "my name is Priya" (person), "my dog Max" (other: a pet
  is no person), "work at Acme", "joined Globex" (organization), "moved to Paris", "a trip to Japan" (place);
- the words after it: "Leela and I", "Leela said", "Leela's husband" (person); a greeting or thanks to it
  ("Hey Nate!", "Thanks, Joanna") (person);
- who speaks: every speaker's name is a person.
Whatever no cue types is "other". Each entity keeps the ids of the messages that name it (a speaker named in no
message: the first message they wrote), so the graph cites where it was said.

An AI assistant's turns are read only when a person speaks them (a named speaker, as in a chat between two
people): an assistant's own prose names products and headings, not the user's world.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from memlake.distill.models import Conversation, Entity
from memlake.distill.offline.sentences import QUOTED, rule_text
from memlake.distill.offline.vocabulary import (
    DEMONYMS,
    NOT_NAMES,
    NOT_PLACES,
    OTHER_RELATIVES,
    PARTNER_WORDS,
    PET_WORDS,
    PROGRAM_SPEAKERS,
    SIBLING_WORDS,
    SKILL_WORDS,
    STOPWORDS,
)

# A capitalised word, a possessive "'s" left outside it; an all-caps word of 2+ letters is kept (NASA, UCLA).
_WORD = r"[A-ZÀ-ÖØ-Þ](?:[\w&-]|['’](?!s\b))*"
# A run of capitalised words, joined by "of" ("Bank of America") or "&" ("Procter & Gamble").
_RUN = re.compile(rf"(?<![\w'’.-]){_WORD}(?:\s+(?:(?:of|of the|de|&)\s+)?{_WORD})*")
_BEFORE_SENTENCE = re.compile(r"(?:^|[.!?:;\"“”(\[…*#>-]|\n)\s*$")

# Capitalised words that name nothing: greetings, interjections, titles of address, chat shorthand.
_NOT_ENTITIES = frozenset(NOT_NAMES) | DEMONYMS | SKILL_WORDS | frozenset(
    """Wow Oh Ah Aw Aww Awww Haha Hahaha Lol LOL OMG Omg Yay Yeah Yep Nope Hmm Um Uh Cool Nice Awesome Amazing
    Congrats Congratulations Sounds Glad Sorry Bye Cheers Love Dear Mom Mum Dad Grandma Grandpa Mommy Daddy Sis
    Bro Dude Man Guys Mister Sir Madam Miss Mrs Mr Ms Dr Prof Aunt Uncle God Gosh Jeez Wait Btw BTW TBH IMO OK
    TV DIY PS AM PM Christmas Xmas Easter Halloween Thanksgiving Yesterday Weekend""".split())  # noqa: SIM905
_TITLES = r"(?:Mr|Mrs|Ms|Miss|Dr|Prof|Professor|Aunt|Auntie|Uncle|Grandma|Grandpa|Coach|Officer|Captain)\.?"

# The last word of a name that says its type.
_HEAD_TYPES = {
    **dict.fromkeys(
        """Inc Ltd LLC GmbH Corp Corporation Company Co Labs Lab Group Bank Systems Technologies Solutions
        Industries Enterprises Partners Capital Ventures Studio Studios Media Robotics University College School
        Academy Hospital Clinic Agency Institute Foundation Consulting Software Motors Airlines Insurance
        Association Society Club Team Church Records Press Bakery Restaurant Cafe Café Shelter Gallery Theater
        Theatre Museum Library Center Centre Council Department Magazine Network Union Charity""".split(),  # noqa: SIM905
        "organization"),
    **dict.fromkeys(
        """City Town Village County State Province Park Lake River Mountain Mountains Mount Beach Bay Island
        Islands Valley Canyon Falls Street Avenue Road Square Coast Forest Desert Trail Hills Peak Gardens
        Countryside Springs Harbor Harbour""".split(),  # noqa: SIM905
        "place"),
    **dict.fromkeys(
        """Festival Fest Conference Summit Marathon Tournament Championship Championships Cup Games Olympics Fair
        Expo Parade Concert Gala Retreat Convention Competition Hackathon Ceremony Party Workshop Week
        Race""".split(),  # noqa: SIM905
        "event"),
    "Project": "project",
}
# The first word of a name that says its type: "Lake Tahoe", "Mount Fuji", "Project Nova".
_FIRST_WORD_TYPES = {**dict.fromkeys(("Lake", "Mount", "Mt", "Fort", "Port", "Cape", "Isle"), "place"),
                     "Project": "project"}
_PETS = rf"(?:(?:{'|'.join(PET_WORDS)})s?)"
_RELATIVES = "|".join(PARTNER_WORDS + SIBLING_WORDS + OTHER_RELATIVES + (
    "kid", "kids", "child", "children", "baby", "wife", "classmate", "teammate", "teacher", "student", "buddy",
    "pal", "partner", "bff", "grandson", "granddaughter", "stepson", "stepdaughter"))
_ORG_VERBS = (r"(?:work|works|worked|working|job|jobs|intern|interned|interning|internship|volunteer|volunteered|"
              r"volunteering|employed|hired|position|role|shift|shifts)\s+(?:at|for|with|by)|joined|join|joining|"
              r"signed with|signed to|founded|started at")
_PLACE_PREPOSITIONS = (r"(?:in|to|from|near|around|across|visit|visited|visiting|explore|explored|exploring|moved to|"
                       r"live in|lived in|living in|trip to|road trip to|flew to|fly to|drove to|back from|travel to|"
                       r"traveled to|travelled to|went to|been to|vacation in|holiday in|stay in|stayed in|city of)")

# Cues before a name: (pattern the text before it ends with, type, weight).
_BEFORE_CUES = (
    (re.compile(rf"\b(?:[Mm]y|[Oo]ur|[Hh]is|[Hh]er|[Tt]heir|[Yy]our)\s+(?:\w+\s+)?{_PETS}(?:,)?\s+(?:named\s+|"
                rf"called\s+)?$"), "other", 4),
    (re.compile(rf"\b{_PETS}\s+(?:named|called)\s+$"), "other", 4),
    (re.compile(rf"\b(?:[Mm]y|[Oo]ur|[Hh]is|[Hh]er|[Tt]heir|[Yy]our)\s+(?:\w+\s+)?(?:{_RELATIVES})(?:,)?\s+$"),
     "person", 4),
    (re.compile(rf"\b{_TITLES}\s+$"), "person", 4),
    (re.compile(r"\b(?:[Nn]ame is|[Cc]all me|[Ii] am|[Ii]'m|[Tt]his is)\s+$"), "person", 2),
    (re.compile(r"(?:^|[.!?\n]\s*)(?:[Hh]ey|[Hh]i|[Hh]ello|[Tt]hanks|[Tt]hank you|[Bb]ye|[Cc]ongrats|"
                r"[Cc]ongratulations|[Ww]ow|[Oo]h|[Aa]w+|[Ss]orry|[Gg]ood (?:morning|night|luck|to see you)|[Yy]es|"
                r"[Yy]eah|[Dd]ear)[!,.]?\s+$"),
     "person", 2),
    (re.compile(r"\b(?:named|called|met|meet|meeting|told|asked|texted|hugged)\s+$"), "person", 1),
    (re.compile(rf"\b{_ORG_VERBS}\s+(?:the\s+)?$"), "organization", 3),
    (re.compile(rf"\b{_PLACE_PREPOSITIONS}\s+(?:the\s+)?$", re.I), "place", 2),
)
# Cues after a name: (pattern the text after it starts with, type, weight).
_AFTER_CUES = (
    (re.compile(r"^\s+project\b", re.I), "project", 4),
    (re.compile(r"^\s*(?:'s|’s)\s+(?:mom|mother|dad|father|husband|wife|kids?|children|son|daughter|sister|brother|"
                r"family|parents|birthday|friend|boyfriend|girlfriend|partner)\b"), "person", 3),
    (re.compile(r"^\s+and I\b"), "person", 3),
    (re.compile(r"^\s+(?:said|says|told|tells|thinks|thought|feels|felt|loves|loved|wants|wanted|asked|is my|was my|"
                r"and his|and her|herself|himself)\b"), "person", 2),
    (re.compile(r"^\s*,\s+(?:my|our)\s+(?:" + _RELATIVES + r")\b"), "person", 3),
)
_TYPE_ORDER = ("person", "organization", "place", "project", "event", "other")  # a tie goes to the first


@dataclass
class _Seen:
    """One name as the conversation says it: its mentions' message ids and the type cues around them."""

    name: str
    message_ids: list[str] = field(default_factory=list)
    votes: Counter[str] = field(default_factory=Counter)
    mid_sentence: bool = False  # named at least once where its capital is not the sentence's


@dataclass(frozen=True)
class _Run:
    """One run of capitalised words said: the name, the text before and after it, whether it starts a sentence."""

    name: str
    before: str
    after: str
    initial: bool


def speaking_people(conversation: Conversation) -> dict[str, str]:
    """Each person who speaks (a speaker's name, not a program) -> the id of their first message."""
    people: dict[str, str] = {}
    for m in conversation.messages:
        name = (m.speaker or "").strip()
        if name and name.lower() not in PROGRAM_SPEAKERS and name[0].isupper():
            people.setdefault(name, m.message_id)
    return people


def named_entities(conversation: Conversation) -> list[Entity]:
    """The named entities of a conversation, typed, each with the ids of the messages naming it, first said first."""
    speakers = speaking_people(conversation)
    read = [m for m in conversation.messages if m.role == "user" or (m.speaker or "").strip() in speakers]
    lowercase_words = {w for m in read for w in re.findall(r"\b[a-z][\w'-]*", m.content)}
    seen: dict[str, _Seen] = {}
    for message in read:
        for run in _runs(message.content):
            _mention(seen, message.message_id, run)
    out: list[Entity] = []
    for s in seen.values():
        if s.name in speakers:
            s.votes["person"] += 10
        elif not s.mid_sentence and (" " not in s.name or not s.votes):
            continue  # a capital only the start of a sentence explains ("Appreciate it!", "Sounds fun")
        elif " " not in s.name and s.name.lower() in lowercase_words and max(s.votes.values(), default=0) < 3:
            continue  # a common word capitalised for emphasis ("Game night", "Super fun"), not a name
        out.append(Entity(name=s.name, type=_type_of(s), message_ids=list(dict.fromkeys(s.message_ids))))
    for name, first in speakers.items():
        if name.lower() not in seen:
            out.append(Entity(name=name, type="person", message_ids=[first]))
    return out


def _runs(content: str) -> list[_Run]:
    """Every run of capitalised words in a message, without the function words and titles at its ends."""
    text = QUOTED.sub(lambda m: " " * len(m.group()), rule_text(content))
    found = []
    for m in _RUN.finditer(text):
        words = m.group().split()
        initial = bool(_BEFORE_SENTENCE.search(text[:m.start()]))
        dropped = 0
        while words and _not_a_name(words[0]):  # "The Louvre", "Dr Ruiz", "Hey Nate"
            words, dropped = words[1:], dropped + 1
        while words and _not_a_name(words[-1]):
            words = words[:-1]
        name = " ".join(words).rstrip("-'’")
        if len(name) < 2 or name.isdigit():
            continue
        start = m.start() + m.group().index(words[0]) if dropped else m.start()
        found.append(_Run(name, text[max(0, start - 80):start], text[m.end():m.end() + 60],
                          initial and not dropped))
    return found


def _not_a_name(word: str) -> bool:
    stopword = word.lower() in STOPWORDS and word.lower() not in _NAME_WORDS
    return word in _NOT_ENTITIES or stopword or bool(_IDENTIFIER.search(word))


_NAME_WORDS = frozenset({"new", "long"})  # stopwords that begin names: "New York", "Long Island"


# An identifier, not a name: a word with a digit ("ORD-58213", "v2") or an error class ("KeyError").
_IDENTIFIER = re.compile(r"\d|^[A-Z]\w*[a-z](?:Error|Exception|Warning)$")


def _mention(seen: dict[str, _Seen], message_id: str, run: _Run) -> None:
    if " " not in run.name and run.name in NOT_PLACES:
        return  # a tool or service the vocabulary knows ("Slack", "GitHub") is no entity of the user's world
    s = seen.setdefault(run.name.lower(), _Seen(run.name))
    s.message_ids.append(message_id)
    s.mid_sentence = s.mid_sentence or not run.initial
    words = run.name.split()
    head = _HEAD_TYPES.get(words[-1]) or _FIRST_WORD_TYPES.get(words[0])
    if head:
        s.votes[head] += 5
    for pattern, type_, weight in _BEFORE_CUES:
        if pattern.search(run.before):
            s.votes[type_] += weight
            break
    for pattern, type_, weight in _AFTER_CUES:
        if pattern.search(run.after):
            s.votes[type_] += weight
            break


def _type_of(seen: _Seen) -> str:
    if not seen.votes:
        return "other"
    best = max(seen.votes.values())
    return next(t for t in _TYPE_ORDER if seen.votes[t] == best)
