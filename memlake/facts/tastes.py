"""What a later statement of taste or diet ends of what the user said before: a like of what they disliked (or the
reverse), and the food a diet taken up leaves out ("went vegetarian" ends "eats a lot of red meat").

Pure functions over a fact's type, slot, value, tags and content, as the distiller writes them: a dislike carries
the tag "dislike" and a value "dislikes X" or "no X"; a like has the value X.
"""

from __future__ import annotations

from typing import Protocol

from memlake.facts.fold_words import words_loosely_in
from memlake.text import content_words

DISLIKE = "dislike"
_DISLIKE_PREFIXES = ("dislikes ", "no ")

_MEAT = frozenset({"meat", "meats", "steak", "steaks", "beef", "pork", "bacon", "ham", "chicken", "lamb", "sausage",
                   "sausages", "burger", "burgers", "turkey", "duck", "mince", "meatballs", "veal", "venison",
                   "salami", "pepperoni", "ribs", "chorizo", "carnivore", "brisket", "kebab", "kebabs"})
_FISH = frozenset({"fish", "salmon", "tuna", "cod", "prawns", "prawn", "shrimp", "seafood", "sushi", "anchovies",
                   "mussels", "oysters", "crab", "lobster", "sardines"})
_ANIMAL_PRODUCTS = frozenset({"cheese", "milk", "butter", "eggs", "egg", "dairy", "honey", "yoghurt", "yogurt",
                              "cream", "omelette", "omelettes"})
# What each diet leaves out: a statement of eating or liking one of these, said before the diet, no longer holds.
DIET_LEAVES_OUT: dict[str, frozenset[str]] = {
    "vegetarian": _MEAT | _FISH,
    "pescatarian": _MEAT,
    "vegan": _MEAT | _FISH | _ANIMAL_PRODUCTS,
    "plant-based": _MEAT | _FISH | _ANIMAL_PRODUCTS,
}


class Said(Protocol):
    type: str
    slot: str | None
    value: str | None
    content: str
    tags: list[str]


def taste(fact: Said) -> tuple[bool, frozenset[str]] | None:
    """Whether a slot-less preference is a like (True) or a dislike, and the words of what it is about."""
    if fact.type != "preference" or fact.slot or not fact.value:
        return None
    value = fact.value.lower()
    disliked = DISLIKE in fact.tags
    for prefix in _DISLIKE_PREFIXES:
        if disliked and value.startswith(prefix):
            value = value[len(prefix):]
    words = frozenset(content_words(value))
    return (not disliked, words) if words else None


def reverses(new: Said, old: Said) -> bool:
    """Whether `new` is the opposite taste of the same thing as `old` ("likes olives" after "dislikes olives"), or of
    the thing `old` named with more words ("no longer likes red wine" after "likes red wine with dinner"; not "dislikes
    green tea" after "likes tea")."""
    new_taste, old_taste = taste(new), taste(old)
    return (new_taste is not None and old_taste is not None and new_taste[0] != old_taste[0]
            and words_loosely_in(new_taste[1], old_taste[1]))


def left_out_by_diet(diet: Said, old: Said) -> bool:
    """Whether `diet` (a diet slot's new value) leaves out what `old` says the user eats or likes; a dislike of
    it ("doesn't eat pork") still holds."""
    leaves_out = DIET_LEAVES_OUT.get((diet.value or "").lower()) if diet.slot == "diet" else None
    if not leaves_out or old.slot or DISLIKE in old.tags:
        return False
    return not leaves_out.isdisjoint(content_words(old.content))
