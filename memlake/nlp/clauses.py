"""What a reader asks of a parsed sentence: its clauses (subject, predicate, objects, negation, tense) and the names
it holds with their types. Built from the dependency parse (`language_model.parse`), so a clause is found wherever the
sentence puts it: first, after "and", after a comma, or inside "since ...".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from memlake.nlp.language_model import parse, parse_all

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

Tense = Literal["past", "present", "future"]
Person = Literal["I", "we", "other", "none"]

# Dependency labels of a token heading a clause of its own.
_CLAUSE_HEADS = frozenset({"ROOT", "conj", "ccomp", "advcl", "relcl", "xcomp", "pcomp"})
_SUBJECTS = frozenset({"nsubj", "nsubjpass", "expl"})
_OBJECTS = frozenset({"dobj", "obj", "attr", "acomp", "oprd", "dative"})


@dataclass(frozen=True)
class Entity:
    """A name the pipeline found, with its type (PERSON, ORG, GPE, DATE, ...)."""

    text: str
    label: str
    start: int  # character offsets in the sentence's text
    end: int


@dataclass(frozen=True)
class Clause:
    """One clause: who does what to what, whether it is denied, and when."""

    subject: str  # as said ("I", "my sister", "Acme"); "" when the clause has none, not even an inherited one
    person: Person  # whom the subject is: the user ("I"), the user with others ("we"), another, or no one
    predicate: str  # the lemma of the verb ("move", "live", "be")
    objects: tuple[str, ...]  # its objects and complements, as said ("a flat in Bristol", "vegetarian")
    preps: tuple[tuple[str, str], ...]  # (preposition, its object) hanging from the verb: ("to", "Leeds")
    negated: bool
    tense: Tense
    text: str  # the clause's own words, in order


@dataclass(frozen=True)
class ParsedSentence:
    text: str
    clauses: tuple[Clause, ...]
    entities: tuple[Entity, ...]


def read(text: str) -> list[ParsedSentence]:
    """The sentences of `text`, each with its clauses and named entities."""
    doc = parse(text)
    return [ParsedSentence(text=sent.text, clauses=tuple(_clauses(sent)),
                           entities=tuple(Entity(e.text, e.label_, e.start_char - sent.start_char,
                                                 e.end_char - sent.start_char) for e in sent.ents))
            for sent in doc.sents]


def _clauses(sent: Span) -> list[Clause]:
    heads = [t for t in sent if t.dep_ in _CLAUSE_HEADS and (t.pos_ in ("VERB", "AUX") or t.dep_ == "ROOT")]
    return [_clause(head, heads) for head in heads]


def _clause(head: Token, heads: list[Token]) -> Clause:
    subject = _subject_of(head)
    head_indices = {h.i for h in heads}
    own = [t for t in head.subtree if _head_clause(t, head_indices) == head.i]
    return Clause(
        subject=_phrase(subject) if subject is not None else "",
        person=_person(subject),
        predicate=head.lemma_.lower(),
        objects=tuple(_phrase(c) for c in head.children if c.dep_ in _OBJECTS),
        preps=tuple((p.lemma_.lower(), _phrase(o)) for p in _preps_of(head) for o in p.children
                    if o.dep_ in ("pobj", "pcomp")),
        negated=any(c.dep_ == "neg" for c in head.children)
        or any(c.dep_ == "neg" for a in head.children if a.dep_ in ("aux", "auxpass") for c in a.children),
        tense=tense_of(head),
        text="".join(t.text_with_ws for t in sorted(own, key=lambda t: t.i)).strip(),
    )


def _head_clause(token: Token, heads: set[int]) -> int | None:
    """The index of the clause head a token belongs to: the nearest clause head above it (itself, if it is one)."""
    while token.i not in heads:
        if token.head.i == token.i:
            return None
        token = token.head
    return token.i


def _subject_of(head: Token) -> Token | None:
    """The clause's subject, or the one it shares ("I moved to Leeds and work at a bakery": "I" works)."""
    for token in (head, *head.ancestors):
        subject = next((c for c in token.children if c.dep_ in _SUBJECTS), None)
        if subject is not None:
            return subject
        if token.dep_ not in ("conj", "xcomp"):
            return None
    return None


def _person(subject: Token | None) -> Person:
    if subject is None:
        return "none"
    word = subject.text.lower()
    if word in ("i", "me"):
        return "I"
    if word in ("we", "us"):
        return "we"
    return "other"


def _preps_of(head: Token) -> list[Token]:
    """Prepositions hanging from the verb, and from its particle or object ("moved up to", "the keys to")."""
    preps = [c for c in head.children if c.dep_ in ("prep", "agent")]
    for child in head.children:
        if child.dep_ in ("prt", "dobj", "advmod"):
            preps += [c for c in child.children if c.dep_ == "prep"]
    return preps


def _phrase(token: Token) -> str:
    return " ".join(t.text for t in token.subtree)


def asks_about_now(question: str) -> bool:
    """Whether a question asks how things are now: the main verb of its last sentence (the question itself, after any
    lead-in) is in the present tense ("where do I live?", "what am I eating these days?", "what's my diet now?"),
    not the past ("where did I live?", "where have I lived?", "what did I use to eat?") nor the future ("where will I
    live?"). Read from the parse, so "now", "currently" or "these days" need no list: they go with a present verb."""
    sentences = list(parse(question, names=False).sents)
    return bool(sentences) and tense_of(sentences[-1].root) == "present"


def topic_words(texts: Sequence[str]) -> list[frozenset[str]]:
    """What each text is about, as lemmas ("plays" and "play" are one word): its words but stop words, punctuation,
    numbers and names. A name is left out because it says whom a text is about, not what: "what instrument does
    Nadia play?" shares "play" with "Nadia plays the violin", and nothing with "Nadia is allergic to peanuts"."""
    return [frozenset(t.lemma_.lower() for t in doc if t.is_alpha and not t.is_stop and t.pos_ != "PROPN"
                      and len(t.text) > 1) for doc in parse_all(list(texts), names=False)]


def tense_of(head: Token) -> Tense:
    """Past ("moved", "have moved", "used to live"), future ("will move", "am going to move") or present."""
    auxes = [c for c in head.children if c.dep_ in ("aux", "auxpass")]
    words = {a.lower_ for a in auxes}
    if words & {"will", "'ll", "shall"} or (head.head.lemma_ == "go" and head.dep_ == "xcomp"
                                            and head.head.tag_ == "VBG"):
        return "future"
    if head.dep_ == "xcomp" and head.head.lemma_ == "use" and head.head.tag_ in ("VBD", "VBN"):  # "used to hate"
        return "past"
    # (an auxiliary opening the sentence may be tagged a name: "Got promoted to tech lead!")
    if head.tag_ == "VBD" or any(a.tag_ == "VBD" or a.lower_ in ("got", "was", "were") for a in auxes):
        return "past"
    if head.tag_ == "VBN" and (not auxes or any(a.lemma_ == "have" for a in auxes)):
        return "past"  # "have moved"; a participle alone is chat's past with its "I" left out ("Moved to Leeds")
    return "present"
