"""Corrections: "actually, ..., not ..."."""

from __future__ import annotations

import re

from memlake.distill.offline.readers.deadline import read_deadline
from memlake.distill.offline.readers.diet import read_diet
from memlake.distill.offline.readers.employer import read_employer_tenure_or_start
from memlake.distill.offline.readers.home import read_home
from memlake.distill.offline.readers.table import read_by_table
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import QUOTED, split_clauses, third_person


def read_correction(rule: Rule) -> bool:
    """'Actually, X, not Y': a candidate of type correction carrying X. True when it took the sentence."""
    text = QUOTED.sub(" ", rule.sentence.text)
    m = re.search(r"\b[Aa]ctually,?\s+(?P<rest>[^;]+?),?\s+not\s+(?P<old>[^,.;!?]+?)(?:\s+-.*)?(?:[.;!?]|$)", text)
    if not m:
        return False
    rest, old = m.group("rest").strip(), m.group("old").strip()
    if read_deadline(rule, rest, correction=old):
        return True
    before = len(rule.found.candidates)
    for clause in split_clauses(rest):
        for reader in (read_home, read_employer_tenure_or_start, read_diet):
            reader(rule, clause)
    if not any(c.slot for c in rule.found.candidates[before:]):  # "Actually, I work at Globex, not ...",
        read_by_table(rule, since=before, text=rest)  # "Actually, we live in Porto, not Lisbon"
    slot_candidates = [c for c in rule.found.candidates[before:] if c.slot]
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
