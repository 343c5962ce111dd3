"""Slot readers as data: dependency patterns over the parse (spaCy's `DependencyMatcher`), each mapped to the slot it
gives. A pattern names the verb or noun it hangs on (`anchor`) and the slot values (`value`, `employer`, `title`);
where in the sentence the clause sits does not matter ("... and I moved to Leeds", "since we moved up to Glasgow").

Code does only what a table cannot say: whose statement it is (the user, or "we", also when the clause shares its
subject with the one before), that it is said as a fact (not denied, not a plan or a wish), and handing each value to
its slot's writer, which knows what is no place or no organisation.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING, Any

from memlake.distill.offline.readers.table_life import ROWS as LIFE_ROWS
from memlake.distill.offline.readers.table_life import SLOTS as LIFE_SLOTS
from memlake.distill.offline.readers.table_life import write as write_life
from memlake.distill.offline.readers.table_patterns import _LEFT_OUT, _VERB_POS, Pattern, Reading, _subject, _verb_of
from memlake.distill.offline.readers.table_people import OWN_CHECKS
from memlake.distill.offline.readers.table_people import ROWS as PEOPLE_ROWS
from memlake.distill.offline.readers.table_people import SLOTS as PEOPLE_SLOTS
from memlake.distill.offline.readers.table_people import write as write_people
from memlake.distill.offline.readers.table_self import ROWS as SELF_ROWS
from memlake.distill.offline.readers.table_self import write as write_own
from memlake.distill.offline.readers.table_work import READS_ITS_OWN_TIME
from memlake.distill.offline.readers.table_work import ROWS as WORK_ROWS
from memlake.distill.offline.readers.table_work import write as write_work
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.vocabulary import HYPOTHETICAL, NOT_NAMES, REPORTED
from memlake.nlp import parse, pipeline, tense_of

if TYPE_CHECKING:
    from spacy.matcher import DependencyMatcher
    from spacy.tokens import Token

def read_by_table(rule: Rule, since: int = 0, text: str | None = None, only: frozenset[str] | None = None) -> None:
    """Every row of the table on the sentence (or on `text`, a part of it: what a correction says is so), when its
    words could match one (only such sentences are parsed). What a row reads replaces what the sentence's clauses
    were kept as said about the same value (`rule.found.candidates` from `since` on: "The user moved to Leeds in
    spring 2026." beside the home city it gives). With `only`, only the rows of those slots (a question's name)."""
    text = rule.sentence.text if text is None else text
    if not may_anchor(text):
        return
    earlier = {id(c) for c in rule.found.candidates[since:]}  # (by identity: a writer may drop a misreading of them)
    doc = parse(text)
    matches = []
    for match_id, tokens in _matcher()(doc):
        reading, pattern = _by_key()[doc.vocab.strings[match_id]]
        if only is not None and reading.slot not in only:
            continue
        matches.append((reading, {node["RIGHT_ID"]: doc[i] for node, i in zip(pattern, tokens, strict=True)}))
    read: set[tuple[str | None, int]] = set()  # one value of a slot per verb: "I live in Clifton in Bristol"
    for reading, nodes in sorted(matches, key=_where_said):  # in the order said
        key = (reading.slot or reading.taste or reading.event, nodes["anchor"].i)
        if key not in read and _said_as_a_fact(reading, nodes) and _in_its_time(reading, nodes):
            read.add(key)
            _write(rule, reading, nodes)
    made = [c for c in rule.found.candidates[since:] if id(c) not in earlier]
    values = [c.value.lower() for c in made if c.slot or c.type == "event" or "allergy" in c.tags] + [
        c.subject.lower() for c in made if c.slot == "project_deadline"]  # ("pushed the Project Heron launch to")
    if values:
        kept = [c for c in rule.found.candidates[since:] if id(c) in earlier and (
                "said" not in c.tags or not any(value in c.content.lower() for value in values))]
        rule.found.candidates[since:] = kept + made


def _write(rule: Rule, reading: Reading, nodes: dict[str, Token]) -> None:
    if reading.slot in PEOPLE_SLOTS:
        write_people(rule, reading, nodes)
        return
    if reading.slot in LIFE_SLOTS:
        write_life(rule, reading, nodes)
        return
    if reading.name in READS_ITS_OWN_TIME:
        write_work(rule, reading, nodes)
        return
    write_own(rule, reading, nodes)


def _owned(nodes: dict[str, Token]) -> bool:
    """Whether the pattern's owner says it is the user's: "my" or "our" ("our move to Oslo", "my home is in Prague",
    "Home is Oslo"), or "the" on a move the clause is about ("the move to Bristol is done"; not "after the move my
    sister ...")."""
    owner = nodes.get("owner")
    return owner is not None and (owner.lower_ != "the" or nodes["anchor"].dep_ in ("nsubj", "nsubjpass"))


def _said_as_a_fact(reading: Reading, nodes: dict[str, Token]) -> bool:
    """The user's own (I or we, also a subject shared with the clause before, or a home or move the pattern says is
    theirs), not denied (unless the denial is what the pattern says: "can't stand"), not ahead, not a wish, a
    condition or someone else's words."""
    anchor, verb = nodes["anchor"], _verb_of(nodes["anchor"])
    if reading.slot in OWN_CHECKS:  # (whose, when and whether wished, the rows' writer says: a name or a pet is said
        # in more shapes than "I" or "we", and a request "Could you call me Kate?" is no wish)
        return not REPORTED.search(anchor.doc[:anchor.i].text) and not any(
            _quoted(nodes[k]) for k in ("anchor", "value") if k in nodes)
    if reading.slot in LIFE_SLOTS or reading.name in READS_ITS_OWN_TIME:  # (whose and when, the rows' writer says:
        # the parse of a diet word is unsure; a job or a move is told in its own time)
        return _said_plainly(anchor, nodes)
    # (the user given it: "they promoted me to ..."; or a sentence of no verb the row's word heads: "Officially a
    # staff engineer!")
    if not (_owned(nodes) or "me" in nodes or (verb is None and anchor.dep_ == "ROOT")
            or (verb is not None and _subject(verb) in ("i", "we", _LEFT_OUT))):
        return False
    if verb is not None and ((any(c.dep_ == "neg" for c in verb.children) and "not" not in nodes)
                             or tense_of(verb) == "future"):
        return False
    return _said_plainly(anchor, nodes)


def _said_plainly(anchor: Token, nodes: dict[str, Token]) -> bool:
    """Not a wish, a condition or someone else's words, nor quoted. (The pattern's own words are none of these:
    "I'd rather have tea" says a taste with its "would".)"""
    named = {t.i for t in nodes.values()}
    before = " ".join(t.text for t in anchor.doc[anchor.sent.start:anchor.i] if t.i not in named)
    if HYPOTHETICAL.search(before) or REPORTED.search(before):
        return False
    # Nor quoted, nor a value in quotes: a quoted name is a title ("joined "Trail Blazers", a hiking club"), which
    # the clause readers leave out too (sentences.QUOTED).
    values = [nodes[k] for k in ("anchor", "value", "employer", "title") if k in nodes]
    return not any(_quoted(token) for token in values)


def _quoted(token: Token) -> bool:
    """Whether a token is inside straight or curly double quotes of its sentence."""
    before = token.doc[token.sent.start:token.i].text
    return bool(before.count('"') % 2 or before.count("“") > before.count("”"))


# What says a move is behind the user ("the move to Bristol is done"; not "is next month").
_DONE = frozenset({"do", "done", "complete", "over", "finish", "finished"})


def _in_its_time(reading: Reading, nodes: dict[str, Token]) -> bool:
    """A change told as done ("moved", "have moved", "got the keys"; not "I'm moving", a plan); a state told as
    holding now ("I live in", "I've lived in Porto since 2019"; not "I lived in Rome", "I used to live in Porto")."""
    anchor = nodes["anchor"]
    if reading.taste or reading.slot in (*PEOPLE_SLOTS, *LIFE_SLOTS) or reading.name in READS_ITS_OWN_TIME:
        return True  # a taste come to holds now; who a person is to the user, whichever time the clause is told in
    verb = _verb_of(anchor)
    if anchor.pos_ not in ("VERB", "AUX") and reading.change:  # a move as a noun: made ("made the move") or done
        if anchor.dep_ == "pobj" and anchor.head.lower_ in ("since", "after"):
            return True  # "since the move to Bristol", "after the big move to Cork"
        return verb is not None and (tense_of(verb) == "past" or bool(
            {verb.lemma_, *(c.lemma_ for c in verb.children if c.dep_ == "acomp")} & _DONE))
    if verb is None:
        return True  # "Hello from our new flat in Porto!"
    tense = tense_of(verb)
    if reading.change:
        return tense == "past"
    # the prepositions of a span ("since 2020", "for ages"; not the "for" of "worked for Acme", which holds the
    # value); a span may hang on what the verb says the user is: "I've been a Prague resident for ages"
    values = {nodes[k] for k in ("value", "employer", "title") if k in nodes}
    preps = {c.lower_ for t in (verb, *verb.children, *values) for c in t.children
             if c.dep_ == "prep" and values.isdisjoint(c.children)}
    return tense == "present" or (verb.tag_ == "VBN" and bool(preps & {"since", "for"}))


def _where_said(match: tuple[Reading, dict[str, Token]]) -> int:
    """Where a match's value is in the sentence (its verb's place when it names none), to write them in that order."""
    nodes = match[1]
    return min((nodes[k].i for k in ("value", "employer", "title") if k in nodes), default=nodes["anchor"].i)


# Each pattern by the key it is added to the matcher under: its row, and the pattern (whose nodes name the tokens).
def _as_said(pattern: Pattern) -> tuple[Pattern, ...]:
    """A pattern, and, when it hangs on a verb, the same with that verb tagged a noun after "and" ("I live in Porto
    and work at Farfetch": the small pipeline often tags the second verb NN), its head a verb."""
    anchor = pattern[0]["RIGHT_ATTRS"]
    if anchor.get("POS") != _VERB_POS:
        return (pattern,)
    misread = {**pattern[0], "RIGHT_ATTRS": {**anchor, "POS": "NOUN", "DEP": "conj"}}
    head = {"LEFT_ID": "anchor", "REL_OP": "<", "RIGHT_ID": "conj_head", "RIGHT_ATTRS": {"POS": _VERB_POS}}
    return pattern, [misread, head, *pattern[1:]]


@cache
def _by_key() -> dict[str, tuple[Reading, Pattern]]:
    """Every row's patterns by key: the user's own rows (table_self.py, table_life.py, table_work.py) and the
    people's (table_people.py)."""
    rows = (*SELF_ROWS, *LIFE_ROWS, *WORK_ROWS, *PEOPLE_ROWS)
    return {f"{reading.name}#{n}.{m}": (reading, variant) for reading in rows
            for n, pattern in enumerate(reading.patterns) for m, variant in enumerate(_as_said(pattern))}


@cache
def _matcher() -> DependencyMatcher:
    from spacy.matcher import DependencyMatcher  # deferred: spaCy loads with the pipeline, on first use

    matcher = DependencyMatcher(pipeline().vocab)
    for key, (_, pattern) in _by_key().items():
        matcher.add(key, [pattern])
    return matcher


# Past forms the regular endings miss.
_IRREGULAR = {"get": ("got", "gotten"), "become": ("became",), "make": ("made",), "find": ("found",),
              "begin": ("began", "begun"), "take": ("took", "taken"), "buy": ("bought",),
              "grow": ("grew", "grown"), "come": ("came",), "stand": ("stood",), "learn": ("learnt",),
              "transfer": ("transferred", "transferring"), "step": ("stepped",),
              "go": ("went", "gone"), "hold": ("held",), "give": ("gave", "given"), "lead": ("led",), "run": ("ran",),
              "have": ("has", "had"), "leave": ("left",), "eat": ("ate", "eaten"), "keep": ("kept",),
              "do": ("did", "done"), "spend": ("spent",),
              "be": ("m", "am", "is", "are", "re", "s", "was", "were", "been", "being")}


def inflections(lemma: str) -> set[str]:
    """The forms of a verb a sentence may use ("move": moves, moved, moving)."""
    stem = lemma[:-1] if lemma.endswith("e") else lemma
    doubled = lemma + lemma[-1] if re.fullmatch(r"[^aeiou]*[aeiou][bdgkmnprt]", lemma) else lemma
    cried = (lemma[:-1] + "ied", lemma[:-1] + "ies") if re.fullmatch(r".*[^aeiou]y", lemma) else ()  # "married"
    return {lemma, lemma + "s", lemma + "es", stem + "ed", doubled + "ed", stem + "ing", doubled + "ing", *cried,
            *_IRREGULAR.get(lemma, ())}


def _words_allowed(attrs: dict[str, Any]) -> frozenset[str] | None:
    """The words a node of a pattern can be, as a sentence spells them (None: any word)."""
    for key, forms in (("LOWER", lambda w: {w}), ("LEMMA", inflections)):
        allowed = attrs.get(key)
        if allowed is not None:
            if isinstance(allowed, dict) and "IN" not in allowed:
                return None  # ("NOT_IN": any word but those)
            words = allowed["IN"] if isinstance(allowed, dict) else [allowed]
            return frozenset(form for word in words for form in forms(word))
    return None


_Needs = tuple[bool, tuple[frozenset[str], ...]]


@cache
def _needs() -> tuple[dict[str, list[_Needs]], list[_Needs]]:
    """For each pattern: whether it needs a name, and the sets of words a sentence must hold one of each of; indexed
    by the words of its smallest set (a sentence is checked only against patterns one of its words may anchor), and
    those that name no word apart."""
    needs = {(any(node["RIGHT_ATTRS"].get("POS") == "PROPN" or node["RIGHT_ATTRS"].get("IS_TITLE") for node in pattern),
              tuple(allowed for node in pattern if (allowed := _words_allowed(node["RIGHT_ATTRS"])) is not None))
             for _, pattern in _by_key().values()}
    by_word: dict[str, list[_Needs]] = {}
    for need in needs:
        for word in min(need[1], key=len, default=()):
            by_word.setdefault(word, []).append(need)
    return by_word, [need for need in needs if not need[1]]


def words_of(text: str) -> list[str]:
    """The words of a text as the patterns' word checks read them: runs of letters, accented too ("fiancé")."""
    return re.findall(r"[^\W\d_]+", text)


def may_anchor(text: str) -> bool:
    """Whether some pattern could match `text`: its words hold one of each word set the pattern names, and a name
    when its value is a name (the first word too: "Porto is our home now"). Only such sentences are parsed."""
    words = words_of(text)
    named = any(w[0].isupper() and w not in NOT_NAMES for w in words)
    lowered = {w.lower() for w in words}
    by_word, anywhere = _needs()
    return any((named or not needs_a_name) and all(not allowed.isdisjoint(lowered) for allowed in needs)
               for needs_a_name, needs in (*anywhere, *(need for word in lowered for need in by_word.get(word, ()))))
