"""Events of the user's working life: leaving an employer, interviewing with one."""

from __future__ import annotations

import re

from memlake.distill.dates import human
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import guarded, trim_org
from memlake.distill.offline.vocabulary import AFTER_ORG, ORG


def read_leaving_and_interviews(rule: Rule, clause: str) -> None:
    """"I left <org>", "I'm interviewing at <org>", "I have an interview with <org> on Friday"."""
    m = re.search(rf"\bI (?:left|quit) (?P<org>{ORG}){AFTER_ORG}", clause)
    if m and not guarded(clause, m):
        org = trim_org(m.group("org"))
        when = rule.date_in(clause[m.end():])
        day = when.day if when and when.precision == "day" else rule.said
        rule.add("event", f"left {org}", f"The user left {org}" + (f" around {human(when)}." if when else "."),
                 importance=0.7, tags=("work",), valid_from=day)
        rule.entity(org, "organization")
        if when:
            rule.key_date(when, f"The user left {org}.")
    m = re.search(rf"\bI(?:'m| am) interviewing (?:at|with) (?P<org>{ORG})", clause)
    if m and not guarded(clause, m):
        org = trim_org(m.group("org"))
        rule.add("event", f"interviewing at {org}", f"The user is interviewing at {org}.", importance=0.5,
                 tags=("work", "career"))
        rule.entity(org, "organization")
    m = re.search(rf"\bI have (?:a|an|my) (?:(?:first|second|third|final|last|job|technical|onsite) )*interview "
                  rf"(?:at|with) (?P<org>{ORG})", clause)
    if m and not guarded(clause, m):
        org = trim_org(m.group("org"))
        when = rule.date_in(clause[m.end():])
        suffix = f" on {human(when)}" if when and when.precision == "day" else ""
        rule.add("event", f"interview at {org}", f"The user has an interview at {org}{suffix}.", importance=0.5,
                 tags=("work", "career"), valid_from=when.day if suffix and when else None)
        rule.entity(org, "organization")
        if when:
            rule.key_date(when, f"The user has an interview at {org}.")
