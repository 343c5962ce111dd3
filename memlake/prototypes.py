"""Kinds told apart by meaning: a text's mean cosine with a few prototype sentences of each kind, under the
packaged embedding model.

The mean over a kind's prototypes, not the nearest one: MiniLM is near by topic first, and one prototype on a
text's topic would win by topic alone. Used to type a resolved fact (`memlake.distill.offline.meaning`), to tell an
animal from a person or a thing (`memlake.distill.offline.kinds`) and to place a fact in a profile section
(`memlake.facts.sections`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

import numpy as np

from memlake.embedding import TextEmbedder, load_embedder

Prototypes = Mapping[str, Sequence[str]]


@lru_cache(maxsize=1)
def packaged_embedder() -> TextEmbedder | None:
    """The packaged model on ONNX Runtime, loaded once per process (None when it cannot load)."""
    return load_embedder(backend="onnx")


def kind_scores(embedder: TextEmbedder, prototypes: Prototypes, vectors: np.ndarray) -> list[dict[str, float]]:
    """For each of `vectors` (the embedder's, normalised), its mean cosine with each kind's prototypes."""
    kinds, prototype_vectors = _embedded(embedder, prototypes)
    out = []
    for vector in vectors:
        scores = prototype_vectors @ vector
        out.append({kind: float(np.mean([s for s, k in zip(scores, kinds, strict=True) if k == kind]))
                    for kind in prototypes})
    return out


# (model identity, every prototype text) -> (the kind of each prototype, their vectors), for this process
_EMBEDDED: dict[tuple[str, tuple[str, ...]], tuple[list[str], np.ndarray]] = {}


def _embedded(embedder: TextEmbedder, prototypes: Prototypes) -> tuple[list[str], np.ndarray]:
    texts = tuple(text for said in prototypes.values() for text in said)
    key = (embedder.identity, texts)
    if key not in _EMBEDDED:
        _EMBEDDED[key] = ([kind for kind, said in prototypes.items() for _ in said], embedder.embed(list(texts)))
    return _EMBEDDED[key]
