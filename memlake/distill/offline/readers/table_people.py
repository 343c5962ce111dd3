"""The reader table's rows for the user's people, pets and name (issue 37, s14-readers-people; they replace the
regular expressions of readers/name.py). Each row is data over the parse (`readers/table.py` builds and matches
them); `write` is what a row cannot say: whether a name is a person's, whether the user says it of themselves (not in
a role-play or a pretend game, nor in a letter they ask to have rewritten), whether an animal is theirs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memlake.distill.dates import human
from memlake.distill.models import KIN_OR_PET, USER_SUBJECT, FactCandidate
from memlake.distill.offline.kinds import is_animal
from memlake.distill.offline.people_places import Context
from memlake.distill.offline.readers.frames import reworked
from memlake.distill.offline.readers.table_patterns import (
    _LEFT_OUT,
    Pattern,
    Reading,
    _child,
    _mine,
    _name,
    _subject,
    _verb,
)
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.vocabulary import (
    DEMONYMS,
    DIETS,
    HYPOTHETICAL,
    NOT_NAMES,
    NOT_PLACES,
    ORG_WORDS,
    OTHER_RELATIVES,
    PARTNER_WORDS,
    REPORTED,
    ROLE_NOUNS,
    SIBLING_WORDS,
    SKILL_WORDS,
)
from memlake.nlp import tense_of

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

# --- people (issue 37, s11-home): the people the user names and how they relate ---
# Who a person is to the user, in a word: a partner, a sibling, another relative, a friend or a colleague.
KIN = [w for w in (*PARTNER_WORDS, *SIBLING_WORDS, *OTHER_RELATIVES) if " " not in w]


def _kin(left: str, dep: str) -> Pattern:
    """The user's partner, sibling or other relative: "my sister", "our son"."""
    return [_child(left, "kin", DEP=dep, LEMMA={"IN": KIN}), _mine("kin")]


# A name, which the small model may tag as a noun ("Tomasz is my partner", "The name's Bond").
_PERSON = {"POS": {"IN": ["PROPN", "NOUN"]}, "IS_TITLE": True}

PEOPLE: tuple[Reading, ...] = (
    # "my partner Jonas cooked", "I went hiking with my sister Leela", "my colleague Tomás Ruiz sent it", "my sister,
    # Leela, ...", "My partner is Sam", "my wife's name is Ines", "Sam is my partner", "Noor is my girlfriend now"
    Reading("my kin", "kin", (
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"LEMMA": {"IN": KIN}, "POS": "NOUN"}}, _mine("anchor"),
         _child("anchor", "value", DEP="appos", **_PERSON)],
        [_verb("be"), *_kin("anchor", "nsubj"), _child("anchor", "value", DEP="attr", **_PERSON)],
        [_verb("be"), _child("anchor", "name", DEP="nsubj", LEMMA="name"), *_kin("name", "poss"),
         _child("anchor", "value", DEP="attr", **_PERSON)],
        [_verb("be"), _child("anchor", "value", DEP="nsubj", **_PERSON), *_kin("anchor", "attr")],
        # (where the small model takes "'s" for a possessive, "Sam's my partner", or the kin for an adverb's noun or a
        # compound, "my new boyfriend Sam is great", "my fiancé Sam proposed")
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"LEMMA": {"IN": KIN}, "POS": "NOUN"}}, _mine("anchor"),
         _child("anchor", "value", DEP="poss", **_PERSON), _child("value", "is", DEP="case", LEMMA="be")],
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"POS": {"IN": ["VERB", "AUX"]}}}, *_kin("anchor", "npadvmod"),
         _child("anchor", "value", DEP="nsubj", **_PERSON)],
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"LEMMA": {"IN": KIN}, "DEP": "compound"}}, _mine("anchor"),
         {"LEFT_ID": "anchor", "REL_OP": "<", "RIGHT_ID": "value", "RIGHT_ATTRS": _PERSON}],
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"LEMMA": {"IN": KIN}, "DEP": "compound"}},
         {"LEFT_ID": "anchor", "REL_OP": "<", "RIGHT_ID": "value", "RIGHT_ATTRS": _PERSON}, _mine("value")],
        # (a name the small model takes for a verb right after the kin: "My husband Ines cooks most nights")
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"LEMMA": {"IN": KIN}, "POS": "NOUN"}}, _mine("anchor"),
         {"LEFT_ID": "anchor", "REL_OP": ".", "RIGHT_ID": "value", "RIGHT_ATTRS": {"IS_TITLE": True, "POS": "VERB"}}],
    )),
    # "I have a younger sister named Leela", "I've got a twin brother, Sam", "I have a new girlfriend, Noor"
    Reading("have kin", "kin", (
        [_verb("have", "get"), _child("anchor", "kin", DEP="dobj", LEMMA={"IN": KIN}),
         _child("kin", "named", DEP="acl", LEMMA={"IN": ["name", "call"]}),
         _child("named", "value", DEP="oprd", **_PERSON)],
        [_verb("have", "get"), _child("anchor", "kin", DEP="dobj", LEMMA={"IN": KIN}),
         _child("kin", "value", DEP="appos", **_PERSON)],
    )),
    # "I married Noor in 2019", "I'm dating Chen now", "I'm married to Sam", "I got engaged to Noor", "Sam and I got
    # engaged"
    Reading("married", "partner", (
        [_verb("marry", "date"), _child("anchor", "value", DEP="dobj", **_PERSON)],
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"LOWER": {"IN": ["married", "engaged"]}}},
         _child("anchor", "to", DEP="prep", LOWER="to"), _child("to", "value", DEP="pobj", **_PERSON)],
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"LOWER": {"IN": ["married", "engaged"]}}},
         _child("anchor", "value", DEP={"IN": ["nsubj", "nsubjpass"]}, **_PERSON),
         _child("value", "i", DEP="conj", LOWER="i")],
    )),
    # "Sam, my partner, cooked dinner" (the name heads the sentence), "My other half, Alex, cooked"
    Reading("name, my kin", "kin", (
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": _PERSON},
         _child("anchor", "kin", DEP="appos", LEMMA={"IN": [w for w in KIN if w in PARTNER_WORDS]}), _mine("kin")],
        # "Say hello to my new girlfriend: Noor", "meet my husband, Tom"
        [_verb("say", "meet"), _child("anchor", "to", DEP="prep", LOWER="to"),
         _child("to", "kin", DEP="pobj", LEMMA={"IN": KIN}), _mine("kin"),
         _child("anchor", "value", DEP={"IN": ["npadvmod", "appos", "dep", "dobj"]}, **_PERSON)],
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"LEMMA": "half"}}, _child("anchor", "other", LOWER="other"),
         _mine("anchor"), _child("anchor", "value", DEP="appos", **_PERSON)],
    )),
)

# --- a partner said of the user and one person together, in the shapes the rows above do not take ---
_COUPLE = ["together", "official", "couple", "item"]
COUPLES: tuple[Reading, ...] = (
    Reading("a couple", "couple", (
        # "Sam and I are together now", "Chen and I have been together for six years", "Sam and I are dating", "Noor
        # and I moved in together", "Sam and I are a couple"
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"POS": {"IN": ["VERB", "AUX"]}}},
         _child("anchor", "value", DEP={"IN": ["nsubj", "nsubjpass"]}, **_PERSON),
         _child("value", "i", DEP="conj", LOWER="i"),
         _child("anchor", "how", DEP={"IN": ["advmod", "attr", "acomp"]}, LOWER={"IN": _COUPLE})],
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"LEMMA": {"IN": ["date", "marry", "engage"]}}},
         _child("anchor", "value", DEP={"IN": ["nsubj", "nsubjpass"]}, **_PERSON),
         _child("value", "i", DEP="conj", LOWER="i")],
        # "Me and Ines are dating now"
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"LEMMA": {"IN": ["date", "marry", "engage"]}}},
         _child("anchor", "i", DEP={"IN": ["nsubj", "nsubjpass"]}, LOWER={"IN": ["i", "me"]}),
         _child("i", "value", DEP="conj", **_PERSON)],
        # "Alex and I have been seeing each other since May"
        [_verb("see"), _child("anchor", "value", DEP="nsubj", **_PERSON), _child("value", "i", DEP="conj", LOWER="i"),
         _child("anchor", "how", DEP="dobj", LOWER="other")],
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"LEMMA": "move"}}, _child("anchor", "value", DEP="nsubj", **_PERSON),
         _child("anchor", "i", DEP="nsubj", LOWER="i"), _child("anchor", "how", LOWER="together")],
        # "Noor and I got together in 2019" (the small model heads the sentence with the name)
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"LEMMA": "get"}}, _child("anchor", "i", DEP="nsubj", LOWER="i"),
         _child("anchor", "how", LOWER="together"),
         {"LEFT_ID": "anchor", "REL_OP": "<", "RIGHT_ID": "value", "RIGHT_ATTRS": _PERSON}],
        # "We've been together since June, Sam and I", "We've been a couple since Easter, Maria and I"
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"POS": {"IN": ["VERB", "AUX"]}}},
         _child("anchor", "we", DEP="nsubj", LOWER="we"), _child("anchor", "how", LOWER={"IN": _COUPLE}),
         {"LEFT_ID": "anchor", "REL_OP": ">>", "RIGHT_ID": "value", "RIGHT_ATTRS": {**_PERSON, "POS": "PROPN"}},
         _child("value", "i", DEP="conj", LOWER={"IN": ["i", "i."]})],
    )),
    Reading("with a partner", "couple", (
        # "I've been seeing Noor for a year", "I'm seeing Sam these days", "I'm seeing Noor.", "I'm dating someone
        # named Tomasz", "I'm seeing someone new, Chen"
        [_verb("see"), _child("anchor", "value", DEP="dobj", **_PERSON)],
        [_verb("see", "date"), {"LEFT_ID": "anchor", "REL_OP": ">>", "RIGHT_ID": "someone",
                                 "RIGHT_ATTRS": {"LOWER": "someone"}},
         {"LEFT_ID": "anchor", "REL_OP": ">>", "RIGHT_ID": "value", "RIGHT_ATTRS": {**_PERSON, "POS": "PROPN"}}],
        # "I've been in a relationship with Ines", "I tied the knot with Noor", "I got together with Noor last spring"
        [_verb("be"), _child("anchor", "in", DEP="prep", LOWER="in"),
         _child("in", "relationship", DEP="pobj", LEMMA="relationship"),
         _child("relationship", "with", DEP="prep", LOWER="with"), _child("with", "value", DEP="pobj", **_PERSON)],
        [_verb("tie"), _child("anchor", "knot", DEP="dobj", LOWER="knot"),
         _child("anchor", "with", DEP="prep", LOWER="with"), _child("with", "value", DEP="pobj", **_PERSON)],
        [_verb("get"), _child("anchor", "how", LOWER="together"), _child("anchor", "with", DEP="prep", LOWER="with"),
         _child("with", "value", DEP="pobj", **_PERSON)],
        # "I'm going out with Chen" (not "tonight": see `_A_WHILE`)
        [_verb("go"), _child("anchor", "out", DEP="prt", LOWER="out"),
         _child("anchor", "with", DEP="prep", LOWER="with"), _child("with", "value", DEP="pobj", **_PERSON)],
        # "Noor proposed", "Sam proposed to me last night", "Sam asked me out"
        [_verb("propose"), _child("anchor", "value", DEP="nsubj", **_PERSON)],
        [_verb("ask"), _child("anchor", "value", DEP="nsubj", **_PERSON),
         _child("anchor", "me", DEP="dobj", LOWER="me"), _child("anchor", "out", DEP="prt", LOWER="out")],
        # "I have a boyfriend now, his name is Tomasz"
        [_verb("be"), _child("anchor", "name", DEP="nsubj", LEMMA="name"),
         _child("name", "whose", DEP="poss", LOWER={"IN": ["his", "her", "their"]}),
         _child("anchor", "value", DEP="attr", **_PERSON), _child("anchor", "have", LEMMA="have"),
         _child("have", "kin", DEP="dobj", LEMMA={"IN": list(PARTNER_WORDS)})],
    )),
    # "I'm with Sam now", after a relationship of the user's ended ("Jonas and I broke up")
    Reading("with", "with", (
        [_verb("be"), _child("anchor", "i", DEP="nsubj", LOWER="i"), _child("anchor", "with", DEP="prep", LOWER="with"),
         _child("with", "value", DEP="pobj", **_PERSON)],
    )),
    # "Tomás Ruiz is the tech lead": who the user works with, and as what
    Reading("is the role", "role", (
        [_verb("be"), _child("anchor", "value", DEP="nsubj", POS="PROPN"),
         _child("anchor", "title", DEP="attr", LOWER={"IN": sorted({r.split()[-1] for r in ROLE_NOUNS})}),
         _child("title", "the", DEP={"IN": ["det", "poss"]}, LOWER={"IN": ["the", "our", "my"]})],
    )),
)

# --- the user's pets: an animal the user (or "we") adopted, rescued, got or has, named or not ---
_PET_VERBS = ("adopt", "rescue", "get", "buy", "foster")
PETS: tuple[Reading, ...] = (
    # "We adopted a beagle named Biscuit", "I've got a tortoise called Shelly", "we rescued a greyhound, Juno, ..."
    # (not "have": "We have a retriever named Biscuit" is read as said, with whom the user has it)
    Reading("pet named", "pet", (
        [_verb(*_PET_VERBS), _child("anchor", "kind", DEP="dobj", POS="NOUN"),
         _child("kind", "named", DEP="acl", LEMMA={"IN": ["name", "call"]}),
         _child("named", "value", DEP="oprd", **_PERSON)],
        [_verb(*_PET_VERBS), _child("anchor", "kind", DEP="dobj", POS="NOUN"),
         _child("kind", "value", DEP="appos", **_PERSON)],
    )),
    # "I rescued a cat last week", "we finally got a puppy": the verbs of taking an animal in (not "have": "I have a
    # dog" is read by the self-statements as said)
    Reading("pet", "animal", (
        [_verb("adopt", "rescue", "get", "foster"), _child("anchor", "kind", DEP="dobj", POS="NOUN"),
         _child("kind", "a", DEP="det", LOWER={"IN": ["a", "an"]})],
    )),
)

# --- the user's name ---
_NAMED = {"LEMMA": "name", "POS": "NOUN"}
NAME: tuple[Reading, ...] = (
    # "My name is Kate", "my full name's Kate Ng", "Kate is my new name", "The name's Bond"
    Reading("my name is", "name", (
        [_verb("be"), _child("anchor", "name", DEP="nsubj", **_NAMED), _mine("name"),
         _child("anchor", "value", DEP="attr", **_PERSON)],
        # ("From now on my name is Alexandra": the small model hangs "my name" on "from")
        [_verb("be"), _child("anchor", "value", DEP="attr", **_PERSON), _child("anchor", "from", LOWER="from"),
         {"LEFT_ID": "from", "REL_OP": ">>", "RIGHT_ID": "name", "RIGHT_ATTRS": _NAMED}, _mine("name")],
        [_verb("be"), _child("anchor", "value", DEP="nsubj", **_PERSON), _child("anchor", "name", DEP="attr", **_NAMED),
         _mine("name")],
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {**_PERSON, "DEP": "ROOT"}},
         _child("anchor", "name", DEP="poss", **_NAMED)],
    )),
    # "Kate is what I go by now", "Sam is what people call me"
    Reading("is what I go by", "name", (
        [_verb("be"), _child("anchor", "value", DEP="nsubj", **_PERSON),
         _child("anchor", "said", DEP="ccomp", LEMMA={"IN": ["go", "call"]}),
         {"LEFT_ID": "said", "REL_OP": ">>", "RIGHT_ID": "what", "RIGHT_ATTRS": {"LOWER": "what"}}],
    )),
    # "Call me Kate", "everyone calls me Bob", "I'd prefer to be called Kate", "I'm called Kate", "people know me as
    # Maggie", "I'm known as Bob", "refer to me as Kate", "I go by Sasha", "I'm going by Kate now"
    Reading("call me", "name", (
        [_verb("call"), _child("anchor", "me", DEP="dobj", LOWER="me"),
         _child("anchor", "value", DEP="oprd", **_PERSON)],
        [_verb("call"), _child("anchor", "value", DEP="dobj", **_PERSON), _child("value", "me", LOWER="me")],
        [_verb("call"), _child("anchor", "passive", DEP="auxpass"),
         _child("anchor", "value", DEP="oprd", **_PERSON)],
        [_verb("know", "refer", "address"), _child("anchor", "as", DEP="prep", LOWER="as"),
         _child("as", "value", DEP="pobj", **_PERSON)],
        [_verb("go"), _child("anchor", "by", DEP="prep", LOWER="by"), _child("by", "value", DEP="pobj", **_PERSON)],
        [_verb("go"), _child("anchor", "by", DEP="prep", LOWER="by"), _child("by", "the", DEP="pobj", LOWER="name"),
         _child("the", "value", DEP="appos", **_PERSON)],
    )),
    # "I changed my name to Robin", "my name changed to Robin" (from then on)
    Reading("changed my name", "name", (
        [_verb("change"), _child("anchor", "name", DEP={"IN": ["dobj", "nsubj"]}, **_NAMED), _mine("name"),
         _child("anchor", "to", DEP="prep", LOWER="to"), _child("to", "value", DEP="pobj", **_PERSON)],
    ), change=True),
    # an introduction: "Hi, I'm Sam", "I'm Katherine, nice to meet you", "Hello! Sam here.", "Hi, this is Kate",
    # "From now on I'm Kate", "Please use Kate from now on"
    Reading("I'm", "name", (
        [_verb("be"), _child("anchor", "who", DEP="nsubj", LOWER={"IN": ["i", "this", "it"]}),
         _child("anchor", "value", DEP={"IN": ["attr", "acomp"]}, POS={"IN": ["PROPN", "NOUN", "ADJ"]}, IS_TITLE=True)],
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": _PERSON}, _child("anchor", "here", DEP="advmod", LOWER="here")],
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"POS": "INTJ"}}, _child("anchor", "value", **_PERSON),
         _child("anchor", "here", DEP="advmod", LOWER="here")],
        [_verb("use"), _child("anchor", "value", DEP="dobj", **_PERSON),
         _child("anchor", "from", DEP="prep", LOWER={"IN": ["from", "as", "instead"]})],
    )),
)

ROWS: tuple[Reading, ...] = (*PEOPLE, *COUPLES, *PETS, *NAME)
SLOTS = frozenset(r.slot for r in ROWS)
# The rows whose whose-and-when this module's `write` judges (the table's own checks are for "I"/"we" statements).
OWN_CHECKS = frozenset({"pet", "animal", "name", "couple", "with", "role"})


def write(rule: Rule, reading: Reading, nodes: dict[str, Token]) -> None:
    """What a row of this module read, to its fact."""
    if reading.slot == "name":
        _write_name(rule, reading, nodes)
    elif reading.slot in ("pet", "animal"):
        _write_pet(rule, nodes)
    elif reading.slot == "role":
        _write_role(rule, nodes)
    elif reading.slot in ("couple", "with"):
        _write_couple(rule, reading, nodes)
    elif not _one_of_a_list_or_a_role(nodes) and not _partner_that_was(reading, nodes):
        kin = "partner" if reading.slot == "partner" else nodes.get("kin", nodes["anchor"]).lemma_
        kin = "partner" if kin == "half" else kin  # ("my other half")
        value = nodes.get("value", nodes["anchor"])
        add_kin(rule, kin, " ".join(w for w in _name(value).split() if w.lower() not in KIN), value)


# --- who the user's people are ---
# Who the user works with, of the people a sentence names ("my colleague Tomás"); the rest the user knows.
_AT_WORK = frozenset({"colleague", "coworker", "co-worker", "manager", "boss", "mentor"})


def add_kin(rule: Rule, kin: str, name: str, value: Token) -> None:
    """A person named as the user's partner, sibling or other relative, friend or colleague (`kin`, the word that
    says it); no partner when the sentence says the relationship is over ("I married Sam in 2019 but we divorced")."""
    if not _a_person(name) or name in rule.context.organizations:
        return
    kin = kin.lower()
    if kin in PARTNER_WORDS:
        if not _ends_it(value, name):
            _partner(rule, name)
    elif kin in SIBLING_WORDS:
        _sibling(rule, kin, name)
    else:
        rule.add("relationship", f"{kin}: {name}", f"{name} is the user's {kin}.", subject=name, importance=0.6,
                 tags=("people",))
        rule.entity(name, "person")
        rule.relation(USER_SUBJECT, "works_with" if kin in _AT_WORK else "knows", name)


def _a_person(name: str) -> bool:
    words = name.split()
    return bool(words) and not any(w in NOT_NAMES or w in DEMONYMS or w in NOT_PLACES or w in SKILL_WORDS
                                   for w in words)


def _partner(rule: Rule, name: str) -> None:
    rule.add("relationship", name, f"The user's partner is {name}.", slot="partner", importance=0.8, tags=("family",))
    rule.entity(name, "person")
    rule.relation(USER_SUBJECT, "partner_of", name)


def _sibling(rule: Rule, rel: str, name: str) -> None:
    rule.add("relationship", name, f"The user's {rel} is {name}.", slot="sibling", importance=0.7, tags=("family",))
    rule.entity(name, "person")
    rule.relation(USER_SUBJECT, "sibling_of", name)


# Verbs of a relationship that is over: "we divorced", "Jonas and I broke up", "my late wife", "my ex-husband".
_ENDINGS = frozenset({"divorce", "separate", "die", "widow", "widowed", "widower"})


def _ended(sentence: Span) -> str | None:
    """Whether the sentence says a relationship of the user's is over: None when it does not, "" when it does, or
    the name of the one it ended with when that is someone named ("I'm with Noor now, Alex and I divorced": Alex)."""
    for token in sentence:
        if token.lemma_ in _ENDINGS or (token.lemma_ in ("break", "split") and any(
                c.lower_ == "up" for c in token.children)) or (token.lemma_ == "pass" and any(
                c.lower_ == "away" for c in token.children)) or (token.lemma_ == "call" and any(
                c.lower_ == "off" for c in token.children)):
            if any(c.dep_ == "neg" for c in token.children):
                continue
            subject = next((c for c in token.children if c.dep_ in ("nsubj", "nsubjpass")), None)
            if subject is not None and subject.pos_ == "PROPN" and any(c.lower_ == "i" for c in subject.children):
                return _name(subject)  # "Alex and I divorced"
            return ""
        if token.lower_ in ("ex", "late") and token.head.lemma_ in PARTNER_WORDS:
            return ""
    return None


def _write_role(rule: Rule, nodes: dict[str, Token]) -> None:
    """"Tomás Ruiz is the tech lead": the person's title, and that the user works with them."""
    value, title = nodes["value"], nodes["title"]
    name = _name(value)
    role = " ".join(t.text for t in title.subtree if t.dep_ not in ("det", "poss", "punct") and t.i <= title.i)
    if not _a_person(name) or any(c.dep_ == "neg" for c in nodes["anchor"].children):
        return
    rule.add("identity", role, f"{name} is the {role} the user works with.", subject=name, slot="job_title",
             importance=0.5, tags=("work", "people"))
    rule.entity(name, "person")
    rule.relation(USER_SUBJECT, "works_with", name, confidence=0.8)


# What may follow "seeing Sam" for a partner: how long, or now ("I'm seeing Sam these days"; not "tomorrow").
_A_WHILE = frozenset({"for", "since", "now", "these", "nowadays", "lately", "recently"})


def _write_couple(rule: Rule, reading: Reading, nodes: dict[str, Token]) -> None:
    """A partner said of the user and one person together ("Sam and I are together now", "I've been seeing Noor for
    a year", "Noor proposed", "his name is Tomasz"), or "I'm with Sam now" after a break-up the conversation told."""
    anchor, value = nodes["anchor"], nodes["value"]
    sentence = anchor.sent
    name = _name(value)
    if rule.sentence.question or not _a_person(name) or name in rule.context.organizations or any(
            w in ORG_WORDS for w in name.split()) or name in rule.context.projects or value.text.endswith("'s"):
        return
    if any(c.dep_ == "neg" for t in (anchor, *anchor.ancestors) for c in t.children) or HYPOTHETICAL.search(
            sentence.text) or tense_of(anchor) == "future":
        return
    rest = [t for t in value.doc[max(value.i, anchor.i) + 1:sentence.end] if not t.is_punct and t.head.i != value.i]
    if anchor.lemma_ in ("see", "go") and not {"someone", "how"} & set(nodes) and rest and (
            rest[0].lower_ not in _A_WHILE):
        return  # "I'm seeing Dr Lee tomorrow", "I'm going out with Chen tonight": a meeting
    if anchor.lemma_ in ("see", "go") and "how" not in nodes and _subject(anchor) not in ("i", _LEFT_OUT):
        return
    if anchor.lemma_ == "propose" and (any(c.dep_ == "dobj" for c in anchor.children) or (
            rest and rest[0].lower_ not in ("to", "last", "on", "in", "yesterday", "this", "and"))):
        return  # "Noor proposed a toast"
    if anchor.lemma_ in ("get", "ask", "go", "be") and any(
            (c.dep_ == "prep" and c.i > value.i and not _how_long(c)) or c.dep_ in ("xcomp", "advcl")
            for t in (anchor, nodes.get("how", anchor)) for c in t.children):
        return  # "I got together with Noor for coffee", "Sam asked me out for coffee", "together at the cafe", "got
        # together last week to plan the trip", "together on this project"
    # "with" after a break-up, the name alone or with "now": not "with Sam at the cafe", "with Sam and Ana"
    if reading.slot == "with" and (not rule.context.breakup or any(c.dep_ in ("conj", "prep") for c in value.children)
                                   or any(c.dep_ == "prep" and c.i > value.i for c in anchor.children)
                                   or (rest and rest[0].lower_ not in ("now", "these", "nowadays"))):
        return
    if _ends_it(value, name):
        return
    _partner(rule, name)


def _ends_it(value: Token, name: str) -> bool:
    """Whether the sentence ends the relationship with `name`: said with that person ("My partner Jonas and I broke
    up"), or unnamed after the name ("I married Sam in 2019 but we divorced"); not an ending told before, with
    another ("Chen and I split up, and now I'm dating Noor", "my ex-husband moved, and I'm with Tomasz now")."""
    ended = _ended(value.sent)
    return ended == name or (ended == "" and not _ending_before(value.sent, value))


def _ending_before(sentence: Span, value: Token) -> bool:
    """Whether the sentence's ending is said before the new partner ("Jonas and I broke up; I'm with Sam now")."""
    return any(t.i < value.i and (t.lemma_ in _ENDINGS or t.lemma_ in ("break", "split") or t.lower_ == "ex")
               for t in sentence)


def _one_of_a_list_or_a_role(nodes: dict[str, Token]) -> bool:
    """A name in a list after a comma ("my girlfriend, Toby and I": three people; not "my partner Sam and I"), or a
    kin word said of a role ("Sam is my partner in crime", "my partner at the law firm")."""
    kin = nodes.get("kin", nodes["anchor"])
    value = nodes.get("value", nodes["anchor"])
    return (value.i > 0 and value.nbor(-1).text == "," and any(c.dep_ in ("cc", "conj") for c in value.children)) or (
        kin.lemma_ in PARTNER_WORDS and any(c.dep_ == "prep" and not _how_long(c) for c in kin.children))


def _how_long(prep: Token) -> bool:
    """How long or since when ("my wife of ten years", "together since June", "for six years", "in 2019"): not a
    role, nor a place or a purpose."""
    return prep.lower_ == "since" or (prep.lower_ in ("of", "for", "in") and any(
        c.lemma_ in ("year", "month", "decade", "week", "while") or c.ent_type_ == "DATE" for c in prep.children))


def _partner_that_was(reading: Reading, nodes: dict[str, Token]) -> bool:
    """A partner said in the past of being ("I was married to Tom for ten years", "Sam was my boyfriend"; not "have
    been together six years")."""
    anchor = nodes["anchor"]
    verb = anchor if anchor.pos_ in ("VERB", "AUX") else next(
        (t for t in anchor.ancestors if t.pos_ in ("VERB", "AUX")), None)
    return (reading.slot == "partner" or nodes.get("kin", anchor).lemma_ in PARTNER_WORDS) and (
        verb is not None and verb.lemma_ == "be"
        and "VBD" in {verb.tag_, *(c.tag_ for c in verb.children if c.dep_ == "aux")})


def _denied_or_not_now(verb: Token, change: bool, asked: bool = False) -> bool:
    """A verb denied, a wish or a plan ("I might adopt", "I'll get a dog"), or a state that was ("my name was"); a
    modal of a request asked of the assistant is none ("Could you call me Kate?")."""
    if any(c.dep_ == "neg" for c in verb.children) or any(
            c.dep_ == "aux" and c.tag_ == "MD" and c.lower_ not in ("'d", "would") and not asked
            for c in verb.children):
        return True
    tense = tense_of(verb)
    return tense == "future" or (not change and tense == "past" and verb.lemma_ == "be")


# --- pets ---
def _write_pet(rule: Rule, nodes: dict[str, Token]) -> None:
    """The user's pet, with its kind and its name when said, from the day the clause says it came (the graph's
    `has_pet` too): "The user has a beagle named Biscuit."."""
    verb, kind = nodes["anchor"], nodes["kind"]
    if HYPOTHETICAL.search(verb.doc[verb.sent.start:verb.i].text):
        return  # "We might adopt a dog one day"
    if _subject(verb) not in ("i", "we") or _denied_or_not_now(verb, change=True) or not is_animal(kind.lower_):
        return
    if verb.lemma_ == "get" and tense_of(verb) != "past" and verb.tag_ != "VBN":
        return  # "I get a puppy every Christmas": no pet of theirs now
    value = nodes.get("value")
    if value is None and any(c.dep_ == "appos" or (c.dep_ == "acl" and c.lemma_ in ("name", "call"))
                             for c in kind.children):
        return  # (the row of a named pet writes it)
    name = _name(value) if value is not None else None
    if name is not None and not _a_name(name):
        return
    # what the clause readers made of it: kept when it is the user's ("The user adopted a cat named Miso."), or when
    # it is of the pet itself ("Biscuit is three"); a "we" read as the user's team or as the user and others is not
    said = [c for c in rule.found.candidates if rule.message_id in c.message_ids
            and (c.subject == name or (c.subject == USER_SUBJECT and (name or kind.lower_) in c.content))]
    if any(c.subject == name or not any(w in c.content.lower() for w in _NOT_THE_USER_ALONE) for c in said):
        return
    rule.found.candidates[:] = [c for c in rule.found.candidates if not any(c is d for d in said)]
    what = f"a {kind.lower_} named {name}" if name else f"a {kind.lower_}"
    when = rule.date_in(verb.sent.text)
    when = when if when is not None and when.day <= rule.said else None
    rule.add("fact", name or kind.lower_, f"The user has had {what} since {human(when)}." if when else
             f"The user has {what}.", importance=0.6, tags=("people", KIN_OR_PET),
             valid_from=when.day if when else None)
    if name:
        rule.entity(name, "other")
        rule.relation(USER_SUBJECT, "has_pet", name)


# How the clause readers say a "we" they could not place (`events.read_dated_event`, the self-statements).
_NOT_THE_USER_ALONE = ("the user's team ", "the user and others ")


# --- the user's name ---
_GREETINGS = frozenset({"hi", "hello", "hey", "hiya", "howdy", "greetings", "morning", "evening", "afternoon", "yo"})
_AFTER_A_GREETING = frozenset({"good", "there", "all", "everyone", "again", ""})
def _write_name(rule: Rule, reading: Reading, nodes: dict[str, Token]) -> None:
    """The user's name, when they say it of themselves: not a name they play or pretend to have, nor one in a text
    they ask to have reworked (unless said outside it: "Hi, I'm Lena! Can you rewrite this email? ...")."""
    anchor = nodes["anchor"]
    value = nodes.get("value", anchor)  # (the name itself anchors "Name's Kate", "Sasha here")
    name = " ".join(w for w in _name(value).split() if w.lower() != "me")  # ("calls me Maggie": a compound)
    sentence = anchor.sent
    asked = anchor.lemma_ in ("call", "refer", "address") and _subject(anchor) == "you"
    if rule.sentence.question and not asked:
        return  # a question names the user only when it asks to be called so: "Could you call me Kate from now on?"
    if "name" in nodes and any(c.dep_ == "poss" and c.lower_ not in ("my", "our") for c in nodes["name"].children):
        return  # "Sam's name's Kate"
    if not _a_name(name) or value.text.endswith("'s"):
        return
    if rule.message_id in rule.context.pretend or reworked(rule.said_before + " " + rule.sentence.text[:value.idx]):
        rule.context.played.add(name)  # a name played, or in a text to rework: `without_played_names`
        return
    if value.ent_type_ in _NO_PERSON or any(
            _denied_or_not_now(t, reading.change, asked)
            for t in (anchor, *anchor.ancestors) if t.pos_ in ("VERB", "AUX")):
        return  # "Hi, it's Christmas"; "Don't call me Bob", "I don't want to be called Bob"
    said = nodes.get("said")
    if said is not None and not (_subject(said) == "i" or any(c.lower_ == "me" for c in said.children)):
        return  # "Kate is what Sam goes by"
    if not rule.sentence.question and HYPOTHETICAL.search(anchor.doc[sentence.start:anchor.i].text):
        return  # "If my name were Kate ..."
    words = [t.lower_ for t in sentence]
    if reading.name == "I'm" and not _introduced(rule, nodes, words):
        return
    if anchor.lemma_ == "go" and not _ends_the_clause(value):
        return  # "I'm going by Lisbon on the way": passing a place
    if anchor.lemma_ == "call" and "passive" in nodes and _subject(anchor) != "i":
        return  # "The cat is called Miso"
    if anchor.lemma_ == "call" and "me" in nodes and not _many_or_none(anchor):
        return  # "My friend calls me Bobby": a nickname one person uses
    if anchor.lemma_ in ("know", "refer", "address") and not ("me" in words or _subject(anchor) == "i"):
        return  # "Everyone knows Sam as the funny one"
    confidence = 0.85 if reading.name == "I'm" else 0.9
    rule.add("identity", name, f"The user's name is {name}.", slot="name", confidence=confidence, importance=0.9)


def without_played_names(candidates: list[FactCandidate], context: Context) -> list[FactCandidate]:
    """The candidates less those that give the user a name they only played or wrote in a text to rework, as read
    by any reader ("The user's name is Carla.", kept as said)."""
    return [c for c in candidates if not (c.subject == USER_SUBJECT and c.slot in (None, "name") and any(
        f"name is {name}" in c.content for name in context.played))]


def _introduced(rule: Rule, nodes: dict[str, Token], words: list[str]) -> bool:
    """An introduction, not a state ("I'm Sam" after a greeting, with "nice to meet you", or from now on; "this is
    Kate" and "Sam here" only after a greeting): "I'm Happy" or "it's Christmas" name no one."""
    anchor = nodes["anchor"]
    value = nodes.get("value", anchor)
    who = nodes.get("who")
    if any(c.dep_ == "appos" for c in value.children):
        return False  # "Hi, this is Kate, my sister": someone else introduced
    # after a greeting opening the message, and at most a lead-in announcing what follows ("Hi! Quick intro: I'm
    # Rowan", "Hello! Sam here.")
    said = f"{rule.said_before} {rule.sentence.text[:(who if who is not None else value.left_edge).idx]}".split()
    before = list(said)
    while before and before[0].lower().strip("!,.") in (*_GREETINGS, *_AFTER_A_GREETING):
        before = before[1:]  # the greeting
    lead_in = not before or (before[-1].endswith(":") and not any(w.endswith((".", "!", "?")) for w in before))
    greeted = len(before) < len(said) and lead_in and not REPORTED.search(" ".join(before))
    after = value.doc[value.i + 1] if value.i + 1 < len(value.doc) else None
    if after is not None and not after.is_punct and after.lower_ not in ("and", "here", "by", "from"):
        return False  # "Hi, I'm Stuck on a regex"
    if anchor.lemma_ == "use":
        return "now" in words or "instead" in words or "name" in words
    if who is None or who.lower_ != "i":
        return greeted and (who is None or who.lower_ == "this" or value.ent_type_ == "PERSON")  # not "it's Christmas"
    met = "meet" in words or (value.i + 1 < len(value.doc) and value.nbor().lower_ == "here")
    return greeted or met or " ".join(words[:3]) == "from now on"


# Entity types of no person's name ("it's Christmas"; the small model tags many first names a place or a people).
_NO_PERSON = frozenset({"DATE", "TIME", "EVENT"})


def _many_or_none(verb: Token) -> bool:
    """Whether a verb is said by no one ("Call me Kate"), by the one asked ("Could you call me Kate?") or by many
    ("everyone calls me Bob", "my friends call me Bob"; not "my friend calls me Bobby")."""
    subject = next((c for c in verb.children if c.dep_ == "nsubj"), None)
    return subject is None or subject.lower_ in ("you", "everyone", "everybody") or subject.tag_ == "NNS"


def _ends_the_clause(value: Token) -> bool:
    rest = [t for t in value.doc[value.i + 1:value.sent.end] if not t.is_punct]
    return not rest or rest[0].lower_ in ("now", "these", "from", "instead", "nowadays", "and", "but")


def _a_name(name: str) -> bool:
    """A person's name the user may go by: no diet ("Vegan here"), no title ("call me Doctor Smith")."""
    return _a_person(name) and not any(w.lower() in DIETS or w in _HONORIFICS for w in name.split())


_HONORIFICS = frozenset({"Doctor", "Professor", "Prof", "Sir", "Madam", "Miss", "Mx", "Captain", "Boss", "Chief",
                         "Coach"})

