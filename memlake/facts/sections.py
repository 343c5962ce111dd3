"""The profile section of a statement about the user that no slot, type or tag places, by its meaning.

"The user's sourdough keeps coming out dense" and "The user is working from home three days a week" are both plain
facts without a slot: their type says nothing of where a reader looks for them. Each section is described by a few
sentences saying what kind of statement it holds, and such a fact goes to the section whose descriptions are nearest
on mean cosine under the packaged embedding model (the distiller types its resolved facts by prototypes the same
way, `memlake.distill.offline.meaning`). With no model loadable, such facts stay under identity, as before.
"""

from __future__ import annotations

import re

from memlake.embedding import TextEmbedder
from memlake.prototypes import kind_scores, packaged_embedder

IDENTITY = "identity"
# What a reader of each section expects, said as what it holds rather than by examples: MiniLM is near by topic
# first, and example statements drew a fact to the section of an example on its topic ("plays guitar in a band" to
# work by "a band"); descriptions of the kind of statement placed 18 of 24 statements of a probe list written for
# this as a reader would, examples 14 (docs/decisions.md).
SECTION_PROTOTYPES: dict[str, tuple[str, ...]] = {
    IDENTITY: ("Who the user is: their age, origin, nationality, religion or personality.",
               "Where the user was born and grew up.", "A trait the user was born with."),
    "work": ("The user's job, workplace, colleagues and working hours.",
             "How the user works: office, shifts, remote days, commute.",
             "Something about the user's employer or manager."),
    "preferences": ("A habit or routine the user keeps in daily life.",
                    "Something the user likes, dislikes, eats or drinks.", "A habit the user gave up or started."),
    "people": ("Someone in the user's family or circle of friends.", "News about the user's relatives or friends."),
    "current projects": ("A hobby or project the user is working on in their free time.",
                         "A problem the user is having right now with something they own or make.",
                         "Something the user is learning or building."),
    "places": ("The user's home, flat, house or neighbourhood.", "A place the user lives or stays."),
}

# (model, content) -> section, for this process: the profile asks again for every version
_SECTIONS_SEEN: dict[tuple[str, str], str] = {}


# A trait said with "is" and a word or two, no verb ("The user is left-handed.", "The user is an introvert."): who the
# user is, by its structure. MiniLM reads such short sentences poorly (a trait came out nearest to hobbies).
_TRAIT = re.compile(r"^The user is (?:an? )?(?:[\w-]+ )?(?![\w-]+ing\b)[\w-]+\.$")


def sections_by_meaning(contents: list[str], embedder: TextEmbedder | None = None) -> dict[str, str]:
    """The section each content reads as (identity for all when no model loads)."""
    embedder = embedder or packaged_embedder()
    if embedder is None:
        return dict.fromkeys(contents, IDENTITY)
    traits = {c: IDENTITY for c in contents if _TRAIT.match(c)}
    contents = [c for c in contents if c not in traits]
    new = sorted({c for c in contents if (embedder.identity, c) not in _SECTIONS_SEEN})
    if new:
        for content, mean in zip(new, kind_scores(embedder, SECTION_PROTOTYPES, embedder.embed(new)), strict=True):
            _SECTIONS_SEEN[(embedder.identity, content)] = max(mean, key=lambda s: mean[s])
    return {**traits, **{c: _SECTIONS_SEEN[(embedder.identity, c)] for c in contents}}
