"""Step 4 of a search: boosts on the fused score (recency, importance, access, mention), then MMR.

Each boost multiplies the fused score by `1 + weight * part`: recency (half-life, measured from
`as_of`), importance, access count, and a mention boost when the query names the row's speaker
(chunks) or subject (facts). MMR over the stored vectors (`mmr_lambda`; 1.0 = off) is gentle:
strong MMR hurts multi-evidence recall.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from memlake.moments import utc
from memlake.search.fusion import Candidate
from memlake.search.params import IndexSpec, SearchParams

_WORD = re.compile(r"\w+", re.UNICODE)


def recency(created_at: datetime | None, as_of: datetime, half_life_days: float) -> float:
    """1.0 at `as_of`, halving every `half_life_days` away from it (before or after: a search
    as of March favours March over June as much as over January)."""
    if created_at is None or half_life_days <= 0:
        return 0.0
    age_days = abs((as_of - utc(created_at)).total_seconds()) / 86400.0
    return 0.5 ** (age_days / half_life_days)


def mentioned(name: str | None, query_words: AbstractSet[str]) -> bool:
    """Whether the query names `name` (any of its words of 3+ letters, case-insensitive)."""
    if not name:
        return False
    return any(len(w) >= 3 and w in query_words for w in _WORD.findall(name.lower()))


@dataclass(frozen=True)
class Mentions:
    """Who a query names, for the mention boost: its words, and the roles of the speakers it names."""

    words: frozenset[str]
    roles: frozenset[str] = frozenset()
    # name -> whether the query names it: a search asks of its few speakers for some three hundred rows
    _named: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)

    def names(self, name: str | None) -> bool:
        """`mentioned(name, self.words)`, worked out once per name."""
        if not name:
            return False
        known = self._named.get(name)
        if known is None:
            known = self._named[name] = mentioned(name, self.words)
        return known

    @classmethod
    def of(cls, spec: IndexSpec, query: str, rows: Iterable[Mapping[str, Any]]) -> Mentions:
        words = frozenset(_WORD.findall(query.lower()))
        if spec.mention_column is None or spec.mention_role_column is None:
            return cls(words)
        found = cls(words)
        roles = {row.get(spec.mention_role_column) for row in rows if found.names(row.get(spec.mention_column))}
        return cls(words, frozenset(role for role in roles if role), found._named)

    def of_row(self, spec: IndexSpec, row: Mapping[str, Any]) -> bool:
        if spec.mention_column is None:
            return False
        name = row.get(spec.mention_column)
        if name:
            return self.names(name)
        return spec.mention_role_column is not None and row.get(spec.mention_role_column) in self.roles


@dataclass(frozen=True)
class Scoring:
    """How one search boosts a row: who the query names, the knobs, as of when, and how often rows were used."""

    spec: IndexSpec
    mentions: Mentions
    params: SearchParams
    when: datetime
    access_counts: Mapping[str, int]

    def most_accessed(self, keys: Iterable[str]) -> int:
        return max([self.access_counts.get(k, 0) for k in keys] + [0])

    def ceiling(self, rows: Iterable[Mapping[str, Any]]) -> float | None:
        """The largest boost any of `rows` can get (each part is at most 1, importance at most its largest),
        or None when a negative importance could make a boost below 1."""
        importances = [float(row["importance"]) for row in rows if row.get("importance") is not None]
        if importances and min(importances) < 0:
            return None
        params = self.params
        return ((1.0 + params.recency_weight) * (1.0 + params.importance_weight * max([1.0, *importances]))
                * (1.0 + params.access_weight) * (1.0 + params.mention_weight))

    def boost(self, key: str, row: Mapping[str, Any], max_access: int) -> tuple[float, float, float, float, float]:
        """(boost, recency, importance, access, mention) of one row; the boost multiplies the fused score."""
        params = self.params
        rec = recency(row.get("created_at"), self.when, params.recency_half_life_days)
        importance = float(row["importance"]) if row.get("importance") is not None else 0.0
        accesses = self.access_counts.get(key, 0)
        access = math.log1p(accesses) / math.log1p(max_access) if max_access > 0 else 0.0
        mention = float(self.mentions.of_row(self.spec, row))
        boost = (
            (1.0 + params.recency_weight * rec)
            * (1.0 + params.importance_weight * importance)
            * (1.0 + params.access_weight * access)
            * (1.0 + params.mention_weight * mention)
        )
        return boost, rec, importance, access, mention


def shortlist(candidates: Mapping[str, Candidate], scoring: Scoring, keep: int) -> list[str]:
    """The keys of the `keep` best candidates by their score so far, boosts included.

    Every boost is at least 1, so the `keep`-th best score is at least the `keep`-th best unboosted one
    (`floor`): a candidate below it even at the highest boost (`ceiling`) cannot be among the best, and is
    not boosted at all (most of a search's ~250 candidates are neighbours with a small share)."""
    fused = {k: c.fused for k, c in candidates.items()}
    ceiling = scoring.ceiling(c.row for c in candidates.values())
    contenders = list(candidates)
    if ceiling is not None and len(fused) > keep:
        floor = sorted(fused.values(), reverse=True)[keep - 1]
        contenders = [k for k in contenders if fused[k] * ceiling >= floor]
    most = scoring.most_accessed(candidates)
    return sorted(contenders, key=lambda k: -fused[k] * scoring.boost(k, candidates[k].row, most)[0])[:keep]


GROUP_DECAY_UNIT = 100.0  # words


def mmr_order(
    scores: Sequence[float],
    vectors: np.ndarray | None,
    lam: float,
    k: int,
    tiebreak: Sequence[float] | None = None,
    groups: Sequence[Any] | None = None,
    group_decay: float = 1.0,
    sizes: Sequence[float] | None = None,
) -> list[int]:
    """Indices of the first `k` picks by Maximal Marginal Relevance (`mmr_picks` without their scores)."""
    return [index for index, _ in mmr_picks(scores, vectors, lam, k, tiebreak, groups, group_decay, sizes)]


def mmr_picks(
    scores: Sequence[float],
    vectors: np.ndarray | None,
    lam: float,
    k: int,
    tiebreak: Sequence[float] | None = None,
    groups: Sequence[Any] | None = None,
    group_decay: float = 1.0,
    sizes: Sequence[float] | None = None,
) -> list[tuple[int, float]]:
    """The first `k` picks by Maximal Marginal Relevance: (index, the score it was picked by), best first.

    Equal scores are ordered by `tiebreak` (higher first), then by index. With `groups` (a conversation per
    score) and `group_decay` below 1, a candidate's relevance is multiplied by `group_decay` for every
    `GROUP_DECAY_UNIT` of `sizes` (words; 1 unit a pick without them) already picked from its group, so that a
    budget of words reaches more conversations.

    A pick's score is what ordered it, in the scale of `scores`: its own score times the decay of its group, less
    `(1 - lam) / lam` times its greatest cosine similarity to a hit above it (times the best score). It never rises
    down the list (the decay only falls and the similarity only grows as picks are made), so the first pick keeps
    its own score and a user reads the list's order in its scores. Without diversity a pick's score is its own.
    """
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], -(tiebreak[i] if tiebreak else 0.0), i))
    by_vectors = lam < 1.0 and vectors is not None
    by_groups = groups is not None and group_decay < 1.0
    if not (by_vectors or by_groups) or len(order) <= 1:
        return [(i, float(scores[i])) for i in order[:k]]
    best = max(scores) or 1.0
    rel = np.asarray([scores[i] for i in order], dtype=np.float64) / best
    numbers: dict[Any, int] = {}  # a group's number, in order of first appearance
    group_of = None
    if by_groups and groups is not None:
        group_of = np.asarray([numbers.setdefault(groups[i], len(numbers)) for i in order])
    decay = np.ones(len(order))
    step = [group_decay ** ((sizes[i] if sizes is not None else GROUP_DECAY_UNIT) / GROUP_DECAY_UNIT) for i in order]
    sorted_vectors = vectors[order] if by_vectors else None  # type: ignore[index]
    max_sim = np.zeros(len(order))
    free = np.ones(len(order), dtype=bool)
    chosen: list[tuple[int, float]] = []
    while len(chosen) < min(k, len(order)):
        value = np.where(free, lam * rel * decay - (1.0 - lam) * max_sim, -np.inf)
        pick = int(np.argmax(value))  # ties go to the better-ranked one
        chosen.append((order[pick], float(value[pick]) / (lam or 1.0) * best))
        free[pick] = False
        if sorted_vectors is not None:
            max_sim = np.maximum(max_sim, sorted_vectors @ sorted_vectors[pick])
        if group_of is not None:
            decay[group_of == group_of[pick]] *= step[pick]
    return chosen
