"""Past events with a date: "I ran the Lisbon half marathon yesterday", "Project Heron launched on ..."."""

from __future__ import annotations

import re

from memlake.distill.dates import as_said
from memlake.distill.models import USER_SUBJECT
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import guarded, third_person
from memlake.distill.offline.vocabulary import CAP, TECH_WORDS

_EVENT_VERBS = (
    "ran", "finished", "completed", "graduated from", "graduated", "got married", "got engaged", "got promoted",
    "passed", "won", "kicked off", "launched", "visited", "adopted", "bought", "sold", "had a baby",
)


_DATED_EVENT = re.compile(r"\b(?P<who>I|[Ww]e) (?:just |finally )?(?P<verb>"
                          + "|".join(re.escape(v) for v in sorted(_EVENT_VERBS, key=len, reverse=True))
                          + r")\b(?!')(?P<obj>[^,.;!?]*)")


def read_dated_event(rule: Rule, clause: str) -> None:
    m = _DATED_EVENT.search(clause)
    if m and not guarded(clause, m):
        when = rule.date_in(m.group("obj"))
        if when is None:
            return
        obj = m.group("obj")[: when.start].strip()
        obj = re.sub(r"\s+(?:on|in|at)$", "", obj).strip()
        if TECH_WORDS.search(obj) or not obj and m.group("verb") in ("ran", "finished", "completed", "passed"):
            return
        verb = m.group("verb")
        subject = USER_SUBJECT
        named = re.search(rf"\b[Pp]roject (?P<name>{CAP})", obj)
        who = "The user" if m.group("who") == "I" else "The user's team"
        if named:
            subject = rule.context.project(named.group("name")) or USER_SUBJECT
        when_text = as_said(when)  # "last week" is that week, not one day of it
        third = third_person(obj)
        content = f"{who} {verb} {third} {when_text}." if third else f"{who} {verb} {when_text}."
        rule.add("event", f"{verb} {third}".strip(), content, subject=subject, importance=0.5, tags=("event",),
                 valid_from=when.day if when.precision == "day" else None)
        rule.key_date(when, content)
    m = re.search(rf"\b(?P<project>[Pp]roject {CAP}) (?P<verb>launched|shipped|went live|was released)"
                  r"(?P<obj>[^,.;!?]*)", clause)
    if m and not guarded(clause, m):
        when = rule.date_in(m.group("obj"))
        project = rule.context.project(m.group("project"))
        if when and project and when.precision == "day":
            content = f"{project} {m.group('verb')} on {when.day.isoformat()}."
            rule.add("event", f"{m.group('verb')} on {when.day.isoformat()}", content, subject=project,
                     importance=0.6, tags=("project", "launch"), valid_from=when.day)
            rule.key_date(when, content)
