"""The user's diet ("I'm vegetarian", "I've eaten vegan for years") and allergies."""

from __future__ import annotations

import re

from memlake.distill.models import SLOT_TYPES
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import cut_object, guarded, with_we_as_i
from memlake.distill.offline.vocabulary import DIETS, FOR_A_WHILE, SINCE_FOR, SINCE_WHEN, TEMPORARY

_DIET = "(?P<diet>" + "|".join(DIETS) + ")"
_LATELY = r"(?=\s+(?:lately|recently|these days|nowadays|(?:my|for my) (?:whole|entire) life|all my life)\b)"
# A meal is no diet: "I've eaten vegan for lunch", "I'm eating vegan for dinner".
_MEAL = re.compile(r"^\W*(?:for|at|with) (?:breakfast|lunch|dinner|brunch|supper|a snack|dessert)\b", re.I)
_DIET_PATTERNS = (
    # "I'm vegan", "I'm a strict vegetarian now" (not "I'm a vegan chef")
    rf"\bI(?:'m| am) (?:now |currently |still |also |strictly |fully |100% )*(?:a )?(?:strict |full )?{_DIET}\b"
    r"(?!-| (?!(?:and|now|too|so|but|since|for|these|nowadays|again|myself|actually|as of|starting|household|"
    r"family)\b)[a-z])",
    # "Vegan since last year", "Vegetarian now" (the "I'm" left out)
    rf"^(?:strict |strictly |fully )?{_DIET}(?= (?:now|since|these days|nowadays)\b)",
    # "I've been vegetarian for years", "I have been vegan since 2019"
    rf"\bI(?:'ve| have) been (?:a |strictly |fully )?{_DIET}\b(?:{SINCE_FOR}|{_LATELY})",
    # "I've been eating vegan since last year", "I've been on a keto diet for a month now"
    rf"\bI(?:'ve| have) been (?:eating(?: a| an)?|following a|on(?: a| an)?) (?:strictly |strict |fully |only )?"
    rf"{_DIET}\b"
    rf"(?: diet| food| meals)?(?:{SINCE_FOR}|{_LATELY})",
    # "Since January I've been vegetarian", "For years now, I've been vegan"
    rf"^(?:[Ss]ince|[Ff]or) [^,]{{1,30}}?,? I(?:'ve| have) been (?:a |strictly |fully )?{_DIET}\b",
    # "I've eaten vegetarian for years", "I've only eaten vegan food since 2019"
    rf"\bI(?:'ve| have) (?:only |strictly |exclusively )?eaten (?:a |an )?(?:strictly |only |fully )?{_DIET}\b"
    rf"(?: diet| food| meals)?{SINCE_FOR}",
    # "I'm eating vegan these days", "I'm only eating keto now" (not "I'm eating vegan this week")
    rf"\bI(?:'m| am) (?:now |currently |only |strictly |exclusively )*eating (?:strictly |only |fully )?{_DIET}\b"
    rf"(?: food| meals)?(?=\s*(?:$|[,.;!]|\s+(?:now|these days|nowadays|lately|since|for)\b))",
    # "I've adopted a vegan diet", "I started a keto diet", "I've started eating vegetarian"
    rf"\bI(?:'ve| have)? (?:just |recently |finally |now |officially )?(?:adopted|started|begun|began|started on|"
    rf"committed to) (?:a |an )?(?:strict |strictly |fully )?{_DIET}(?: diet| lifestyle|"
    r"(?=\s*(?:$|[,.;!]|\s+(?:now|these days|last|this|in|on)\b)))\b",
    rf"\bI(?:'ve| have)? (?:just |recently |finally |now |officially )?(?:started|begun|began) eating "
    rf"(?:strictly |only |fully )?{_DIET}\b(?: food| meals)?(?!\s+(?:sometimes|occasionally|once|at|for|when)\b)",
    # "As a vegetarian, I ...", "As a strict vegan I never ..." (not "As a vegan chef, ...")
    rf"^[Aa]s an? (?:strict |lifelong |long-time |committed )?{_DIET}\b(?=,|\s+I\b|\s*$)",
    # "I've decided to go vegan", "I'm going vegetarian" (not "I'm going vegan for Lent": see the guards)
    rf"\bI(?:'ve| have)? (?:just |finally |now )?decided to (?:go|become|be|turn|eat) (?:a |fully )?{_DIET}\b(?!-)",
    rf"\bI(?:'m| am) (?:now |officially )?going (?:fully )?{_DIET}\b(?=\s*(?:$|[,.;!]|\s+(?:now|from now on|"
    rf"for good|as of)\b))",
    # "Vegan here!", "Strict vegetarian here, any recipes?" (a self-introduction)
    rf"^(?:(?:a |strict |strictly |fully |lifelong |long-time )*){_DIET} here\b(?=\s*(?:$|[,.;:!]))",
    # "My diet is vegan now", "My diet is strictly kosher"
    rf"\b[Mm]y (?:new |current |usual )?diet is (?:now |strictly |fully |entirely )?(?:a |an )?{_DIET}\b",
    # "I've gone vegan", "I went pescatarian last month", "I switched to a keto diet", "I became vegetarian"
    rf"\bI(?:'ve| have)? (?:just |recently |finally |officially |now |fully )?(?:gone|went|turned|become|became|"
    rf"switched (?:over )?to|(?:went|gone|switched|changed|moved) from (?:being )?(?:a )?[a-z-]+ to|converted to|"
    rf"changed to|moved to|transitioned to|gone back to|went back to|returned to) "
    rf"(?:a |being |eating )?(?:fully |strictly |strict )?"
    rf"{_DIET}\b(?!-)",
    # "I'm on a keto diet", "I follow a vegan diet", "I keep kosher", "I eat halal"
    rf"\bI(?:'m| am)? (?:now |currently |still |strictly )?(?:on|follow|following|stick to|keep|keeping|doing) "
    rf"(?:a |an )?(?:strict |strictly |fully |mostly )?{_DIET}(?: diet| lifestyle|(?<=kosher)|(?<=halal)|"
    r"(?=\s*(?:$|[,.;!]|\s+(?:now|these days|nowadays|lately|since|for)\b)))\b",
    rf"\bI (?:now |only |strictly |exclusively )*eat (?:a |an )?(?:strictly |only |fully )?{_DIET}"
    r"(?: diet| food| meals)?(?=\s*(?:$|[,.;!]|\s+(?:now|these days|nowadays|since|for)\b))",
)


# How long a state has held, after "I've been ... ": "for a while", "for three months", "for years".
_HELD_FOR = re.compile(r"\W*for (?:quite |well over |over |almost |nearly |about )?(?:a |an |one |two |three |four |"
                       r"five |six |\d+ |a few |a couple of |several |many )?(?:long )?(?:while|days?|weeks?|months?|"
                       r"years?)\b", re.I)


# A diet said as what the user now goes, eats, does, tries or is put on, in any other words: "Decided to go vegan",
# "I'm trying keto now", "My doctor put me on a paleo diet", "Since March I've been eating vegan", "i do keto now".
_DIET_TAKEN = re.compile(
    rf"\b(?:go|going|gone|went|eat|eating|eaten|do|doing|try|trying|tried|on|follow|following) (?:a |an )?"
    rf"(?:strict |strictly |fully |mostly |100% )?{_DIET}(?:-based)?(?: diet| food| meals| lifestyle)?"
    r"(?=\s*(?:$|[,.;:!)])|\s+(?:now|these days|nowadays|lately|since|this year|as a|again|for good|from now on|and|"
    r"honestly|too)\b)", re.I)
# The user before the verb, with no one else between ("My doctor put me on", "Decided to": the "I" left out).
_THE_USER_BEFORE = re.compile(r"(?:^|\b(?:I|I'm|I've|I'd|me)\b)(?:(?!\b(?:my|his|her|their|he|she|they|you)\b)"
                              r"[^A-Z])*$")
# What was left or is only thought of or tried for, before the diet: "I've dropped vegetarian (and gone vegan)",
# "I'm trying to go vegan".
_LEFT_OR_THOUGHT_OF = re.compile(r"\b(?:dropped|quit|quitting|gave up|given up|giving up|stopped|no longer|used to|"
                                 r"off|thinking|considering|might|maybe|should|(?:trying|try|want|wants|wanted|plan|"
                                 r"planning|going|hope|hoping|need|like) to|gonna)\b", re.I)


def _diet_taken(clause: str) -> re.Match[str] | None:
    """The last diet of the clause said as taken by the user (see `_DIET_TAKEN`), not one left or a wish."""
    for m in reversed(list(_DIET_TAKEN.finditer(clause))):
        before = clause[: m.start()]
        # (a capital opening the clause is no name)
        if _THE_USER_BEFORE.search(before[:1].lower() + before[1:]) \
                and not _LEFT_OR_THOUGHT_OF.search(before[-40:].split(" and ")[-1]):
            return m
    return None


def read_diet(rule: Rule, clause: str) -> None:
    clause = with_we_as_i(clause)  # "We went vegan": the household's diet is the user's
    for pattern in (*_DIET_PATTERNS, _diet_taken):
        m = pattern(clause) if callable(pattern) else re.search(pattern, clause, re.I)
        rest = clause[m.end():] if m else ""
        # "I've been vegan for three months" goes on; "I went vegan for a month" is over; "I've eaten vegan for a
        # week" is a trial, for months a diet
        held = _HELD_FOR.match(rest)
        ongoing = bool(m and held and (re.match(r"I(?:'ve| have) (?:\w+ )?been\b", m.group(0), re.I) or (
            re.match(r"I(?:'ve| have) (?:\w+ )?eaten\b", m.group(0), re.I)
            and not re.search(r"\b(?:days?|weeks?)$", held.group(0)))))
        rest = SINCE_WHEN.sub(" ", rest)
        if m and not guarded(clause, m) and (ongoing or not (TEMPORARY.match(rest) or FOR_A_WHILE.search(rest))) \
                and not re.match(r"^\W*(?:until|till)\b", rest) and not _MEAL.match(rest):
            diet = m.group("diet").lower()
            rule.add(SLOT_TYPES["diet"], diet, f"The user is {diet}.", slot="diet", importance=0.7, tags=("food",))
            break
    m = re.search(r"\ballergic to (?P<obj>[\w ,-]+)", clause, re.I)
    allergen = cut_object(m.group("obj").split(",")[0]) if m else ""
    if m and allergen and re.search(r"\bI(?:'m| am)\b", clause[: m.start()]) and not guarded(clause, m):
        rule.add("fact", allergen, f"The user is allergic to {allergen}.", importance=0.9,
                 tags=("health", "allergy", "food"))
