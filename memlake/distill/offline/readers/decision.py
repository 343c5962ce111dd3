"""Decisions: "we decided to ...", "I'm going with ..."."""

from __future__ import annotations

import re

from memlake.distill.models import USER_SUBJECT
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import guarded, third_person
from memlake.distill.offline.vocabulary import CAP, PRONOUN_OBJECTS, UNTIL_OBJ


def read_decision(rule: Rule, clause: str) -> None:
    m = re.search(r"\b(?P<who>I|[Ww]e)(?: have|'ve)? (?:just |finally |now )?decided (?P<how>to|on) " + UNTIL_OBJ,
                  clause)
    if not m:
        m = re.search(r"\b(?P<who>I|[Ww]e)(?:'re| are|'m| am) going with (?P<how>)" + UNTIL_OBJ, clause)
    if not m or guarded(clause, m):
        return
    what = m.group("obj").strip()
    if (len(what.split()) < 2 and not m.group("how")) or PRONOUN_OBJECTS.match(what) or re.match(
            r"^(?:to )?(?:\w+ )?(?:this|that|these|those|it)\b", what, re.I):
        return
    subject = USER_SUBJECT
    p = re.search(rf"\s+for (?P<project>(?:[Pp]roject )?{CAP})\s*$", what)
    if p:
        project = rule.context.project(p.group("project"))
        if project:
            subject = project
            what = what[: p.start()].strip()
    who = "The user" if m.group("who") == "I" else "The user's team"
    verb = "decided to" if m.group("how") == "to" else "decided on"
    if not m.group("how"):
        verb = "decided on"
    third = third_person(what)
    scope = f" for {subject}" if subject != USER_SUBJECT else ""
    content = f"{who} {verb} {third}{scope}."
    rule.add("decision", third, content, subject=subject, importance=0.7, tags=("decision",))
    rule.found.decisions.append(content)
