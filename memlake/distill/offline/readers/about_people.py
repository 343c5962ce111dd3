"""What the user says about a person they named: tastes, home city, job, birthdays."""

from __future__ import annotations

import re
from typing import NamedTuple

from memlake.distill.dates import human
from memlake.distill.offline.people_places import without_lead_in
from memlake.distill.offline.readers.preferences import preference_tags
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import cut_object, trim_name, trim_org
from memlake.distill.offline.vocabulary import (
    AFTER_ORG,
    AGE,
    AT_ORG,
    CAP,
    FOR_A_WHILE,
    NAME,
    NOT_NAMES,
    ORG,
    PRONOUN_OBJECTS,
    ROLE,
    TEMPORARY,
    UNTIL_OBJ,
)


class _Person(NamedTuple):
    """The person a clause is about, and how sure: less for "she" or "he" than for a name."""

    subject: str
    confidence: float


# A comma splice going on about the same person: "Giulia lives in Manchester, she's a nurse" says two things.
_SPLICED_PRONOUN = re.compile(r",\s*(?:and\s+)?(?=(?:she|he)(?:'s)?\b)", re.I)


def read_about_person(rule: Rule, clause: str) -> None:
    """What the user says about a person they named: preferences, home city, job and employer, birthdays."""
    named_before = None  # "Giulia lives in Leeds, she's a nurse": "she" is the one the splice began with
    for part in _SPLICED_PRONOUN.split(clause):
        named_before = _read_one_thing_about_a_person(rule, part.strip(), named_before)


def _read_one_thing_about_a_person(rule: Rule, clause: str, named_before: str | None = None) -> str | None:
    """Read one thing said about a person; the person it was about (None when it named no one known)."""
    context = rule.context
    clause = without_lead_in(clause)
    m = re.match(rf"^(?:(?P<pronoun>She|He|she|he)\b|(?:[Mm]y (?:\w+ ){{0,2}})?(?P<name>{CAP}(?: {CAP})?))"
                 r"(?P<is>'s| is)? ", clause)
    if not m:
        return None
    if m.group("pronoun"):
        subject = named_before or rule.named_earlier_in_message() or context.only_person()
        confidence = 0.75
    else:
        subject = context.person(trim_name(m.group("name") or ""))
        confidence = 0.9
    if not subject:
        return None
    person = _Person(subject, confidence)
    rest = clause[m.end():] if not m.group("is") else clause[m.start("is"):]
    for said in (_likes, _does_not, _into, _lives_in, _news, _works, _turns, _turned):
        if said(rule, person, rest):
            break  # one thing said per clause
    return subject


def _likes(rule: Rule, person: _Person, rest: str) -> bool:
    """What the person likes or hates: "Leela loves hiking", "Sam hates mushrooms"."""
    subject, confidence = person
    n = re.match(r"(?:really |also )?(?P<verb>prefers|likes|loves|enjoys|hates|dislikes) " + UNTIL_OBJ, rest)
    if not n:
        return False
    obj = cut_object(n.group("obj"))
    if obj and not PRONOUN_OBJECTS.match(obj):
        value = obj if n.group("verb") not in ("hates", "dislikes") else f"dislikes {obj}"
        rule.add("preference", value, f"{subject} {n.group('verb')} {obj}.", subject=subject,
                 confidence=confidence, importance=0.4, tags=("people",))
    return True


def _does_not(rule: Rule, person: _Person, rest: str) -> bool:
    """"Leela doesn't eat meat", "Sam doesn't like jazz"."""
    subject, confidence = person
    n = re.match(r"(?:doesn't|does not) (?P<verb>like|eat|drink) " + UNTIL_OBJ, rest)
    if not n:
        return False
    obj = cut_object(n.group("obj"))
    if obj and not PRONOUN_OBJECTS.match(obj):
        verb = n.group("verb")
        value = f"dislikes {obj}" if verb == "like" else f"no {obj}"
        rule.add("preference", value, f"{subject} doesn't {verb} {obj}.", subject=subject,
                 confidence=confidence, importance=0.4, tags=("people", "dislike"))
    return True


def _into(rule: Rule, person: _Person, rest: str) -> bool:
    """"Leela is into pottery"."""
    subject, confidence = person
    n = re.match(r"(?:'s| is) (?:really |very )?into " + UNTIL_OBJ, rest)
    if not n:
        return False
    obj = cut_object(n.group("obj"))
    if obj and not PRONOUN_OBJECTS.match(obj):
        rule.add("preference", obj, f"{subject} is into {obj}.", subject=subject, confidence=confidence,
                 importance=0.4, tags=("people", *preference_tags(obj)))
    return True


def _lives_in(rule: Rule, person: _Person, rest: str) -> bool:
    """"My sister Leela lives in Pune", "My cousin Priya just moved to Lyon" (not "for a few weeks")."""
    n = re.match(rf"(?:still |now )?(?P<verb>lives in|(?:has |had )?(?:just |recently |finally )?"
                 rf"(?:moved|relocated) to) (?P<city>{NAME})", rest)
    if not n:
        return False
    if TEMPORARY.match(rest[n.end():]) or FOR_A_WHILE.search(rest[n.end():]):
        return True  # a stay, not a home
    _add_home_city(rule, person, n.group("city"))
    return True


def _add_home_city(rule: Rule, person: _Person, said: str) -> None:
    subject, confidence = person
    city = trim_name(said)
    if city and city.split()[0] not in NOT_NAMES:
        rule.add("fact", city, f"{subject} lives in {city}.", subject=subject, slot="home_city",
                 confidence=confidence, importance=0.4, tags=("people", "home"))
        rule.entity(city, "place")
        rule.relation(subject, "lives_in", city, confidence=confidence)


# A move told of a person: "Giulia moved from Leeds to York in August", "Tom has moved to Swansea".
_MOVED = re.compile(rf"^(?:just |recently |finally |now |has |have |'s )*moved (?:from (?:{NAME}) )?(?:back )?to "
                    rf"(?P<city>{NAME})")


# What a person does for a living, as the user tells it: "she's a nurse at the Royal Infirmary", "Tom works as a
# plumber at Hargreaves", "Ana works at the National Gallery".
_IS_A_ROLE = re.compile(rf"^(?:'s| is) (?:now |currently |still |also )*(?:a|an) (?P<title>{ROLE})\b{AT_ORG}")
_WORKS = re.compile(rf"^(?:now |currently |still |also )*works (?:as (?:a|an) (?P<title>{ROLE})\b{AT_ORG}|"
                    rf"(?:at|for) (?:the )?(?P<only_org>{ORG}){AFTER_ORG})")


# A new job told of a person: "He's taken a job at Morriston Hospital", "Imogen has just landed a new job as head of
# geography at Kingswood School", "Ana got a job at Initech".
_NEW_JOB = re.compile(rf"^(?:'s |has |have |had )?(?:just |recently |finally |now |also )*(?:got|gotten|taken|took|"
                      rf"landed|started|found|accepted|begun|began) (?:a |an |the )?(?:new )?(?:job|position|role)"
                      rf"(?: as (?:a |an |the )?(?P<title>{ROLE}(?: of [a-z]+)?)\b)?{AT_ORG}")


def _works(rule: Rule, person: _Person, rest: str) -> bool:
    """A named person's job and employer: "she's a nurse at the Royal Infirmary", "Tom works at Hargreaves", "Ana
    got a job at Initech"."""
    subject, confidence = person
    n = _IS_A_ROLE.match(rest) or _WORKS.match(rest) or _NEW_JOB.match(rest)
    if not n:
        return False
    title = n.groupdict().get("title")
    org = trim_org(n.group("org") or n.groupdict().get("only_org") or "")
    if title:
        _add_title(rule, person, title)
    if org and org.split()[0] not in NOT_NAMES:
        rule.add("fact", org, f"{subject} works at {org}.", subject=subject, slot="employer", confidence=confidence,
                 importance=0.4, tags=("people", "work"))
        rule.entity(org, "organization")
        rule.relation(subject, "works_at", org, confidence=confidence)
    return True


# A new title told of a person: "Giulia just got promoted to ward manager", "Tom was made deputy head".
_PROMOTED = re.compile(rf"^(?:just |recently |finally |now |has |have |'s )*(?:got |was |has been |been |is |'s )?"
                       rf"(?:promoted to|made) (?:a |an |the )?(?P<title>{ROLE})\b")


def _news(rule: Rule, person: _Person, rest: str) -> bool:
    """A person's news: a move (their home city from the day it is said to have happened, "in August") or a
    promotion (their title)."""
    moved, promoted = _MOVED.match(rest), _PROMOTED.match(rest)
    if moved:
        _add_home_city(rule, person, moved.group("city"))
    if promoted:
        _add_title(rule, person, promoted.group("title"))
    return bool(moved or promoted)


def _add_title(rule: Rule, person: _Person, title: str) -> None:
    subject, confidence = person
    rule.add("identity", title, f"{subject} works as a {title}.", subject=subject, slot="job_title",
             confidence=confidence, importance=0.4, tags=("people", "work"))


# An age a person or a pet reached: "Biscuit turned four last week", "Mia just turned 8".
_TURNED = re.compile(rf"^(?:just |recently )?turned {AGE}\b(?P<rest>.*)$")


def _turned(rule: Rule, person: _Person, rest: str) -> bool:
    """Their age, from the day said ("last week"). No slot: `SLOTS` has no age (adding one changes the model's
    prompt), so a later birthday does not replace it."""
    subject, confidence = person
    n = _TURNED.match(rest)
    if not n:
        return False
    when = rule.date_in(n.group("rest"))
    rule.add("fact", n.group("age"), f"{subject} is {n.group('age')}.", subject=subject, confidence=confidence,
             importance=0.4, tags=("people",), valid_from=when.day if when else None)
    return True


def _turns(rule: Rule, person: _Person, rest: str) -> bool:
    """"Sam turns 40 in May": a birthday with its date."""
    subject, confidence = person
    n = re.match(r"turns (?P<age>\d{1,3})\b(?P<rest>.*)$", rest)
    if not n:
        return False
    when = rule.date_in(n.group("rest"))
    if when:
        rule.add("event", f"turns {n.group('age')}", f"{subject} turns {n.group('age')} in {human(when)}."
                 if when.precision == "month" else f"{subject} turns {n.group('age')} on {human(when)}.",
                 subject=subject, confidence=confidence, importance=0.5, tags=("people", "birthday"))
        rule.key_date(when, f"{subject} turns {n.group('age')}.")
    return True
