"""Skills and languages: "I know Python", "I'm fluent in ...", "I speak ..."."""

from __future__ import annotations

import re

from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import cut_object, guarded
from memlake.distill.offline.vocabulary import CAP, PRONOUN_OBJECTS, SKILL_WORDS, UNTIL_OBJ


def read_skills(rule: Rule, clause: str) -> None:
    m = re.search(rf"\bI (?:mostly |also |really |already )?know (?P<skills>{CAP}(?:(?:, | and | or ){CAP})*)",
                  clause)
    if m and not guarded(clause, m):
        for skill in re.split(r", | and | or ", m.group("skills")):
            skill = skill.strip(" .,")
            if skill in SKILL_WORDS:
                rule.add("skill", skill, f"The user knows {skill}.", importance=0.5, tags=("skill",))
    m = re.search(r"\bI(?:'m| am) (?:fluent|proficient|experienced|an expert) (?:in|at|with) " + UNTIL_OBJ, clause)
    if m and not guarded(clause, m):
        skill = cut_object(m.group("obj"))
        if skill and not PRONOUN_OBJECTS.match(skill):
            rule.add("skill", skill, f"The user is proficient in {skill}.", importance=0.5, tags=("skill",))
    m = re.search(rf"\bI speak (?P<langs>{CAP}(?:(?:, | and ){CAP})*)", clause)
    if m and not guarded(clause, m):
        for lang in re.split(r", | and ", m.group("langs")):
            if lang.strip(" .") in SKILL_WORDS:
                rule.add("skill", lang.strip(" ."), f"The user speaks {lang.strip(' .')}.", importance=0.5,
                         tags=("language",))
