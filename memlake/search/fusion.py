"""Step 3 of a search: Reciprocal Rank Fusion of the candidate lists, and the lifts turns get from their context.

`1 / (rrf_k + rank)` summed over the lists, ranks counted within each kind, each term scaled by
the hit's score relative to the best of its list. For chunks a turn ranks at its best match
(itself, a sentence or a question it replied to); window and session hits lift the turns inside
them, and the best neighbour passes on a share of its score.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import numpy as np

from memlake.search.candidates import Lists
from memlake.search.params import SearchParams, turn_key
from memlake.search.plan import Plan
from memlake.vectors import VECTOR


class GraphLinks(Protocol):
    """What search asks of the graph (memlake.graph.links.GraphLinks, built by the caller, Memory: search reads no
    lake table, and imports no graph module, which reads the facts, which search)."""

    times: Mapping[tuple[str, int], datetime | None]  # (conversation, turn index) -> when it was said

    def pulled(self, query: str, seeds: Iterable[tuple[str, int]], depth: int = 1
               ) -> list[tuple[tuple[str, int], float]]: ...

_MATCHED = "_matched"  # on a hit standing for its turn: the kind of key that matched (sentence, question)
_PART = "_part"  # on a hit standing for its turn: the key of the long turn's passage that matched, if one did
EXCERPT_KINDS = ("passage",)  # parts a hit returns in place of their whole turn (see `Candidate.excerpt_key`)


@dataclass
class Candidate:
    row: dict[str, Any]
    ranks: dict[str, int] = field(default_factory=dict)
    matched: dict[str, str] = field(default_factory=dict)  # list -> the kind of key it ranked: turn, sentence ...
    parts: dict[str, str] = field(default_factory=dict)  # list -> the key of the passage it ranked (long turns)
    rrf: float = 0.0
    lift: float = 0.0
    nearest_part: str | None = None  # a long turn's passage nearest the question
    # below 1: a turn that says only what has since been replaced, for a question about now (search.current)
    standing: float = 1.0

    @property
    def fused(self) -> float:
        """The score before boosts: fused, lifted by the turn's context, times its standing."""
        return (self.rrf + self.lift) * self.standing

    def with_row(self, row: dict[str, Any]) -> Candidate:
        """The candidate with its whole row (written out: `dataclasses.replace` costs ~5 us, a search
        replaces up to 160 rows)."""
        return Candidate(row, self.ranks, self.matched, self.parts, self.rrf, self.lift, self.nearest_part,
                         self.standing)

    def excerpt_key(self) -> str | None:
        """The key of the passage a hit on a long turn returns: the one nearest the question, else (its passages
        not fetched) the best ranked of those its lists matched."""
        if self.nearest_part is not None or not self.parts:
            return self.nearest_part
        return self.parts[min(self.parts, key=lambda name: self.ranks[name])]


@dataclass
class Fused:
    """The fused candidates (key -> candidate, in the order first found), their stored vectors, and the
    fused scores of the window (conversation, start, end) and session (conversation) hits."""

    candidates: dict[str, Candidate] = field(default_factory=dict)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    window_scores: defaultdict[tuple[str, int, int], float] = field(default_factory=lambda: defaultdict(float))
    session_scores: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))

    def add(self, plan: Plan, list_name: str, row: dict[str, Any], kind: str, rank: int, value: float) -> None:
        """One hit's RRF term: to its window, its session, or its candidate."""
        if kind == "window" and plan.spec.result_kinds:
            self.window_scores[(row["conversation_id"], int(row["turn_start"]), int(row["turn_end"]))] += value
            return
        if kind == "session" and plan.spec.result_kinds:
            if rank <= plan.params.context_candidates:
                self.session_scores[row["conversation_id"]] += value
            return
        key = row[plan.spec.key]
        matched = row.pop(_MATCHED, kind)
        part = row.pop(_PART, None)
        cand = self.candidates.get(key)
        if cand is None:
            vec = row.pop(VECTOR, None)
            if vec is not None:
                self.vectors[key] = np.asarray(vec, dtype=np.float32)
            cand = self.candidates[key] = Candidate(row=row)
        cand.ranks[list_name] = rank
        cand.matched[list_name] = matched
        if part is not None:
            cand.parts[list_name] = part
        cand.rrf += value


def fuse(plan: Plan, lists: Lists) -> Fused:
    """Every list's hits, read in order (the vector list is fused while the full-text query runs)."""
    fused = Fused()
    for list_name, hits in lists:
        for row, kind, rank, value in rrf_terms(ranked(plan, list_name, hits), list_name, plan.params):
            fused.add(plan, list_name, row, kind, rank, value)
    return fused


def ranked(plan: Plan, list_name: str, hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A list's hits in rank order, a turn's parts standing for it."""
    hits = best_first(hits, list_name, plan.spec.key)
    if list_name == "vector" and "question" in plan.parts and plan.params.question_weight != 1.0:
        hits = scaled_kind(hits, "question", plan.params.question_weight)
    if plan.parts:
        hits = parts_as_turns(hits, plan.agent_id, plan.spec.key, plan.parts)
    return hits


def rrf_terms(
    hits: list[dict[str, Any]], list_name: str, params: SearchParams
) -> Iterator[tuple[dict[str, Any], str, int, float]]:
    """(row, kind, rank, RRF term) of a list's first `params.candidates` hits of each kind; each term is
    scaled by the hit's score relative to the best of its list and kind (its score column is taken off)."""
    seen: Counter[str] = Counter()
    best: dict[str, float] = {}
    power = params.vector_score_power if list_name == "vector" else params.text_score_power
    for row in hits:
        kind = row.get("kind") or ""
        seen[kind] += 1
        rank = seen[kind]
        if rank > params.candidates:
            continue
        raw = 1.0 - float(row.pop("_distance")) if list_name == "vector" else float(row.pop("_score"))
        top = best.setdefault(kind, max(raw, 0.0))
        relative = max(raw, 0.0) / top if top > 0 else 0.0
        yield row, kind, rank, relative**power / (params.rrf_k + rank)


def scaled_kind(hits: list[dict[str, Any]], kind: str, weight: float) -> list[dict[str, Any]]:
    """A vector list with the cosine similarity of `kind`'s hits scaled by `weight`, nearest first again.

    Two questions ("What did Caroline research?", "What are you researching, Caroline?") are closer
    in a sentence model's space than any answer is to either, so a question key unscaled would
    outrank every turn's own vector.
    """
    scaled = False
    for row in hits:
        if row.get("kind") == kind:
            row["_distance"] = 1.0 - weight * (1.0 - float(row["_distance"]))
            scaled = True
    # a list without such hits (a history with no questions in it) keeps its order: no sort on every search
    return sorted(hits, key=lambda row: float(row["_distance"])) if scaled else hits


def best_first(hits: list[dict[str, Any]], list_name: str, key: str) -> list[dict[str, Any]]:
    """A list's hits best first, equal scores in key order: LanceDB returns ties in storage order, which a
    rebuilt index does not keep, and a rank decides a hit's share of the fused score."""
    column = "_distance" if list_name == "vector" else "_score"
    sign = 1.0 if list_name == "vector" else -1.0
    return sorted(hits, key=lambda row: (sign * float(row[column]), str(row[key])))


def parts_as_turns(
    hits: list[dict[str, Any]], agent_id: str, key: str, parts: tuple[str, ...]
) -> list[dict[str, Any]]:
    """A list's hits with each part (a sentence) standing for its turn, each turn at its best place
    (and the part's kind under `_MATCHED`, for the result's `vector_match` / `text_match`; a long turn's best
    passage in the list, its key under `_PART`).

    A turn's vector is the mean of everything it says, and a long turn's is cut at the model's input
    limit; the vector of one of its sentences is not. Hits come best first, so the first one of a
    turn, itself or a sentence, is its best.
    """
    out = []
    placed: dict[str, dict[str, Any]] = {}
    for row in hits:
        if row.get("kind") in parts:
            part = {_PART: row[key]} if row["kind"] in EXCERPT_KINDS else {}
            row = {**row, key: turn_key(agent_id, row["conversation_id"], int(row["turn_start"])), "kind": "turn",
                   _MATCHED: row["kind"], **part}
        elif row.get("kind") != "turn":
            out.append(row)
            continue
        first = placed.get(row[key])
        if first is None:
            placed[row[key]] = row
            out.append(row)
        elif _PART not in first and _PART in row:
            # a long turn placed by the question it answered or by itself: the passage the list found lower is
            # still the part of it that matched
            first[_PART] = row[_PART]
    return out


def add_graph_list(plan: Plan, fused: Fused, graph: GraphLinks) -> None:
    """The turns the graph pulls (memlake.graph.links: those naming the query's entities or its first
    `graph_seeds` hits'), fused as one more list: each its RRF term, scaled by its pull relative to the
    strongest and by `graph_weight`. A turn only this list found joins with a light row; the fetch gives it
    its whole row, and the search's filters apply to it as to any other."""
    params = plan.params
    turns = [c for c in fused.candidates.values() if c.row.get("kind") == "turn"]
    first = sorted(turns, key=lambda c: -c.rrf)[: params.graph_seeds]
    seeds = [(str(c.row["conversation_id"]), int(c.row["turn_start"])) for c in first]
    pulled = graph.pulled(plan.query, seeds, params.graph_depth)[: params.candidates]
    if not pulled:
        return
    strongest = pulled[0][1]
    for rank, ((conversation, index), pull) in enumerate(pulled, start=1):
        key = turn_key(plan.agent_id, conversation, index)
        cand = fused.candidates.get(key)
        if cand is None:
            cand = fused.candidates[key] = light_candidate(conversation, index, graph.times.get((conversation, index)))
        cand.ranks["graph"] = rank
        cand.rrf += params.graph_weight * (pull / strongest) / (params.rrf_k + rank)


# -- the lifts a turn gets from its context ------------------------------------------------------


def add_context_lifts(agent_id: str, params: SearchParams, fused: Fused) -> None:
    """Each turn: max(own, window view), plus the session lift and the best neighbour's share.

    Turns reached only through a window or a neighbour join the candidates
    with a light row (conversation, turn index, the time of the turn that
    brought them); the fetch gives them their whole row.
    """
    candidates = fused.candidates
    window = _window_views(agent_id, params, candidates, fused.window_scores)
    base_score = {k: max(c.rrf, window.get(k, 0.0)) for k, c in candidates.items()}
    lifts: defaultdict[str, float] = defaultdict(float, {k: v - candidates[k].rrf for k, v in base_score.items()})
    for key, cand in candidates.items():  # a session hit lifts the candidate turns inside it
        lifts[key] += params.session_weight * fused.session_scores.get(str(cand.row["conversation_id"]), 0.0)
    if params.neighbor_weight > 0:  # the best neighbour passes on a share of its score
        shares = _neighbour_shares(agent_id, candidates, base_score)
        for key, (value, conversation, index, created_at) in shares.items():
            if key not in candidates:
                candidates[key] = light_candidate(conversation, index, created_at)
            lifts[key] += params.neighbor_weight * value
    for key, value in lifts.items():
        candidates[key].lift = value


def light_candidate(conversation: str, index: int, created_at: Any) -> Candidate:
    """A turn that joins the candidates through another hit, with what its fetch needs."""
    return Candidate(row={"conversation_id": conversation, "turn_start": index, "turn_end": index,
                          "kind": "turn", "created_at": created_at})


def _window_views(
    agent_id: str,
    params: SearchParams,
    candidates: dict[str, Candidate],
    window_scores: Mapping[tuple[str, int, int], float],
) -> dict[str, float]:
    """Each turn's best window score (times `window_weight`); turns found only so join the candidates."""
    window: defaultdict[str, float] = defaultdict(float)
    times = {(c.row["conversation_id"]): c.row.get("created_at") for c in candidates.values()}
    for (conversation, start, end), value in window_scores.items():
        for index in range(start, end + 1):
            key = turn_key(agent_id, conversation, index)
            window[key] = max(window[key], params.window_weight * value)
            if key not in candidates:
                candidates[key] = light_candidate(conversation, index, times.get(conversation))
    return window


def _neighbour_shares(
    agent_id: str, candidates: Mapping[str, Candidate], base_score: Mapping[str, float]
) -> dict[str, tuple[float, str, int, Any]]:
    """Each neighbouring turn: the best score beside it, with what a light row for it needs should it be no
    candidate (its conversation, its turn index, the time of the turn that passes the score). Plain tuples:
    a search passes scores to some two hundred neighbours, most of them candidates already."""
    passed: dict[str, tuple[float, str, int, Any]] = {}
    for key, value in base_score.items():
        row = candidates[key].row
        for index in (int(row["turn_start"]) - 1, int(row["turn_end"]) + 1):
            if index < 0:
                continue
            neighbour = turn_key(agent_id, row["conversation_id"], index)
            if neighbour not in passed or passed[neighbour][0] < value:
                passed[neighbour] = (value, row["conversation_id"], index, row.get("created_at"))
    return passed
