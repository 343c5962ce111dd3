"""What a statement's predicate is, by its opening words: its fact type (a plan, a taste, a skill, a relative, a past
event, else a plain fact) and its verb in the third person. The self-statement reader (`self_statements`) and
`remember`'s reading of what the user says (`memlake.facts.said_as_is`) share them."""

from __future__ import annotations

import re

from memlake.distill.offline.vocabulary import RELATIVES
from memlake.nlp.words import Words

IRREGULAR_THIRD = {"have": "has", "do": "does", "go": "goes", "am": "is", "are": "is", "be": "is",
                   "wanna": "wants to", "gonna": "is going to", "gotta": "has to"}
# An adverb and its space, for the patterns that open on adverbs (`adverbs_opening` reads the same words).
ADVERBS = r"(?:(?:just|also|really|finally|recently|usually|always|often|still|actually|sometimes|now|even|" \
          r"mostly|already|currently|normally|generally|regularly|totally|absolutely|never|barely|only|later|" \
          r"then|again|soon|once|first|ever|seldom|kinda|sorta|" \
          r"(?!(?:apply|fly|rely|reply|supply|multiply|imply|comply|ally|rally|tally|bully)\b)[a-z]+ly) )"
_ADVERB_WORDS = frozenset("""just also really finally recently usually always often still actually sometimes now even
    mostly already currently normally generally regularly totally absolutely never barely only later then again soon
    once first ever seldom kinda sorta""".split())  # noqa: SIM905
_NOT_ADVERBS = frozenset(["apply", "fly", "rely", "reply", "supply", "multiply", "imply", "comply", "ally", "rally",
                          "tally", "bully"])


def adverbs_opening(text: str) -> str:
    """The adverbs a predicate opens with, each with its space ("really just " of "really just loves jazz")."""
    i = 0
    while (j := text.find(" ", i)) > i:
        word = text[i:j]
        if word not in _ADVERB_WORDS and not (len(word) > 2 and word.endswith("ly") and word.isascii()
                                             and word.isalpha() and word.islower() and word not in _NOT_ADVERBS):
            break
        i = j + 1
    return text[:i]


def without_adverbs(text: str) -> str:
    return text[len(adverbs_opening(text)):]


PLAN = re.compile(r"^(?:is |are |am |will |'ll )?(?:going to|planning|plan to|hoping to|hope to|gonna|"
                  r"aiming to|about to|will|'ll|intend to|looking to|set to|signed up|booked|wants? to)\b", re.I)
PREFERENCE = re.compile(r"^(?:love|loves|like|likes|enjoy|enjoys|adore|adores|prefer|prefers|hate|hates|"
                        r"(?:is |am |are )?(?:a (?:big |huge )?fan of|into|passionate about|obsessed with|"
                        r"fond of|crazy about))\b|\bfavou?rite\b", re.I)
SKILL = re.compile(r"^(?:(?:is |am |are )?learning|(?:is |am |are )?teaching (?:myself|themselves)|"
                   r"speak|speaks|can (?:play|speak|cook|code|paint|draw|sing|dance|swim|knit|sew|drive)|"
                   r"know how to|knows how to|(?:is |am )?(?:fluent|skilled|good) (?:in|at)|practi[cs]e)\b", re.I)
PAST = re.compile(r"^(?:\w+ed|went|got|took|retook|chose|forgot|made|met|ran|won|saw|did|had|gave|found|bought|"
                  r"sold|built|wrote|set|put|cut|hit|let|quit|shut|spread|hurt|split|"
                  r"began|became|came|spent|left|lost|broke|flew|drove|rode|swam|sang|taught|caught|"
                  r"brought|thought|felt|heard|held|kept|read|paid|sent|shot|sat|stood|told|tore|wore|won|"
                  r"learnt|dreamt|burnt|leapt|dealt|slept|"
                  r"was|were|has been|have been|'ve been)\b", re.I)


def a_word(verb: str) -> bool:
    """A verb as a word of lower-case letters, with one apostrophe at most ("run", "ain't"; not "3D", "e-mail")."""
    parts = verb.split("'")
    return len(parts) <= 2 and all(p.isascii() and p.isalpha() and p.islower() for p in parts)


def third_person_verb(verb: str) -> str:
    """"run" -> "runs", "watch" -> "watches", "try" -> "tries"; a past form stays as it is."""
    if verb in IRREGULAR_THIRD:
        return IRREGULAR_THIRD[verb]
    if PAST.match(verb) or verb.endswith("ing"):
        return verb
    if verb.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(verb) > 1 and verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


_HAS_KIN = re.compile(rf"^(?:has|have) (?:a|an|one|two|three|four|\d+) (?:[a-z-]+ )?(?:{RELATIVES})s?\b")
_BEEN = Words("was were", "has been", "have been", "'ve been")


def self_statement_type(predicate: str) -> str:
    """The fact type a predicate's structure says: a plan, a taste, a skill, a past event, else a plain fact."""
    predicate = without_adverbs(predicate.strip())
    if PLAN.match(predicate):
        return "commitment"
    if PREFERENCE.search(predicate):
        return "preference"
    if SKILL.match(predicate):
        return "skill"
    if _HAS_KIN.match(predicate):
        return "relationship"
    if PAST.match(predicate) and not _BEEN.opens(predicate):
        return "event"
    return "fact"
