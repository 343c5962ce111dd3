"""What kind of being a word said before a name is ("my beagle Biscuit", "a cockatiel called Kiwi"): an animal
or not, by the packaged embedding model's nearest prototypes, so that a pet of any kind is no person.

The common pets (`vocabulary.PET_WORDS`) are known without the model; any other word is compared, as "a <word>",
with a few animals, people and things (none of them a word the trials used), and is an animal when the animals are
nearest on mean cosine by `ANIMAL_MARGIN`. With no embedding model only the common pets are animals.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from memlake.distill.offline.vocabulary import PET_WORDS
from memlake.embedding import TextEmbedder, load_embedder

# How much nearer the animals must be than people or things (all-MiniLM-L6-v2: "a beagle" 0.24, "an alpaca" 0.04,
# "a robot" and "a vacuum" below 0, measured once when this was written).
ANIMAL_MARGIN = 0.03
KIND_PROTOTYPES: dict[str, tuple[str, ...]] = {
    "animal": ("a dog", "a cat", "a horse", "a parrot", "a rabbit", "a snake", "a goldfish"),
    "person": ("a sister", "a friend", "a colleague", "a neighbour", "a child", "a teacher", "a boss"),
    "thing": ("a car", "a laptop", "a boat", "a guitar", "a bike", "a house", "a plant", "a band", "a company"),
}


@lru_cache(maxsize=1)
def packaged_embedder() -> TextEmbedder | None:
    """The packaged model on ONNX Runtime, loaded once per process (None when it cannot load)."""
    return load_embedder(backend="onnx")


@lru_cache(maxsize=4096)
def is_animal(word: str) -> bool:
    """Whether `word` ("tortoise", "beagle", "axolotl"; not "car", "friend") names a kind of animal."""
    word = word.strip().lower()
    if word in PET_WORDS or word.rstrip("s") in PET_WORDS:
        return True
    embedder = packaged_embedder()
    if embedder is None or not word.isalpha():
        return False
    kinds, prototypes = _prototypes(embedder)
    scores = prototypes @ embedder.embed([f"a {word}"])[0]
    mean = {kind: float(np.mean([s for s, k in zip(scores, kinds, strict=True) if k == kind]))
            for kind in KIND_PROTOTYPES}
    return mean["animal"] - max(mean["person"], mean["thing"]) >= ANIMAL_MARGIN


def _prototypes(embedder: TextEmbedder) -> tuple[list[str], np.ndarray]:
    kinds = [kind for kind, texts in KIND_PROTOTYPES.items() for _ in texts]
    if embedder.identity not in _KIND_VECTORS:
        texts = [text for said in KIND_PROTOTYPES.values() for text in said]
        _KIND_VECTORS[embedder.identity] = embedder.embed(texts)
    return kinds, _KIND_VECTORS[embedder.identity]


_KIND_VECTORS: dict[str, np.ndarray] = {}
