"""The user's own age, kept with the day it holds: "I turned 34 last week", "I'm 29", "I'll be 40 in March".

An age goes stale, so it is never a bare value (as the ages of people and pets, `about_people`): an age reached or
said is a fact "The user is 34 as of 2026-04-25." from that day, and an age still to come is an event on the day or
month said ("The user turns 40 in March 2027."). No slot: each statement stays true as written, and `SLOTS` (the
model's prompt) is unchanged.

Read from the parse: the age is a number that is the whole complement of the user's "be" or "turn" ("I'm 29", "I
turned forty", "I'm 52 years old"); a number that counts something else ("I'm 5 minutes away", "100% sure", "30 weeks
pregnant") or shares the complement with more ("I'm 29 and a nurse") is no age.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memlake.distill.dates import human
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.vocabulary import HYPOTHETICAL, NEGATION, REPORTED
from memlake.nlp import parse, tense_of

if TYPE_CHECKING:
    from spacy.tokens import Token

# The forms of the verbs an age is said with: a clause with none of them, or with no number, is not parsed.
_VERB_FORMS = frozenset("'m am be 'll turn turned turning turns".split())  # noqa: SIM905
_COMPLEMENTS = frozenset({"attr", "acomp", "dobj", "oprd"})
OLDEST = 119


def read_own_age(rule: Rule, clause: str) -> None:
    from spacy.lang.en.lex_attrs import like_num  # deferred: spaCy loads with the pipeline, on first use

    words = [w.strip(".,!?;:") for w in clause.lower().replace("’", "'").replace("i'm", "i 'm").split()]
    if _VERB_FORMS.isdisjoint(words) or not any(like_num(part) for w in words for part in w.split("-")):
        return
    for verb in parse(clause):
        age = _age_of(verb)
        if age is None or _not_plainly_said(verb):
            continue
        to_come = tense_of(verb) == "future" or (verb.lemma_ == "turn" and verb.tag_ in ("VBP", "VBZ", "VBG"))
        _add(rule, verb.doc[_first(age).i:age.i + 1].text.lower(), verb.doc[age.i + 1:].text, clause,
             to_come=to_come, is_now=verb.lemma_ == "be" and not to_come)
        return


def _age_of(verb: Token) -> Token | None:
    """The number that is the whole complement of the user's "be" or "turn" ("29", "forty", "52 years old"), or
    None."""
    if verb.lemma_ not in ("be", "turn") or verb.pos_ not in ("AUX", "VERB"):
        return None
    if verb.lemma_ == "be" and tense_of(verb) == "past":
        return None  # "I was 12 when we moved": an age once, not now
    subject = next((c for c in verb.children if c.dep_ == "nsubj"), None)
    left_out = subject is None and verb.dep_ == "ROOT" and verb.tag_ == "VBD"  # "Just turned thirty!"
    if not (left_out or (subject is not None and subject.lower_ == "i")):
        return None
    for complement in (c for c in verb.children if c.dep_ in _COMPLEMENTS):
        number = complement if complement.like_num else _years_old(complement)
        if number is not None and _an_age(number) and not any(c.dep_ in ("cc", "conj") for c in number.children):
            return number
    return None


def _years_old(complement: Token) -> Token | None:
    """The number of "52 years old" or "27 yo"."""
    counted = [complement] if complement.lower_ in ("yo", "y/o") else [
        c for c in complement.children if c.lemma_ in ("year", "yr")] if complement.lower_ == "old" else []
    return next((n for c in counted for n in c.children if n.dep_ == "nummod" and n.like_num), None)


def _first(number: Token) -> Token:
    """The first word of a number said in words ("thirty-five")."""
    return min((t for t in number.subtree if t.dep_ in ("compound", "punct") or t.i == number.i), key=lambda t: t.i)


def _an_age(number: Token) -> bool:
    return not number.text.isdigit() or 0 < int(number.text) <= OLDEST


def _not_plainly_said(verb: Token) -> bool:
    """Denied, a condition or someone else's words: "I'm not 30", "If I were 20 again"."""
    before = verb.doc[:verb.i].text
    return any(c.dep_ == "neg" for c in verb.children) or bool(
        HYPOTHETICAL.search(before) or NEGATION.search(before) or REPORTED.search(before))


def _add(rule: Rule, age: str, rest: str, clause: str, *, to_come: bool, is_now: bool) -> None:
    when = rule.date_in(rest, context=clause) if not is_now else None
    if to_come:
        if when is None or when.day <= rule.said:
            return  # an age to come with no day is no fact
        said = f"in {human(when)}" if when.precision != "day" else f"on {human(when)}"
        rule.add("event", f"turns {age}", f"The user turns {age} {said}.", importance=0.5, tags=("birthday",))
        rule.key_date(when, f"The user turns {age}.")
        return
    day = when.day if when is not None and when.day <= rule.said else rule.said
    rule.add("fact", age, f"The user is {age} as of {day.isoformat()}.", importance=0.5, tags=("age",),
             valid_from=day)
