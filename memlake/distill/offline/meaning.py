"""Facts read with their referents resolved, typed and deduplicated by meaning (the packaged embedding model).

The sentence structure types most self-statements (a plan by its "going to", a past event by its verb), but a
resolved one often says its kind only in its meaning: "The user adored "Spirited Away"" is a taste, though "adored"
is a past. Such a fact takes the type whose prototypes are nearest on average, when that is clearly nearer than the
type its structure gave; and one that says what another candidate of the conversation says (cosine >=
`SAID_AGAIN_COSINE`, the fold's duplicate rule) is merged into it. Only the facts tagged `RESOLVED` are embedded,
a few per conversation, so the distiller keeps its speed. With no embedding model the structure's type stands and
only the Jaccard rule dedupes.
"""

from __future__ import annotations

import numpy as np

from memlake.distill.models import FactCandidate
from memlake.distill.offline.readers.referents import RESOLVED
from memlake.embedding import TextEmbedder
from memlake.prototypes import kind_scores, packaged_embedder
from memlake.text import content_words

# The fold's duplicate rule (DESIGN.md, Facts): cosine >= 0.85 is the same statement.
SAID_AGAIN_COSINE = 0.85
# How much nearer another type's prototypes must be than the structure's type for the meaning to win.
TYPE_MARGIN = 0.05
# A few statements of each kind on unrelated topics (none from a benchmark), so that the kind, not the topic, is near.
PROTOTYPES: dict[str, tuple[str, ...]] = {
    "preference": ("The user loves Italian food.", "The user's favourite band is Radiohead.",
                   "The user adores old films.", "The user enjoys long walks on the beach.",
                   "The user really likes science fiction novels.", "The user prefers tea to coffee."),
    "event": ("The user went to a concert in Berlin last week.", "The user finished a marathon in April.",
              "The user visited their aunt in Lisbon.", "The user watched a documentary about whales.",
              "The user bought a new bike.", "The user attended a wedding in June."),
    "skill": ("The user can play the guitar.", "The user is learning Spanish.", "The user speaks fluent French.",
              "The user knows how to code in Python.", "The user is good at chess."),
    "commitment": ("The user plans to visit Japan next year.", "The user is going to apply for a master's degree.",
                   "The user will run a half marathon in October.", "The user intends to repaint the kitchen."),
    "fact": ("The user has two kids.", "The user works as a nurse.", "The user lives near the sea.",
             "The user values honesty.", "The user volunteers at an animal shelter.", "The user owns an old piano."),
}


def by_meaning(candidates: list[FactCandidate], embedder: TextEmbedder | None = None) -> list[FactCandidate]:
    """The candidates with each resolved fact typed by its nearest prototype and a resolved fact said again merged."""
    resolved = [i for i, c in enumerate(candidates) if RESOLVED in c.tags]
    embedder = embedder or packaged_embedder()
    if not resolved or embedder is None:
        return candidates
    # only what could be the same statement is embedded beside them: a candidate sharing two content words
    words = [content_words(c.content) for c in candidates]
    near = sorted({j for i in resolved for j in range(len(candidates)) if j == i or len(words[i] & words[j]) >= 2})
    vectors = dict(zip(near, embedder.embed([candidates[j].content for j in near]), strict=True))
    out = list(candidates)
    dropped: set[int] = set()
    for i in resolved:
        twin = next((j for j in near if j != i and j not in dropped and out[j].subject == out[i].subject
                     and float(vectors[i] @ vectors[j]) >= SAID_AGAIN_COSINE), None)
        if twin is not None:
            out[twin] = out[twin].model_copy(update={"message_ids": list(dict.fromkeys(
                out[twin].message_ids + out[i].message_ids))})
            dropped.add(i)
            continue
        out[i] = out[i].model_copy(update={"type": _nearest_type(embedder, vectors[i], out[i].type)})
    return [c for i, c in enumerate(out) if i not in dropped]


def _nearest_type(embedder: TextEmbedder, vector: np.ndarray, structure_type: str) -> str:
    (best,) = kind_scores(embedder, PROTOTYPES, vector[None, :])
    nearest = max(best, key=lambda t: best[t])
    if structure_type in best and best[nearest] - best[structure_type] >= TYPE_MARGIN:
        return nearest
    return structure_type  # (a relationship, a decision: types the prototypes do not cover stand)
