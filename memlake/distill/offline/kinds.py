"""What kind of being a word said before a name is ("my beagle Biscuit", "a cockatiel called Kiwi"): an animal
or not, by the packaged embedding model's nearest prototypes, so that a pet of any kind is no person.

The animals people keep (`memlake.nlp.names.ANIMAL_NOUNS`, the list the graph types names by) are known without the
model; any other word is compared, as "a <word>", with a few animals, people and things (none of them a word the
trials used), and is an animal when the animals are nearest on mean cosine by `ANIMAL_MARGIN`. With no embedding
model only those listed are animals.
"""

from __future__ import annotations

from functools import lru_cache

from memlake.nlp.names import ANIMAL_NOUNS
from memlake.prototypes import kind_scores, packaged_embedder

# How much nearer the animals must be than people or things (all-MiniLM-L6-v2: "a beagle" 0.24, "an alpaca" 0.04,
# "a robot" and "a vacuum" below 0, measured once when this was written).
ANIMAL_MARGIN = 0.03
KIND_PROTOTYPES: dict[str, tuple[str, ...]] = {
    "animal": ("a dog", "a cat", "a horse", "a parrot", "a rabbit", "a snake", "a goldfish"),
    "person": ("a sister", "a friend", "a colleague", "a neighbour", "a child", "a teacher", "a boss"),
    "thing": ("a car", "a laptop", "a boat", "a guitar", "a bike", "a house", "a plant", "a band", "a company"),
}


@lru_cache(maxsize=4096)
def is_animal(word: str) -> bool:
    """Whether `word` ("tortoise", "beagle", "axolotl"; not "car", "friend") names a kind of animal."""
    word = word.strip().lower()
    if word in ANIMAL_NOUNS or word.rstrip("s") in ANIMAL_NOUNS:
        return True
    embedder = packaged_embedder()
    if embedder is None or not word.isalpha():
        return False
    (mean,) = kind_scores(embedder, KIND_PROTOTYPES, embedder.embed([f"a {word}"]))
    return mean["animal"] - max(mean["person"], mean["thing"]) >= ANIMAL_MARGIN
