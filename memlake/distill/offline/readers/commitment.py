"""Plans and commitments: "I'm going to ...", "I plan to ...", "I signed up for ...", trips with their days."""

from __future__ import annotations

import re

from memlake.distill.dates import find_date_range, human, with_dates_resolved
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import cut_object, guarded, third_person, trim_name
from memlake.distill.offline.vocabulary import NAME, NOT_NAMES, TECH_WORDS, UNTIL_OBJ

TRIVIAL_PLAN_VERBS = re.compile(
    r"^(?:try|check|look|see|test|ask|use|need|have|be|do|give|get|make|keep|take|let|paste|share|send|fix|"
    r"debug|add|remove|change|update|install|write|read|say|tell|call|go with|start with|stick with|think|"
    r"wait|put|set|leave|stop|show|run it|run that|run this)\b",
    re.I,
)


def read_commitment(rule: Rule, clause: str) -> None:
    m = re.search(r"\bI(?:'m| am) (?:going|planning) to " + UNTIL_OBJ, clause) or re.search(
        r"\bI (?:plan|intend|promised|have promised|'ve promised|am committed|committed) to " + UNTIL_OBJ, clause
    )
    if m and not guarded(clause, m):
        what = m.group("obj").strip()
        if TRIVIAL_PLAN_VERBS.match(what) or TECH_WORDS.search(what) or len(what.split()) < 2:
            return
        if re.match(r"^(?:the )?[A-Z]", what) and m.group(0).lower().startswith(("i'm going", "i am going")):
            _read_trip(rule, what)  # "I'm going to Lisbon from 3 to 10 June": a trip, no plan "to Lisbon"
            return
        when = rule.date_in(what)
        plain = what
        if when and when.precision == "month" and re.search(r"\bin \w+$", what[: when.end]):
            plain = what[: when.start] + f"in {human(when)}" + what[when.end:]
        # the days said as calendar days: "from 14 to 21 August" read a year later must say which August
        third = with_dates_resolved(third_person(plain), rule.sentence.message.created_at)
        rule.add("commitment", third_person(what), f"The user plans to {third}.", importance=0.6,
                 tags=("plan",))
        rule.found.action_items.append(f"The user plans to {third}.")
        if when:
            rule.key_date(when, f"The user plans to {third_person(what)}.")
    m = re.search(r"\bI (?:signed up|registered|enrolled) for " + UNTIL_OBJ, clause)
    if m and not guarded(clause, m):
        what = m.group("obj").strip()
        if not TECH_WORDS.search(what):
            rule.add("commitment", f"signed up for {third_person(what)}",
                     f"The user signed up for {third_person(what)}.", importance=0.6, tags=("plan",))


def _read_trip(rule: Rule, where: str) -> None:
    where = cut_object(where) if not find_date_range(where, rule.said) else where.strip(" .!")
    said = with_dates_resolved(f"The user is going to {third_person(where)}", rule.sentence.message.created_at)
    rule.add("commitment", said.removeprefix("The user is "), said, importance=0.6, tags=("plan", "trip"))


# The user on the way to, or staying in, a named place ("I'm off to Berlin", "We're flying to Rome", "I'll be in
# Porto"), whatever the verb; only a stretch of days said with it makes it a trip ("I'm off to Berlin now" is leaving
# the chat). "I'm going to ..." is read by `read_commitment`.
_TO_A_PLACE = re.compile(rf"\b(?P<who>I(?:'m| am)|[Ww]e(?:'re| are)|I(?:'ll| will) be|[Ww]e(?:'ll| will) be) "
                         rf"(?!going to\b|planning to\b)(?:[a-z]+ ){{0,2}}?(?P<prep>to|in) (?:the )?(?P<place>{NAME})")


def read_trip_with_days(rule: Rule, clause: str) -> None:
    """"I'm off to Berlin from 14 to 21 August", "From 3 to 9 September we're flying to Rome": a trip, with its days."""
    m = _TO_A_PLACE.search(clause)
    stretch = find_date_range(clause, rule.sentence.message.created_at) if m else None
    if not m or not stretch or guarded(clause, m):
        return
    place = trim_name(m.group("place"))
    if not place or place.split()[0] in NOT_NAMES or place in rule.context.people:
        return
    if any(c.type == "commitment" and place in c.content and rule.message_id in c.message_ids
           for c in rule.found.candidates):
        return  # read already ("I'm going to Lisbon from ...")
    doing = f"going to {place}" if m.group("prep") == "to" else f"staying in {place}"
    rule.add("commitment", f"{doing} from {stretch.first.isoformat()} to {stretch.last.isoformat()}",
             f"The user is {doing} from {stretch.first.isoformat()} to {stretch.last.isoformat()}.",
             importance=0.6, tags=("plan", "trip"))
    rule.entity(place, "place")
