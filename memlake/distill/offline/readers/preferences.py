"""What the user likes and dislikes: "I prefer ...", "I don't drink ...", "I'm into ..."."""

from __future__ import annotations

import re

from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import cut_object, guarded, third_person, with_the_rest_of_a_list
from memlake.distill.offline.vocabulary import PRONOUN_OBJECTS, UNTIL_OBJ

_LIKE_VERBS = {"prefer": "prefers", "like": "likes", "love": "loves", "enjoy": "enjoys", "adore": "adores"}
_DISLIKE_VERBS = {"hate": "hates", "dislike": "dislikes", "detest": "detests"}
# Adverbs that colour a liking without changing it ("I actually prefer", "I always prefer", "I honestly love"); not
# those that deny or weaken it ("I hardly like", "I rarely enjoy").
_STANCE_ADVERBS = (r"(?:(?!(?:hardly|barely|rarely|scarcely|seldom|only)\b)(?:[a-z]+ly|always|also|much|still|just|"
                   r"truly|kind of|sort of) ){0,2}")


def read_preferences(rule: Rule, clause: str) -> None:
    m = re.search(rf"\bI {_STANCE_ADVERBS}(?P<verb>prefer|like|love|enjoy|adore|hate|"
                  r"dislike|detest) " + UNTIL_OBJ + r"(?P<rest>.*)$", clause)
    if m and not guarded(clause, m):
        obj = cut_object(m.group("obj"))
        obj = _with_especially(with_the_rest_of_a_list(obj, m.group("rest")), m.group("rest"))
        verb = m.group("verb")
        if obj and not PRONOUN_OBJECTS.match(obj) and len(obj.split()) <= 12:
            third = third_person(obj)
            if verb in _LIKE_VERBS:
                rule.add("preference", third, f"The user {_LIKE_VERBS[verb]} {third}.", importance=0.6,
                         tags=preference_tags(obj))
            else:
                rule.add("preference", f"dislikes {third}", f"The user {_DISLIKE_VERBS[verb]} {third}.",
                         importance=0.6, tags=("dislike", *preference_tags(obj)))
    m = re.search(r"\bI (?:don't|do not|never) (?P<verb>drink|eat|like|enjoy|use|watch|smoke) " + UNTIL_OBJ, clause)
    if m and not guarded(clause, m):
        obj = cut_object(m.group("obj"))
        verb = m.group("verb")
        if obj and not PRONOUN_OBJECTS.match(obj) and len(obj.split()) <= 6:
            third = third_person(obj)
            value = f"no {third}" if verb in ("drink", "eat", "smoke", "use", "watch") else f"dislikes {third}"
            rule.add("preference", value, f"The user doesn't {verb} {third}.", importance=0.6,
                     tags=("dislike", *preference_tags(obj)))
    m = re.search(r"\bI(?:'m| am) (?:really |very |also )?into " + UNTIL_OBJ, clause)
    if m and not guarded(clause, m):
        obj = cut_object(m.group("obj"))
        if obj and not PRONOUN_OBJECTS.match(obj) and len(obj.split()) <= 6:
            third = third_person(obj)
            rule.add("preference", third, f"The user is into {third}.", importance=0.5, tags=preference_tags(obj))


def _with_especially(obj: str, rest: str) -> str:
    m = re.match(r"\s*,\s*(?:(?:especially|particularly|mostly) (?P<a>[\w -]+?)|(?P<b>[\w -]+?) "
                 r"(?:especially|in particular))\s*(?:[.;!?]|$)", rest)
    if not m:
        return obj
    return f"{obj}, especially {(m.group('a') or m.group('b')).strip()}"


# What a liked thing is about, by its words: a tag per kind.
_TAG_WORDS = {
    "food": frozenset({"tea", "coffee", "food", "dish", "cuisine", "meat", "fish", "wine", "beer", "chocolate",
                       "spicy", "sweet", "cheese"}),
    "communication": frozenset({"answer", "answers", "response", "responses", "explanation", "explanations",
                                "example", "examples", "code", "replies", "tone"}),
    "hobby": frozenset({"cycling", "running", "hiking", "swimming", "climbing", "yoga", "football", "tennis", "sport",
                        "pottery", "reading"}),
}


def preference_tags(obj: str) -> tuple[str, ...]:
    words = {w.strip(".,;:!?'\"()") for w in obj.lower().replace("-", " ").replace("/", " ").split()}
    return tuple(tag for tag, kinds in _TAG_WORDS.items() if not kinds.isdisjoint(words))
