"""Corrections: "actually, ..., not ..."."""

from __future__ import annotations

import re

from memlake.distill.dates import find_dates
from memlake.distill.offline.readers.table import read_by_table
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import QUOTED, third_person


def read_correction(rule: Rule) -> bool:
    """'Actually, X, not Y': a candidate of type correction carrying X. True when it took the sentence."""
    text = QUOTED.sub(" ", rule.sentence.text)
    m = re.search(r"\b[Aa]ctually,?\s+(?P<rest>[^;]+?),?\s+not\s+(?P<old>[^,.;!?]+?)(?:\s+-.*)?(?:[.;!?]|$)", text)
    if not m:
        return False
    rest, old = m.group("rest").strip(), m.group("old").strip()
    before = len(rule.found.candidates)
    read_by_table(rule, since=before, text=rest)  # "Actually, I work at Globex, not ...", "..., we live in Porto"
    slot_candidates = [c for c in rule.found.candidates[before:] if c.slot]
    if slot_candidates and slot_candidates[0].slot == "project_deadline":  # the day it was said to be, as a day
        c, was = slot_candidates[0], find_dates(old, rule.sentence.message.created_at)
        content = "Correction: t" + c.content[1:].rstrip(".") + (f", not {was[0].day.isoformat()}." if was else ".")
        rule.found.candidates[before:] = [c.model_copy(update={"type": "correction", "confidence": 0.95,
                                                               "content": content, "tags": (*c.tags, "correction")})]
        return True
    if slot_candidates:
        rule.found.candidates[before:] = [
            c.model_copy(update={"type": "correction", "confidence": 0.95,
                                 "content": c.content.rstrip(".") + f" (not {third_person(old)})."})
            for c in slot_candidates
        ]
        return True
    del rule.found.candidates[before:]
    third, third_old = third_person(rest), third_person(old)
    if not re.search(r"\b(?:I|I'm|my|we|our)\b", rest, re.I):
        return False  # a correction of the assistant or of a topic, not a fact about the user
    rule.add("correction", third, f"Correction: {third}, not {third_old}.", confidence=0.85, importance=0.7,
             tags=("correction",))
    return True
