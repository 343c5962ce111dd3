"""Action items: "I'll ...", "I need to ...", "remind me to ..."."""

from __future__ import annotations

import re

from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import guarded, third_person
from memlake.distill.offline.vocabulary import UNTIL_OBJ


def read_action_items(rule: Rule, clause: str) -> None:
    m = re.search(r"\b(?:I'll|I will|I need to|I have to|[Rr]emind me to) " + UNTIL_OBJ, clause)
    if m and not guarded(clause, m):
        what = m.group("obj").strip()
        if len(what.split()) >= 2:
            verb = "will" if m.group(0).startswith(("I'll", "I will")) else "needs to"
            rule.found.action_items.append(f"The user {verb} {third_person(what)}.")
