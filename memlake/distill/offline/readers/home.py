"""The user's home city: a move planned ("we're moving from ... to ..."), a move on a day ahead, a city of work. Where
the user lives and a move made ("I live in ...", "we've settled in ...", "I moved to ...") are read by the table of
patterns, `readers/table.py`, which writes them with `add_home_city` and `add_move` here."""

from __future__ import annotations

import calendar
import re
from datetime import date

from memlake.distill.dates import DateMention, find_dates, human
from memlake.distill.models import INFERRED, USER_SUBJECT, FactCandidate, KeyDate
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import (
    Sentence,
    guarded,
    message_text,
    split_clauses,
    split_sentences,
    trim_name,
    with_we_as_i,
)
from memlake.distill.offline.vocabulary import (
    NAME,
    NOT_NAMES,
    NOT_PLACES,
    ORG,
    ORG_WORDS,
    ROLE,
    SKILL_WORDS,
    TEMPORARY,
)


def read_home(rule: Rule, clause: str) -> None:
    """The user's home city, a move made and a move planned."""
    clause = with_we_as_i(clause)  # "We've been living in Oslo since May": the household's home is the user's
    _moving_to(rule, clause)
    _moving_on_a_day(rule, clause)
    _city_of_work(rule, clause)


def home_until(rule: Rule, rest: str) -> DateMention | None:
    """The day a home is said to hold until: "I live in Berlin until then" (the last date said before it), "... until
    the end of June"."""
    if re.match(r"\s*until then\b", rest):
        earlier = [d for d in rule.dates if d.start < rule.sentence.text.find(rest.strip())]
        return earlier[-1] if earlier else _previous_date(rule)
    return rule.date_in(rest) if re.match(r"\s*until\b", rest) else None


# A home one moves into: "the Manchester flat", "my new place in Leeds", "a Porto apartment".
_HOME_NOUN = r"(?:flat|apartment|house|home|place|condo|studio|loft|cottage|townhouse)"


# A part of a day after a move says when it happened, not for how long ("got the keys ... this morning").
_MOMENT = re.compile(r"^\W*(?:today|tonight|this (?:morning|afternoon|evening))\b")


def add_move(rule: Rule, city: str, rest: str) -> None:
    """The home city a move made gives, from the day the rest of the clause says it happened."""
    if TEMPORARY.match(rest) and not _MOMENT.match(rest):
        return
    when = rule.date_in(rest)
    day = when.day if when and when.precision == "day" else None
    content = f"The user moved to {city}" + (f" around {human(when)}." if when else ".")
    add_home_city(rule, city, content, valid_from=day)
    if when:
        rule.key_date(when, f"The user moved to {city}.")


# Working somewhere in a city: "I work as a data analyst at Brightline Insurance in Leeds", "I'm a nurse at the
# Royal Infirmary in Leeds".
_WORKS_AT_IN = re.compile(rf"\bI(?:'m| am)? (?:now |currently |still )?(?:(?:work|working|employed)(?: as (?:a|an) "
                          rf"{ROLE})?|(?:a|an) {ROLE}) (?:at|for|with|by) (?:the )?{ORG} in (?P<city>{NAME})")
# What says the city of work is not home: work from elsewhere, or a home said in other words ...
_WORK_ELSEWHERE = re.compile(r"\b(?:remote(?:ly)?|commut\w*|from home|live|lives|living|based)\b", re.I)
# ... said of the user: "my brother lives in Cardiff" says nothing of where the user lives.
_FIRST_PERSON = re.compile(r"\b(?:I|[Ww]e)\b")


def _says_user_is_elsewhere(text: str) -> bool:
    """Whether a clause of `text` says the user (or their household) works from or lives somewhere."""
    return any(_WORK_ELSEWHERE.search(c) and _FIRST_PERSON.search(c) for c in split_clauses(text))


def _city_of_work(rule: Rule, clause: str) -> None:
    """The city the user works in is home, as a guess the fact says: only when the sentence says nothing about
    working from elsewhere or living elsewhere (`drop_inferred_homes` looks at the rest of the conversation)."""
    m = _WORKS_AT_IN.search(clause)
    if not m or guarded(clause, m) or _says_user_is_elsewhere(rule.sentence.text) or TEMPORARY.match(clause[m.end():]):
        return
    city = trim_name(m.group("city"))
    add_home_city(rule, city, f"The user works in {city}, and likely lives there (not said).", confidence=0.6,
                   inferred=True)


def drop_inferred_homes(candidates: list[FactCandidate], sentences: list[Sentence]) -> list[FactCandidate]:
    """A home city read from the place of work goes when the conversation says where the user lives or that they
    work from somewhere else."""
    said_otherwise = any(c.slot == "home_city" and c.subject == USER_SUBJECT and INFERRED not in c.tags
                         for c in candidates) or any(
        _says_user_is_elsewhere(s.text) for s in sentences if not s.question)
    if not said_otherwise:
        return candidates
    return [c for c in candidates if not (c.slot == "home_city" and INFERRED in c.tags)]


def _moving_to(rule: Rule, clause: str) -> None:
    """"We're moving from Berlin to Lisbon in May": a plan, not yet a home."""
    m = re.search(rf"\b(?:I'm|I am|[Ww]e're|[Ww]e are) (?:moving|relocating) (?:from (?P<from>{NAME}) )?"
                  rf"to (?P<to>{NAME})", clause)
    if m and not guarded(clause, m):
        origin = trim_name(m.group("from") or "")
        target = trim_name(m.group("to"))
        # the day may come before the move as well as after it: "On June 1st I'm moving to Leeds"
        when = rule.date_in(clause[m.end():]) or rule.date_in(clause[: m.start()], context=clause)
        what = f"move from {origin} to {target}" if origin else f"move to {target}"
        content = f"The user plans to {what}" + (f" ({_when_phrase(when)})." if when else ".")
        # no end date: the move a later statement tells closes the plan the day it began (the fold), and the profile
        # lists the plan as current only until a month after the day it names
        rule.add("commitment", what, content, importance=0.7, tags=("home", "move"))
        for place in (origin, target):
            if place:
                rule.entity(place, "place")
        if when:
            rule.key_date(when, f"The user plans to {what}.")


def _when_phrase(mention: DateMention) -> str:
    return human(mention) if mention.precision != "day" else f"around {mention.day.isoformat()}"


def _previous_date(rule: Rule) -> DateMention | None:
    """The last date said earlier in the same message ("... at the start of June. I live in Berlin until then.")."""
    mentions = find_dates(rule.said_before, rule.sentence.message.created_at)
    return mentions[-1] if mentions else None


# A home the user got to move into: "signed for a flat in Bath", "found a house in Leeds", "bought a place in Porto",
# "got a flat in York", "signed the lease on a flat in Ancoats, Manchester" (a district, then its city: the city).
_HOME_GOT = re.compile(
    rf"\b(?:signed (?:for|(?:the|a) (?:lease|contract|papers) (?:on|for))|found|bought|rented|"
    rf"got(?: the keys (?:to|for))?|secured|purchased) (?:a|an|the|our|my) (?:new |first |own )?"
    rf"(?:(?P<city>{NAME}) {_HOME_NOUN}|"
    rf"(?:[a-z]+ ){{0,2}}{_HOME_NOUN} in (?P<city_after>{NAME})(?:, (?P<city_of>{NAME}))?)")
# The day of a move, said as such, then the day: "the move is on 1 August", "we move on the 14th", "moving day is 12
# August", "we're moving in on 3 August", "moving on September 1st".
_MOVE_DAY = re.compile(r"(?:\b(?:[Tt]he|[Oo]ur|[Mm]y) (?:big )?move is|\b[Mm]oving day is|"
                       r"\b(?:I|[Ww]e)(?:'re| are|'m| am)? (?:move|moving)(?: in| house)?|"
                       r"(?:^|, )[Mm]oving(?: in)?)(?= )")
# A day of the month alone, after the move's words: "on the 1st" (the next such day).
_DAY_OF_MONTH = re.compile(r"\s+(?:on |for )?the (?P<day>[1-9]|[12]\d|3[01])(?:st|nd|rd|th)\b")


def _home_got(rule: Rule) -> str | None:
    """The one city the message says the user got a home in to move into."""
    text = message_text(rule.sentence.message)
    cities = {trim_name(m.group("city_of") or m.group("city_after") or m.group("city"))
              for m in _HOME_GOT.finditer(text) if not guarded(m.string, m)}
    # "a flat in Bath and one in Bristol": two homes, and no saying which
    cities |= {trim_name(m.group(1)) for m in re.finditer(rf"\b(?:and|or) (?:one|another) in ({NAME})", text)}
    return next(iter(cities)) if len(cities) == 1 else None


def _move_day_ahead(rule: Rule, clause: str) -> date | None:
    """The day ahead `clause` says a move is on ("the move is on 1 August", said in July)."""
    m = _MOVE_DAY.search(clause)
    if m is None or guarded(clause, m):
        return None
    rest = clause[m.end():]
    alone = _DAY_OF_MONTH.match(rest)
    if alone:
        return _next_day_of_month(rule.said, int(alone.group("day")))
    # (the tense is the move's, not the clause's: "we've signed for a flat, the move is on 1 August")
    when = rule.date_in(rest, context=clause[m.start():])
    if when is None or when.precision != "day" or not re.fullmatch(r"\s*(?:on|for)?\s*", rest[:when.start]):
        return None
    return when.day if when.day > rule.said else None


def _next_day_of_month(said: date, day: int) -> date | None:
    """The first day numbered `day` after `said` ("the 1st" said on 20 July is 1 August)."""
    year, month = said.year, said.month
    for _ in range(3):
        if day <= calendar.monthrange(year, month)[1] and date(year, month, day) > said:
            return date(year, month, day)
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return None


def _moving_to_a_home_got(rule: Rule) -> str | None:
    """The city of the home got, when the message says the day ahead the user moves there."""
    city = _home_got(rule)
    if city is None:
        return None
    clauses = (c for s in split_sentences(rule.sentence.message) for c in split_clauses(s.text))
    return city if any(_move_day_ahead(rule, c) for c in clauses) else None


def _moving_on_a_day(rule: Rule, clause: str) -> None:
    """"We've signed for a flat in Bath, the move is on 1 August": a plan to move there until that day, and the home
    city from it (a move with its day is carried out on that day; a later "we live in Bath" confirms it)."""
    day = _move_day_ahead(rule, clause)
    city = _home_got(rule) if day else None
    if day is None or city is None:
        return
    rule.add("commitment", f"move to {city}", f"The user plans to move to {city} (around {day.isoformat()}).",
             importance=0.7, tags=("home", "move"), valid_until=day)
    rule.found.key_dates.append(KeyDate(date=day.isoformat(), description=f"The user moves to {city}.",
                                        message_ids=[rule.message_id]))
    add_home_city(rule, city, f"The user lives in {city} from {day.isoformat()}.", valid_from=day, moving_in=True)


def add_home_city(rule: Rule, city: str, content: str, valid_from: date | None = None,
                   valid_until: date | None = None, confidence: float = 0.9, inferred: bool = False,
                   moving_in: bool = False) -> None:
    if not city or city.split()[0] in NOT_NAMES or any(w in NOT_PLACES or w in SKILL_WORDS or w in ORG_WORDS
                                                       for w in city.split()):
        return  # "We moved to Kubernetes", "I moved over to Acme Robotics"
    if not moving_in and city == _moving_to_a_home_got(rule):
        return  # "We bought a place in Porto, moving in on 3 August": home from that day (`_moving_on_a_day`)
    if city in rule.context.organizations or city in rule.context.people:
        return
    tags = ("home", INFERRED) if inferred else ("home",)
    rule.add("fact", city, content, slot="home_city", confidence=confidence, importance=0.8, tags=tags,
             valid_from=valid_from, valid_until=valid_until)
    rule.entity(city, "place")
    if inferred:
        return  # the graph holds what was said: a guess is no relation
    rule.relation(USER_SUBJECT, "lives_in", city, valid_from=(valid_from or rule.said).isoformat(),
                  valid_until=valid_until.isoformat() if valid_until else None)
