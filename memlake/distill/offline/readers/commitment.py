"""Plans and commitments: "I'm going to ...", "I plan to ...", "I signed up for ..."."""

from __future__ import annotations

import re

from memlake.distill.dates import find_date_range, human, with_dates_resolved
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import cut_object, guarded, third_person
from memlake.distill.offline.vocabulary import TECH_WORDS, UNTIL_OBJ

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
