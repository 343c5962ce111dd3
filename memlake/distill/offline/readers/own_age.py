"""The user's own age, kept with the day it holds: "I turned 34 last week", "I'm 29", "I'll be 40 in March".

An age goes stale, so it is never a bare value (as the ages of people and pets, `about_people`): an age reached or
said is a fact "The user is 34 as of 2026-04-25." from that day, and an age still to come is an event on the day or
month said ("The user turns 40 in March 2027."). No slot: each statement stays true as written, and `SLOTS` (the
model's prompt) is unchanged.
"""

from __future__ import annotations

import re

from memlake.distill.dates import human
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import guarded

# An age as people write it: 34, thirty, thirty-four, twelve (not 0, not 150).
_AGE = (r"(?P<age>1[01]\d|[1-9]?\d|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
        r"fifteen|sixteen|seventeen|eighteen|nineteen|(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)"
        r"(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?)")
# What may follow an age said of oneself, and no more: "I'm 29", "I'm 29 years old now", "I turned 34 last week"
# (not "I'm 5 minutes away", "I'm 30 weeks pregnant", "I'm 100% sure", "I'm 29 and a nurse": more said than the age).
_YEARS_OLD = r"(?: years? old| yrs? old| y/?o)?"
_ENDS = (r"(?P<when>(?: (?:now|today|this year|as of today))?|"
         r"(?: (?:on|in|last|next|this|yesterday|a|two|three)\b[^,;:!?]*)?)(?:\W*$|\s*[,;])")
_IS = re.compile(rf"\bI(?:'m| am) (?:now |already |just )?{_AGE}{_YEARS_OLD}(?: (?:now|today|this year))?"
                 r"(?:\W*$|\s*[,;])", re.I)
_TURNED = re.compile(rf"\bI (?:just |recently |finally |officially )?turned {_AGE}{_YEARS_OLD}{_ENDS}", re.I)
_TO_COME = re.compile(rf"\bI(?:(?:'ll| will) (?:be|turn)| turn) {_AGE}{_YEARS_OLD}{_ENDS}", re.I)


def read_own_age(rule: Rule, clause: str) -> None:
    is_now, turned, to_come = _IS.search(clause), _TURNED.search(clause), _TO_COME.search(clause)
    m = is_now or turned or to_come
    if m is None or guarded(clause, m):
        return
    age = m.group("age").lower()
    when = rule.date_in(m.groupdict().get("when") or "", context=clause) if not is_now else None
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
