"""The reader table's rows for the user's people, pets and name (issue 37, s14-readers-people; they replace the
regular expressions of readers/name.py). Each row is data over the parse (`readers/table.py` builds and matches
them); `write` is what a row cannot say: whether a name is a person's, whether the user says it of themselves (not in
a role-play or a pretend game, nor in a letter they ask to have rewritten), whether an animal is theirs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memlake.distill.dates import human
from memlake.distill.models import KIN_OR_PET, USER_SUBJECT
from memlake.distill.offline.kinds import is_animal
from memlake.distill.offline.readers.table_patterns import Pattern, Reading, _child, _mine, _name, _subject, _verb
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.vocabulary import (
    DEMONYMS,
    DIETS,
    HYPOTHETICAL,
    NOT_NAMES,
    NOT_PLACES,
    OTHER_RELATIVES,
    PARTNER_WORDS,
    SIBLING_WORDS,
    SKILL_WORDS,
)
from memlake.nlp import parse, tense_of

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

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
         _child("anchor", "value", DEP={"IN": ["attr", "acomp"]}, **_PERSON)],
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": _PERSON}, _child("anchor", "here", DEP="advmod", LOWER="here")],
        [_verb("use"), _child("anchor", "value", DEP="dobj", **_PERSON),
         _child("anchor", "from", DEP="prep", LOWER={"IN": ["from", "as", "instead"]})],
    )),
)

ROWS: tuple[Reading, ...] = (*PEOPLE, *PETS, *NAME)
SLOTS = frozenset(r.slot for r in ROWS)
# The rows whose whose-and-when this module's `write` judges (the table's own checks are for "I"/"we" statements).
OWN_CHECKS = frozenset({"pet", "animal", "name"})


def write(rule: Rule, reading: Reading, nodes: dict[str, Token]) -> None:
    """What a row of this module read, to its fact."""
    if reading.slot == "name":
        _write_name(rule, reading, nodes)
    elif reading.slot in ("pet", "animal"):
        _write_pet(rule, nodes)
    elif not _one_of_a_list_or_a_role(nodes) and not _partner_that_was(reading, nodes):
        from memlake.distill.offline.readers.relationships import add_kin  # (the partner phrasings: rows to come)

        kin = "partner" if reading.slot == "partner" else nodes.get("kin", nodes["anchor"]).lemma_
        add_kin(rule, kin, " ".join(w for w in _name(nodes["value"]).split() if w.lower() not in KIN))


def _one_of_a_list_or_a_role(nodes: dict[str, Token]) -> bool:
    """A name in a list after a comma ("my girlfriend, Toby and I": three people; not "my partner Sam and I"), or a
    kin word said of a role ("Sam is my partner in crime", "my partner at the law firm")."""
    kin = nodes.get("kin", nodes["anchor"])
    value = nodes["value"]
    return (value.i > 0 and value.nbor(-1).text == "," and any(c.dep_ in ("cc", "conj") for c in value.children)) or (
        kin.lemma_ in PARTNER_WORDS and any(c.dep_ == "prep" for c in kin.children))


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


def _write_name(rule: Rule, reading: Reading, nodes: dict[str, Token]) -> None:
    """The user's name, when they say it of themselves: not a name they play or pretend to have, nor one in a text
    they ask to have reworked (unless said outside it: "Hi, I'm Lena! Can you rewrite this email? ...")."""
    anchor = nodes["anchor"]
    value = nodes.get("value", anchor)  # (the name itself anchors "Name's Kate", "Sasha here")
    name = _name(value)
    sentence = anchor.sent
    asked = anchor.lemma_ in ("call", "refer", "address") and _subject(anchor) == "you"
    if rule.sentence.question and not asked:
        return  # a question names the user only when it asks to be called so: "Could you call me Kate from now on?"
    if "name" in nodes and any(c.dep_ == "poss" and c.lower_ not in ("my", "our") for c in nodes["name"].children):
        return  # "Sam's name's Kate"
    if not _a_name(name) or value.text.endswith("'s") or rule.sentence.message.message_id in rule.context.pretend:
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
    if _reworked(rule, value):
        return
    confidence = 0.85 if reading.name == "I'm" else 0.9
    rule.add("identity", name, f"The user's name is {name}.", slot="name", confidence=confidence, importance=0.9)


def _introduced(rule: Rule, nodes: dict[str, Token], words: list[str]) -> bool:
    """An introduction, not a state ("I'm Sam" after a greeting, with "nice to meet you", or from now on; "this is
    Kate" and "Sam here" only after a greeting): "I'm Happy" or "it's Christmas" name no one."""
    anchor = nodes["anchor"]
    value = nodes.get("value", anchor)
    who = nodes.get("who")
    first = anchor.sent[0]
    greeted = first.lower_ in _GREETINGS or (rule.said_before.strip(" \n!.,") != "" and all(
        w.lower().strip("!.,") in _GREETINGS or w.lower() in ("good", "there", "all", "everyone", "again")
        for w in rule.said_before.split()))
    if anchor.lemma_ == "use":
        return "now" in words or "instead" in words or "name" in words
    if who is None or who.lower_ != "i":
        return greeted
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


def _reworked(rule: Rule, value: Token) -> bool:
    """Whether the name comes after a request, in the same message, to rework a text: it is in that text."""
    before = rule.said_before + " " + rule.sentence.text[:value.idx]
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


def sets_a_pretend_frame(doc: Doc) -> bool:
    """Whether a sentence sets up a role-play or a pretend game with the assistant: "Let's do a role-play", "Pretend
    you are a receptionist", "For this practice interview, ...", "Let's play a game where ...", "Please reply as
    Simone", "Can we roleplay a job interview?"."""
    for token in doc:
        if token.lemma_ in _PRETEND or token.lower_ in _PRETEND:
            return True
        if token.lemma_ in ("roleplay", "role-play") or (token.lemma_ == "role" and token.head.lemma_ == "play"):
            return True
        if token.lemma_ in _GAMES and token.head.lemma_ in ("play", "do", "start", "try") and token.dep_ == "dobj":
            return True
        if token.lemma_ in _PRACTICE and token.dep_ in ("compound", "amod") and token.head.pos_ == "NOUN":
            return True
        if token.lemma_ in _PLAY_AS and _subject(token) in (None, "you") and any(
                c.dep_ == "prep" and c.lower_ == "as" and any(g.dep_ == "pobj" for g in c.children)
                for c in token.children):
            return True
    return False


def _a_name(name: str) -> bool:
    words = name.split()
    return bool(words) and not any(
        w in NOT_NAMES or w in DEMONYMS or w in NOT_PLACES or w in SKILL_WORDS or w.lower() in DIETS
        or w in ("Doctor", "Professor", "Prof", "Sir", "Madam", "Miss", "Mx", "Captain", "Boss", "Chief", "Coach")
        for w in words)

