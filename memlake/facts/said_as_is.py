"""What `remember` writes of a statement the rules read only in part: each clause left unread, as said, about the
user in the third person and typed by its structure.

A user who tells memory something expects all of it kept: "My sister Giulia moved to York, she works at York
Hospital" must keep the move even when the rules read only the job. A clause is left unread when a word it says
(other than words of when, and the details of a slot value the rules read: "Clifton in Bristol, not Bath") is in
none of the facts the rules found; it is then written as said, turned to the
third person ("I just drink my coffee black" -> "The user just drinks their coffee black.") so that the profile
shows it as it shows every other fact. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from memlake.distill.dates import find_dates
from memlake.distill.offline.readers.predicates import self_statement_type, third_person_verb
from memlake.distill.offline.sentences import third_person as third_person_words
from memlake.facts.fold import TIME_WORDS, words_loosely_in
from memlake.nlp import parse, read
from memlake.text import content_words

# A short lead before a colon is a heading, not a statement: "Small update: I've gone off oat milk".
_HEADING = re.compile(r"^[^.!?:]{1,30}:\s+(?=\S)")
# Where one statement ends and the next begins: a sentence end, a semicolon, or a comma before a new subject
# ("..., she works at York Hospital"; "..., these days I mostly cook Thai food"; "..., and I ...").
_SUBJECT = r"(?:I|I'm|I've|I'd|I'll|we|we're|we've|he|she|he's|she's|they|they're|my|our)\b"
_STATEMENT_END = re.compile(rf"(?<=[.!?])\s+|\s*;\s*|,\s+(?=(?:[a-z]+ ){{0,3}}{_SUBJECT})")
_FIRST_PERSON = re.compile(
    r"^(?P<lead>(?:[A-Za-z]+ ){0,3}?)(?P<who>I'm|I am|I've|I have|I was|I'll|I will|I'd|I|we're|we are|we've|"
    r"we have|we were|we'll|we)\s+(?P<rest>.+)$", re.IGNORECASE)
_BE_HAVE = {"i'm": "is", "i am": "is", "i've": "has", "i have": "has", "i was": "was", "i'll": "will",
            "i will": "will", "i'd": "would", "we're": "are", "we are": "are", "we've": "have", "we have": "have",
            "we were": "were", "we'll": "will"}
_ADVERB = re.compile(r"^(?:just|really|also|always|usually|often|still|never|mostly|now|actually|sometimes|rarely|"
                     r"only|even|generally|normally|finally|recently)\s+", re.IGNORECASE)
_MODAL = re.compile(r"^(?:can|can't|cannot|could|couldn't|would|wouldn't|should|shouldn't|will|won't|might|must|"
                    r"may|\w+ed)$", re.IGNORECASE)
_POSSESSIVE_OPENING = re.compile(r"^(?:my|our)\s+", re.IGNORECASE)
# "My sister Giulia ...", "my dog Biscuit ...": the person (or pet) named is whom it is about.
_NAMED_OWN = re.compile(r"^(?:[Mm]y|[Oo]ur)\s+(?:[a-z-]+\s+){1,2}?(?P<name>[A-Z][\w-]+)\b")
# A named person doing or being something: a name, then a verb in the third person or the past ("Giulia moved").
_ABOUT_ANOTHER = re.compile(r"^(?P<name>[A-Z][a-z]+)(?:'s\b|\s+(?:just\s+|now\s+|still\s+)?"
                            r"(?:[a-z]+ed|is|was|has|had|got|went|and|lives|works|loves|likes)\b)")


def statements(text: str) -> list[str]:
    """The statements a remembered text makes, in order, without headings."""
    parts = _STATEMENT_END.split(_HEADING.sub("", text.strip()))
    return [part.strip(" ,.;") for part in parts if part and part.strip(" ,.;")]


def unread_statements(text: str, found: list[dict[str, Any]], said_at: datetime) -> list[str]:
    """The statements of `text` that say something none of the `found` facts holds (words of when aside)."""
    held = set()
    for fact in found:
        for field in ("content", "value", "subject"):
            held |= content_words(fact.get(field))
    slot_values = [fact["value"] for fact in found if fact.get("slot") and fact.get("value")]
    unread = []
    for statement in statements(text):
        if any(_told_as_its_object(statement, value) for value in slot_values):
            # a statement that gave a slot its value was read: the rest of it is how the value was told ("Clifton in
            # Bristol, not Bath", "moved from Toronto to Montreal", "got the keys to our new place in ...")
            continue
        when = " ".join(mention.text for mention in find_dates(statement, said_at))
        said = content_words(statement) - content_words(when) - TIME_WORDS
        if said and not words_loosely_in(said, held):
            unread.append(statement)
    return unread


def as_said(statement: str) -> dict[str, Any]:
    """A statement as the user said it, as a fact: the content in the third person, the type by its structure
    (a plan, a taste, a skill, a past event, else a fact)."""
    first_person = _FIRST_PERSON.match(statement)
    subject = None
    if first_person:
        who, rest = first_person.group("who").lower(), third_person_words(first_person.group("rest"))
        predicate = f"{_BE_HAVE[who]} {rest}" if who in _BE_HAVE else _third_person(rest) if who == "i" else rest
        doer = "the user" if who.startswith("i") else "the user and others"
        content = f"{first_person.group('lead')}{doer} {predicate}"
        fact_type = self_statement_type(predicate)
    elif _POSSESSIVE_OPENING.match(statement):  # "My sister Giulia moved to York": one of the user's, by name
        content = "the user's " + third_person_words(_POSSESSIVE_OPENING.sub("", statement))
        named = _NAMED_OWN.match(statement)
        subject, fact_type = (named.group("name") if named else None), "fact"
    elif (another := _ABOUT_ANOTHER.match(statement)) is not None:  # "Giulia moved to York", "Tom's dog is Rex"
        content, subject, fact_type = third_person_words(statement), another.group("name"), "fact"
    elif _told_without_the_i(statement):  # "Left Toronto for good": the user's own past, its "I" left out
        content = "the user " + third_person_words(statement[:1].lower() + statement[1:])
        subject, fact_type = None, self_statement_type(third_person_words(statement))
    else:  # a request to the assistant ("Call me after six", "Keep answers short"): how the user wants things
        asked = third_person_words(statement[:1].lower() + statement[1:])
        content, subject, fact_type = "the user asked: " + asked, None, "preference"
    content = content[0].upper() + content[1:]
    return {"type": fact_type, "subject": subject, "slot": None, "value": None,
            "content": content if content.endswith((".", "!", "?")) else content + ".",
            "valid_from": None, "valid_until": None}


def _told_as_its_object(statement: str, value: str) -> bool:
    """Whether `statement` names a slot value as what it tells of, not as whom it is about ("My sister Giulia took
    up rowing" names the sibling, and tells of rowing)."""
    if not re.search(rf"\b{re.escape(value)}\b", statement):
        return False
    last = value.split()[-1]
    for sentence in parse(statement).sents:
        for token in sentence:
            if token.text == last:
                return not any(t.dep_ in ("nsubj", "nsubjpass") for t in (token, *token.ancestors))
    return False


def _told_without_the_i(statement: str) -> bool:
    """Whether a statement opens on a past verb with no subject, as chat leaves out "I" ("Moved here in May")."""
    clauses = [clause for sentence in read(statement) for clause in sentence.clauses]
    return bool(clauses) and clauses[0].person == "none" and clauses[0].tense == "past"


def _third_person(rest: str) -> str:
    """"just drink my coffee" -> "just drinks my coffee": the first verb after any adverbs, in the third person."""
    adverbs = ""
    while (adverb := _ADVERB.match(rest[len(adverbs):])) is not None:
        adverbs += adverb.group(0)
    verb, _, tail = rest[len(adverbs):].partition(" ")
    lower = verb.lower()
    if lower == "don't":
        verb = "doesn't"
    elif not _MODAL.match(lower) and re.fullmatch(r"[a-z]+", lower):
        verb = third_person_verb(lower)
    return f"{adverbs}{verb} {tail}".strip()
