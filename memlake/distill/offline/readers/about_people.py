"""What the user says about a person or a pet they named: tastes, home city, job, plans, birthdays and ages."""

from __future__ import annotations

import re
from typing import NamedTuple

from memlake.distill.dates import DateMention, human, with_dates_resolved
from memlake.distill.models import KIN_OR_PET, USER_SUBJECT, iso_day
from memlake.distill.offline.people_places import without_lead_in
from memlake.distill.offline.readers.commitment import TRIVIAL_PLAN_VERBS
from memlake.distill.offline.readers.preferences import preference_tags
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import cut_object, trim_name, trim_org
from memlake.distill.offline.vocabulary import (
    AFTER_ORG,
    AGE,
    AT_ORG,
    CAP,
    FOR_A_WHILE,
    HYPOTHETICAL,
    NAME,
    NOT_NAMES,
    ORG,
    PRONOUN_OBJECTS,
    ROLE,
    TEMPORARY,
    UNTIL_OBJ,
    WHOLE_ROLE,
)

# The relation saying a name is the user's pet: the graph types its target an animal (`graph.mentions.TARGET_TYPES`).
HAS_PET = "has_pet"


class _Person(NamedTuple):
    """The person a clause is about, and how sure: less for "she" or "he" than for a name."""

    subject: str
    confidence: float


# A comma splice going on about the same person: "Giulia lives in Manchester, she's a nurse" says two things.
_SPLICED_PRONOUN = r",\s*(?:and\s+)?(?=(?:[Ss]he|[Hh]e)(?:'s|'ll)?\b)"


def _parts(rule: Rule, clause: str) -> list[str]:
    """The clause cut where a comma splice goes on about a person: "she ..." or a person the conversation knows by
    name ("My brother got promoted last week, Tomasz is now lead pharmacist")."""
    names = "|".join(re.escape(word) for word in sorted(rule.context.people, key=len, reverse=True))
    splice = _SPLICED_PRONOUN + (rf"|,\s*(?:and\s+)?(?=(?:{names})\b)" if names else "")
    return re.split(splice, clause)


def read_about_person(rule: Rule, clause: str) -> None:
    """What the user says about a person or a pet they named: preferences, home city, job and employer, plans,
    birthdays and ages."""
    named_before = None  # "Giulia lives in Leeds, she's a nurse": "she" is the one the splice began with
    parts = _parts(rule, clause)
    for i, part in enumerate(parts):
        # ... or the one named before it in the clause: "We celebrated Biscuit's birthday, he's twelve now"
        named = rule.named_in(" ".join(parts[:i]))
        named_before = _read_one_thing_about_a_person(
            rule, part.strip(), named_before or (next(iter(named)) if len(named) == 1 else None))
    for pet, kind in rule.context.pets.items():
        if re.search(rf"\b{re.escape(pet)}\b", clause) and re.search(rf"\b{re.escape(kind)}\b", clause):
            _own_pet(rule, pet, kind)  # the clause naming it the user's: "my tortoise Biscuit", "a beagle called ..."


def _read_one_thing_about_a_person(rule: Rule, clause: str, named_before: str | None = None) -> str | None:
    """Read one thing said about a person; the person it was about (None when it named no one known)."""
    context = rule.context
    clause = without_lead_in(clause)
    m = re.match(rf"^(?:(?P<pronoun>She|He|she|he)\b|(?:(?:[Mm]y|[Oo]ur) (?:\w+ ){{0,2}})?(?P<name>{CAP}(?: {CAP})?))"
                 r"(?P<is>'s| is|'ll)? ", clause)
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
    if not m.group("is") and re.search(r"['’]s$", m.group("name") or ""):
        rest = f"'s {rest}"  # the name took the "'s" of "Ana's going to ...", "Sam's birthday is ..."
    for said in (_likes, _does_not, _into, _lives_in, _news, _plans, _works, _starts, _there_since, _turns, _turned,
                 _birthday, _age):
        if said(rule, person, rest):
            break  # one thing said per clause
    return subject


def _own_pet(rule: Rule, name: str, kind: str) -> None:
    """"my tortoise Biscuit": the user has a pet (the relation the graph types it by), and, when a rule read what
    was said of it, what kind of animal it is as a fact of its own; otherwise the statement kept as said names the
    kind ("Pepper, the user's dog, is terrified of thunderstorms")."""
    rule.relation(USER_SUBJECT, HAS_PET, name)
    said = f"{name} is the user's {kind}."
    if any(c.content == said and rule.message_id in c.message_ids for c in rule.found.candidates):
        return
    if any(c.subject == name and rule.message_id in c.message_ids for c in rule.found.candidates):
        rule.add("fact", kind, said, subject=name, importance=0.5,
                 tags=("people", KIN_OR_PET))


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
_TITLE = WHOLE_ROLE
# A title may come without "a": "Tomasz is now lead pharmacist at Morriston", "she's head of geography".
_IS_A_ROLE = re.compile(rf"^(?:'s| is) (?:now |currently |still |also )*(?:(?:a|an) )?"
                        rf"(?P<title>{_TITLE}(?: of [a-z]+)?)\b{AT_ORG}")
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
                 if when.precision != "day" else f"{subject} turns {n.group('age')} on {human(when)}.",
                 subject=subject, confidence=confidence, importance=0.5, tags=("people", "birthday"))
        rule.key_date(when, f"{subject} turns {n.group('age')}.")
    return True


# A plan told of a person: "Tomasz is moving to Swansea this summer", "Sam's going to study law", "Ana plans to
# retrain as a nurse". A commitment about that person, which a later statement carries out as the user's plans are.
_PLAN = re.compile(r"^(?:(?:'s| is) (?:(?:going|planning|hoping|about) to|"
                   r"(?:moving|relocating|emigrating)(?= to [A-Z]))|"  # (a move to a place: not "to a new office")
                   r"(?:plans|intends|hopes|is set) to) (?P<what>[^,;:!?]+)")


# A reaction to come, not a plan: "going to love it", "going to freak out".
_FEELING = re.compile(r"^(?:love|hate|like|enjoy|miss|freak|kill|laugh|cry|die|be (?:so |really )?(?:happy|glad|"
                      r"thrilled|mad|angry|upset|sad|jealous|fine|ok|okay|late))\b")


def _plans(rule: Rule, person: _Person, rest: str) -> bool:
    subject, confidence = person
    n = _PLAN.match(rest)
    what = n.group("what").strip() if n else ""
    if not n or HYPOTHETICAL.search(rest) or len(what.split()) < 2 or TRIVIAL_PLAN_VERBS.match(what) \
            or _FEELING.match(what) or PRONOUN_OBJECTS.match(what.split()[-1]):
        return False  # "Ana is going to hate this", "he's going to be late": no plan
    told = rest[:n.end()].strip(" .")
    said = with_dates_resolved(f"{subject}{'' if told.startswith(chr(39)) else ' '}{told}",
                               rule.sentence.message.created_at)
    rule.add("commitment", re.sub(r"^(?:'s|is) ", "", said[len(subject):].strip()), f"{said}.", subject=subject,
             confidence=confidence, importance=0.5, tags=("people", "plan"))
    return True


# A start still to come, said after the job: "..., she starts in September", "he'll start there on Monday".
_STARTS = re.compile(r"^(?:starts|'ll start|will start|(?:'s| is) starting|begins|'ll begin|will begin)\b(?P<when>.*)$")


def _starts(rule: Rule, person: _Person, rest: str) -> bool:
    """The day a job the message gave the person begins: their employer and title from then, the start said."""
    n = _STARTS.match(rest)
    when = rule.date_in(n.group("when")) if n else None
    if not n or when is None or when.day <= rule.said:
        return bool(n)
    for i, c in enumerate(rule.found.candidates):
        if c.subject == person.subject and c.slot in ("employer", "job_title") and rule.message_id in c.message_ids:
            said = f"{person.subject} starts at {c.value}" if c.slot == "employer" else \
                f"{person.subject} starts as {c.value}"
            rule.found.candidates[i] = c.model_copy(update={
                "valid_from": iso_day(when.day), "content": f"{said} {_on_or_in(when)}."})
    for relation in rule.found.relations:  # the graph's works_at holds from the start too
        if relation.source == person.subject and relation.relation == "works_at" and relation.valid_from is None:
            relation.valid_from = iso_day(when.day)
    return True


# How long a person has been at the place the message gave them: "He's been there since June", "she has worked there
# since 2019", "he's lived there since March".
_THERE_SINCE = re.compile(r"^(?:'s|has|have|'ve) (?:(?P<how>worked|lived) |been (?:(?P<how_ing>working|living) )?)"
                          r"(?:there|at [^,;.!?]+?) since\b(?P<when>.*)$")  # "there" read as the place already


def _there_since(rule: Rule, person: _Person, rest: str) -> bool:
    """Their employer or home the message gave, held from the past day said: "Tomasz is now lead pharmacist at
    Morriston. He's been there since June" dates his employer from June. "There" is the one workplace or home the
    message gave that person (working: the workplace; living: the home); with both and no verb to tell, neither."""
    n = _THERE_SINCE.match(rest)
    since = rule.past_start_in(f"since{n.group('when')}") if n else None
    if not n or since is None:
        return bool(n)
    how = n.group("how") or n.group("how_ing") or ""
    slots = ("employer",) if how.startswith("work") else ("home_city",) if how.startswith("liv") else \
        ("employer", "home_city")
    given = [i for i, c in enumerate(rule.found.candidates) if c.subject == person.subject and c.slot in slots
             and rule.message_id in c.message_ids]
    if len({rule.found.candidates[i].slot for i in given}) == 1:
        for i in given:
            rule.found.candidates[i] = rule.found.candidates[i].model_copy(update={"valid_from": iso_day(since)})
    return True


def _on_or_in(when: DateMention) -> str:
    return f"in {human(when)}" if when.precision != "day" else f"on {human(when)}"


# A birthday: "Biscuit has his birthday on 4 June", "Sam's birthday is March 3rd".
_BIRTHDAY = re.compile(r"^(?:has (?:his|her|their|its) birthday|'s birthday is|'s birthday's)\b(?P<when>.*)$")


def _birthday(rule: Rule, person: _Person, rest: str) -> bool:
    subject, confidence = person
    n = _BIRTHDAY.match(rest)
    when = rule.date_in(n.group("when")) if n else None
    if not n or when is None or when.precision != "day":
        return bool(n)
    rule.add("fact", when.day.strftime("%d %B").lstrip("0"), f"{subject}'s birthday is on "
             f"{when.day.strftime('%d %B').lstrip('0')}.", subject=subject, confidence=confidence, importance=0.5,
             tags=("people", "birthday"))
    rule.key_date(when, f"{subject}'s birthday.")
    return True


# An age said: "he'll be twelve" (on the birthday the message gave), "he's twelve now", "Sam is 40".
_AGE_SAID = re.compile(rf"^(?P<verb>'ll be |will be |(?:'s| is) (?:now |already |just )?){AGE}(?: years? old)?"
                       r"(?: now| today| this year)?(?:\W*$|\s*,|\s+and\b)")  # (not "is 5 minutes away")


def _age(rule: Rule, person: _Person, rest: str) -> bool:
    """An age with the day it holds: it goes stale, so the fact says when ("Biscuit is 12 as of 2026-07-20"), and an
    age to come is reached on the birthday the message gave ("Biscuit turns 12 on 2026-06-04")."""
    subject, confidence = person
    n = _AGE_SAID.match(rest)
    if not n:
        return False
    age = n.group("age")
    if "be" in n.group("verb"):
        birthday = next((d for c in rule.found.key_dates if c.description == f"{subject}'s birthday."
                         and rule.message_id in c.message_ids for d in [c.date]), None)
        if birthday is None:
            return True  # an age to come with no day is no fact
        rule.add("event", f"turns {age}", f"{subject} turns {age} on {birthday}.", subject=subject,
                 confidence=confidence, importance=0.5, tags=("people", "birthday"))
        return True
    rule.add("fact", age, f"{subject} is {age} as of {rule.said.isoformat()}.", subject=subject,
             confidence=confidence, importance=0.4, tags=("people", "age"))
    return True
