"""Hybrid search over a LanceDB index: vector + full text, fused, boosted, diversified, expanded.

Steps, for one agent (always) and optional filters:
1. candidates: the nearest rows by vector and the best BM25 rows (one query
   each, run side by side, over the result kind and, for chunks, the window
   and session chunks too);
2. Reciprocal Rank Fusion: `1 / (rrf_k + rank)` summed over the lists, ranks
   counted within each kind, each term scaled by the hit's score relative to
   the best of its list (so a lone exact match is not outvoted by a crowd of
   weak ones). For chunks a turn's rank in a list is that of its best match,
   itself, one of its sentences (`sentence_keys`) or a question it replied to
   (`question_keys`; in the vector list a question's cosine similarity is
   scaled by `question_weight` first); it is then as relevant as
   its best view: its own fused score, or `window_weight` x the best window
   chunk it sits in; then it gets
   `neighbor_weight` x the best score of the turns just before and after it
   (the answer often sits in the reply to the turn that matches) and, if
   `session_weight` > 0, a lift from the session chunk's rank (none when the
   query names an identifier: `names_identifier`);
3. boosts, multiplied onto the fused score, each `1 + weight * part`: recency
   (half-life, measured from `as_of`), importance, access count, and a mention
   boost when the query names the row's speaker (chunks) or subject (facts);
4. MMR over the stored vectors (`mmr_lambda`; 1.0 = off);
5. window expansion: each hit gets its adjacent turns as `context`.

With no query vector (no model loadable, or the index was built by another
model) only the full-text list is used and every row says `mode = full_text`.

A long-lived reader (`Memory`) holds a snapshot of the agent's index rows
(`VectorStore.snapshot`): then the vector list is an exact scan in memory (an
in-memory IVF for an agent above ANN_MIN_ROWS), the BM25 list is the one
LanceDB query, and every other row is a lookup. Without one (an agent larger
than `search_snapshot_rows`, a one-off search) every step queries LanceDB; the
results are the same either way.
Pure domain code: no Dagster.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import numpy as np
import polars as pl

from memlake.access import AccessLog
from memlake.chunks import chunk_id
from memlake.embedding import TextEmbedder, why_unavailable
from memlake.index_rows import (  # noqa: F401  (callers import them from here)
    EPISODE_INDEX_SCHEMA,
    FACT_INDEX_SCHEMA,
    episode_index_rows,
    fact_index_rows,
)
from memlake.moments import parse_as_of
from memlake.schemas import CHUNK_INDEX, EPISODE_INDEX, FACT_INDEX
from memlake.text import content_words
from memlake.vectors import ANN_MIN_ROWS, VECTOR, Filters, Snapshot, VectorStore, key_scope

# The vector and full-text lists of one search run side by side (LanceDB releases the GIL).
_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="memlake-search")

HYBRID = "hybrid"
FULL_TEXT = "full_text"
VECTOR_ONLY = "vector"
_WORD = re.compile(r"\w+", re.UNICODE)
_MATCHED = "_matched"  # on a hit standing for its turn: the kind of key that matched (sentence, question)


@dataclass(frozen=True)
class SearchParams:
    """Knobs of one search; defaults come from Settings (see `from_settings`)."""

    k: int = 10
    candidates: int = 50
    rrf_k: int = 60
    lists: tuple[str, ...] = ("vector", "text")  # which candidate lists to fuse
    session_weight: float = 0.0
    window_weight: float = 0.0
    sentence_keys: bool = True  # a turn's sentences rank for it (where the index has sentence chunks)
    question_keys: bool = True  # the questions a turn replies to rank for it (where the index has them)
    question_weight: float = 1.0  # a question key's cosine similarity is scaled by this in the vector list
    neighbor_weight: float = 0.0
    context_candidates: int = 10
    recency_half_life_days: float = 180.0
    recency_weight: float = 0.0
    importance_weight: float = 0.0
    access_weight: float = 0.0
    mention_weight: float = 0.0
    text_score_power: float = 1.0  # 0 = plain RRF; 1 = each term scaled by score / best score of its list
    vector_score_power: float = 1.0
    mmr_lambda: float = 1.0
    window_turns: int = 1
    exact: bool | None = None  # None: exact scan unless the agent is large and the table has an ANN index

    def __post_init__(self) -> None:
        for name in ("k", "candidates", "context_candidates"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a whole number of at least 1, got {value!r}")
        for name in _NUMBER_FIELDS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{name} must be a number, got {value!r}")
        if not 0.0 <= self.mmr_lambda <= 1.0:
            raise ValueError(f"mmr_lambda must be in [0, 1], got {self.mmr_lambda!r}")
        for name in ("rrf_k", "recency_half_life_days"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be above 0, got {getattr(self, name)!r}")
        # a negative weight would turn a lift into a penalty (and scores below 0): never what a setting means
        for name in (*_WEIGHT_FIELDS, "window_turns", "text_score_power", "vector_score_power"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be at least 0, got {getattr(self, name)!r}")

    @classmethod
    def from_settings(cls, settings: Any, **overrides: Any) -> SearchParams:
        """The settings' knobs, with `overrides` (None: keep the setting) on top; built and checked once."""
        unknown = sorted(set(overrides) - set(_FIELDS))
        if unknown:
            raise ValueError(f"unknown search setting {', '.join(unknown)}: one of {', '.join(_FIELDS)}")
        knobs = dict(
            candidates=settings.search_candidates,
            rrf_k=settings.rrf_k,
            session_weight=settings.search_session_weight,
            window_weight=settings.search_window_weight,
            neighbor_weight=settings.search_neighbor_weight,
            recency_half_life_days=settings.recency_half_life_days,
            recency_weight=settings.search_recency_weight,
            importance_weight=settings.search_importance_weight,
            access_weight=settings.search_access_weight,
            mention_weight=settings.search_mention_weight,
            question_weight=settings.search_question_weight,
            mmr_lambda=settings.mmr_lambda,
            window_turns=settings.window_turns,
        )
        return cls(**{**knobs, **{k: v for k, v in overrides.items() if v is not None}})


_FIELDS = [f.name for f in fields(SearchParams)]
_NUMBER_FIELDS = [f.name for f in fields(SearchParams) if f.type in ("int", "float")]
_WEIGHT_FIELDS = [name for name in _NUMBER_FIELDS if name.endswith("_weight")]


@dataclass(frozen=True)
class IndexSpec:
    """How one LanceDB table is searched: its key, its result and context kinds, what a mention matches."""

    table: str
    key: str
    result_kinds: tuple[str, ...] = ()  # empty: every row is a result
    part_kinds: tuple[str, ...] = ()  # parts of one result row (a turn's sentences): a hit counts for it
    context_kinds: tuple[str, ...] = ()
    expand_windows: bool = False
    extra_columns: tuple[str, ...] = ()
    mention_column: str | None = None
    # a row whose mention column is empty counts as mentioned when this column holds the value of a mentioned
    # row's (a turn with no speaker named, of the role a named speaker has: the same person in another export)
    mention_role_column: str | None = None
    base_filter: tuple[str, ...] = ()  # trusted clauses always applied (e.g. only active facts)


@dataclass
class _Candidate:
    row: dict[str, Any]
    ranks: dict[str, int] = field(default_factory=dict)
    matched: dict[str, str] = field(default_factory=dict)  # list -> the kind of key it ranked: turn, sentence ...
    rrf: float = 0.0
    lift: float = 0.0


_TOKEN = re.compile(r"[\w-]+", re.UNICODE)
_ORDINAL = re.compile(r"\d+(st|nd|rd|th|s)", re.IGNORECASE)


def names_identifier(query: str) -> bool:
    """Whether the query names an identifier: a token mixing letters and digits (ORD-58213, A320), a
    number of five digits or more, or a code symbol (snake_case, camelCase). Ordinals, decades and
    short numbers (18th, 1990s, 2023) are words."""
    for token in _TOKEN.findall(query):
        digits = sum(c.isdigit() for c in token)
        if digits >= 5 or (digits and any(c.isalpha() for c in token) and not _ORDINAL.fullmatch(token)):
            return True
        if "_" in token.strip("_") or any(_camel_case(part) for part in token.split("-")):
            return True
    return False


def _camel_case(word: str) -> bool:
    return word[:1].islower() and any(c.isupper() for c in word[1:])


@lru_cache(maxsize=1 << 16)
def turn_key(agent_id: str, conversation_id: str, index: int) -> str:
    """The chunk id of one turn; remembered, as a search asks for the same neighbours again and again."""
    return chunk_id(agent_id, conversation_id, "turn", index, index)


def recency(created_at: datetime | None, as_of: datetime, half_life_days: float) -> float:
    """1.0 at `as_of`, halving every `half_life_days` away from it (before or after: a search
    as of March favours March over June as much as over January)."""
    if created_at is None or half_life_days <= 0:
        return 0.0
    created = created_at.replace(tzinfo=UTC) if created_at.tzinfo is None else created_at
    age_days = abs((as_of - created).total_seconds()) / 86400.0
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

    @classmethod
    def of(cls, spec: IndexSpec, query: str, rows: Iterable[Mapping[str, Any]]) -> Mentions:
        words = frozenset(_WORD.findall(query.lower()))
        if spec.mention_column is None or spec.mention_role_column is None:
            return cls(words)
        roles = {row.get(spec.mention_role_column) for row in rows if mentioned(row.get(spec.mention_column), words)}
        return cls(words, frozenset(role for role in roles if role))

    def of_row(self, spec: IndexSpec, row: Mapping[str, Any]) -> bool:
        if spec.mention_column is None:
            return False
        name = row.get(spec.mention_column)
        if name:
            return mentioned(name, self.words)
        return spec.mention_role_column is not None and row.get(spec.mention_role_column) in self.roles


def _boost(
    spec: IndexSpec,
    row: Mapping[str, Any],
    key: str,
    mentions: Mentions,
    params: SearchParams,
    when: datetime,
    access_counts: Mapping[str, int],
    max_access: int,
) -> tuple[float, float, float, float, float]:
    """(boost, recency, importance, access, mention) of one row; the boost multiplies the fused score."""
    rec = recency(row.get("created_at"), when, params.recency_half_life_days)
    importance = float(row["importance"]) if row.get("importance") is not None else 0.0
    accesses = access_counts.get(key, 0)
    access = math.log1p(accesses) / math.log1p(max_access) if max_access > 0 else 0.0
    mention = float(mentions.of_row(spec, row))
    boost = (
        (1.0 + params.recency_weight * rec)
        * (1.0 + params.importance_weight * importance)
        * (1.0 + params.access_weight * access)
        * (1.0 + params.mention_weight * mention)
    )
    return boost, rec, importance, access, mention


def _scaled_kind(hits: list[dict[str, Any]], kind: str, weight: float) -> list[dict[str, Any]]:
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


def _best_first(hits: list[dict[str, Any]], list_name: str, key: str) -> list[dict[str, Any]]:
    """A list's hits best first, equal scores in key order: LanceDB returns ties in storage order, which a
    rebuilt index does not keep, and a rank decides a hit's share of the fused score."""
    column = "_distance" if list_name == "vector" else "_score"
    sign = 1.0 if list_name == "vector" else -1.0
    return sorted(hits, key=lambda row: (sign * float(row[column]), str(row[key])))


def _parts_as_turns(
    hits: list[dict[str, Any]], agent_id: str, key: str, parts: tuple[str, ...]
) -> list[dict[str, Any]]:
    """A list's hits with each part (a sentence) standing for its turn, each turn at its best place
    (and the part's kind under `_MATCHED`, for the result's `vector_match` / `text_match`).

    A turn's vector is the mean of everything it says, and a long turn's is cut at the model's input
    limit; the vector of one of its sentences is not. Hits come best first, so the first one of a
    turn, itself or a sentence, is its best.
    """
    out = []
    placed: set[str] = set()
    for row in hits:
        if row.get("kind") in parts:
            row = {**row, key: turn_key(agent_id, row["conversation_id"], int(row["turn_start"])), "kind": "turn",
                   _MATCHED: row["kind"]}
        elif row.get("kind") != "turn":
            out.append(row)
            continue
        if row[key] not in placed:
            placed.add(row[key])
            out.append(row)
    return out


def mmr_order(
    scores: Sequence[float], vectors: np.ndarray | None, lam: float, k: int, tiebreak: Sequence[float] | None = None
) -> list[int]:
    """Indices of the first `k` picks by Maximal Marginal Relevance (scores normalised to 0..1).

    Equal scores are ordered by `tiebreak` (higher first), then by index.
    """
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], -(tiebreak[i] if tiebreak else 0.0), i))
    if lam >= 1.0 or vectors is None or len(order) <= 1:
        return order[:k]
    vectors = vectors[order]
    rel = np.asarray([scores[i] for i in order], dtype=np.float64) / (max(scores) or 1.0)
    max_sim = np.zeros(len(order))
    free = np.ones(len(order), dtype=bool)
    chosen: list[int] = []
    while len(chosen) < min(k, len(order)):
        value = np.where(free, lam * rel - (1.0 - lam) * max_sim, -np.inf)
        best = int(np.argmax(value))  # ties go to the better-ranked one
        chosen.append(order[best])
        free[best] = False
        max_sim = np.maximum(max_sim, vectors @ vectors[best])
    return chosen


class Searcher:
    """Hybrid search over one home's LanceDB tables."""

    def __init__(self, store: VectorStore, embedder: TextEmbedder | None, turns: VectorStore | None = None) -> None:
        self.store = store
        self.embedder = embedder
        self.turns = turns or store  # where the turns of episode and fact hits are read (the home's chunk index)

    def query_vector(
        self, spec: IndexSpec, query: str, built_with: str | None = None
    ) -> tuple[np.ndarray | None, str | None]:
        """The query's vector, or None and why not (`built_with`: the index's embedder, if known)."""
        built_with = built_with or self.store.embedder_of(spec.table)
        if self.embedder is None:
            why = why_unavailable()
            return None, f"no embedding model loadable{f' ({why})' if why else ''}: full-text search only"
        if built_with != self.embedder.name:
            return None, f"index built with {built_with!r}, query model is {self.embedder.name!r}: full-text only"
        return self.embedder.embed([query])[0], None

    def search(
        self,
        spec: IndexSpec,
        query: str,
        agent_id: str,
        params: SearchParams,
        filters: Filters | None = None,
        as_of: datetime | str | None = None,
        access_counts: Mapping[str, int] | None = None,
        query_vector: np.ndarray | None = None,
    ) -> pl.DataFrame:
        """The `params.k` best rows of one agent for `query`, best first (see the module doc)."""
        filters = filters or Filters()
        if filters.roles and "role" not in spec.extra_columns:  # before LanceDB says it in its own words
            raise ValueError(f"a role filter applies to turns (scope chunks); {spec.table} rows have no role")
        when = parse_as_of(as_of, end_of_day=True)  # a day, as in fact reads: as of its end
        if not self.store.exists(spec.table):
            return empty_result(spec)
        base = replace(filters, extra=(*filters.extra, *spec.base_filter))
        if params.k > params.candidates:  # each list is asked for at least the rows the caller wants
            params = replace(params, candidates=params.k)
        lifts = (params.session_weight, params.window_weight, params.neighbor_weight)
        if any(lifts) and names_identifier(query):
            # an identifier is matched on its own: no turn rises on what its session, window or neighbour
            # matched, else a turn beside the exact one, or a session of near-miss numbers, outranks it
            params = replace(params, session_weight=0.0, window_weight=0.0, neighbor_weight=0.0)
        context = [kind for kind, weight in (("window", params.window_weight), ("session", params.session_weight))
                   if weight > 0 and kind in spec.context_kinds]
        switched_off = {"sentence": not params.sentence_keys, "question": not params.question_keys}
        parts = tuple(kind for kind in spec.part_kinds if not switched_off.get(kind, False))
        kinds = (*spec.result_kinds, *parts, *context) if spec.result_kinds else ()
        group = replace(base, kinds=kinds) if kinds else base
        # one query per list for every kind, ranks counted within each kind; a turn's parts (its sentences,
        # the questions it answered) share one count, as they all stand for turns (a share more for
        # question keys cost a 100k-chunk search ~0.4 ms of CPU for 0.3 points of LoCoMo recall)
        shares = len(spec.result_kinds) + bool(parts) + len([kind for kind in context if kind != "session"])
        limit = params.candidates * max(1, shares) + (params.context_candidates if "session" in context else 0)
        use_text = "text" in params.lists
        # The full-text query starts on the snapshot this reader already holds, before the table's
        # version is checked and the query embedded; a new version discards it and asks again.
        held = None if filters.extra else self.store.held_snapshot(spec.table, agent_id, spec.base_filter)
        early_text = held.submit_text(query, limit, group) if held is not None and use_text else None
        # the agent's rows in memory (None: too many for the cache, or caller clauses only LanceDB can apply)
        snapshot = None if filters.extra else self.store.snapshot(spec.table, agent_id, spec.base_filter)
        if snapshot is not None and snapshot.size == 0:
            return empty_result(spec)
        note = None
        # a full-text-only search (the BM25 baseline) ignores a query vector passed in
        vector = query_vector if "vector" in params.lists else None
        if vector is None and "vector" in params.lists:
            vector, note = self.query_vector(spec, query, snapshot.embedder if snapshot is not None else None)
        mode = HYBRID if vector is not None and use_text else VECTOR_ONLY if vector is not None else FULL_TEXT
        if vector is None and not use_text:
            return empty_result(spec)
        columns = self._columns(spec)
        has_vectors = snapshot.vectors is not None if snapshot is not None else self.store.has_vectors(spec.table)
        stored = [VECTOR] if has_vectors else []

        # chunks: light candidate lists, then one fetch of every row needed; others: whole rows at once
        light = [spec.key, "kind", "conversation_id", "turn_start", "turn_end", "created_at"]
        light += [column for column in (spec.mention_column, spec.mention_role_column) if column]
        listed = light if spec.result_kinds else [*columns, *stored]
        lists: Iterable[tuple[str, list[dict[str, Any]]]]
        if snapshot is not None:
            text_job = early_text if snapshot is held else None
            lists = self._snapshot_lists(
                snapshot, vector, query if use_text else None, limit, group, listed, params, text_job
            )
        else:
            jobs = {}
            if vector is not None:
                jobs["vector"] = _POOL.submit(
                    self.store.search_vector, spec.table, agent_id, vector, limit, group, columns=listed,
                    exact=params.exact,
                )
            if use_text:
                jobs["text"] = _POOL.submit(
                    self.store.search_text, spec.table, agent_id, query, limit, group, columns=listed
                )
            lists = [(name, job.result().to_dicts()) for name, job in jobs.items()]

        candidates: dict[str, _Candidate] = {}
        vectors: dict[str, np.ndarray] = {}
        window_scores: defaultdict[tuple[str, int, int], float] = defaultdict(float)  # (conv, start, end) -> fused
        session_scores: defaultdict[str, float] = defaultdict(float)  # conversation -> fused
        for list_name, hits in lists:
            hits = _best_first(hits, list_name, spec.key)
            if list_name == "vector" and "question" in parts and params.question_weight != 1.0:
                hits = _scaled_kind(hits, "question", params.question_weight)
            if parts:
                hits = _parts_as_turns(hits, agent_id, spec.key, parts)
            seen: Counter[str] = Counter()
            best: dict[str, float] = {}
            power = params.vector_score_power if list_name == "vector" else params.text_score_power
            for row in hits:
                kind = row.get("kind") or ""
                seen[kind] += 1
                rank = seen[kind]
                if rank > params.candidates:
                    continue
                # RRF, each term scaled by the hit's score relative to the best of its list and kind
                raw = 1.0 - float(row.pop("_distance")) if list_name == "vector" else float(row.pop("_score"))
                top = best.setdefault(kind, max(raw, 0.0))
                relative = max(raw, 0.0) / top if top > 0 else 0.0
                value = relative**power / (params.rrf_k + rank)
                if kind == "window" and spec.result_kinds:
                    window_scores[(row["conversation_id"], int(row["turn_start"]), int(row["turn_end"]))] += value
                    continue
                if kind == "session" and spec.result_kinds:
                    if rank <= params.context_candidates:
                        session_scores[row["conversation_id"]] += value
                    continue
                key = row[spec.key]
                matched = row.pop(_MATCHED, kind)
                cand = candidates.get(key)
                if cand is None:
                    vec = row.pop(VECTOR, None)
                    if vec is not None:
                        vectors[key] = np.asarray(vec, dtype=np.float32)
                    cand = candidates[key] = _Candidate(row=row)
                cand.ranks[list_name] = rank
                cand.matched[list_name] = matched
                cand.rrf += value

        mentions = Mentions.of(spec, query, (c.row for c in candidates.values()))
        turns: dict[str, dict[str, Any]] = {}
        if spec.result_kinds:
            self._turn_scores(agent_id, params, candidates, window_scores, session_scores)
            # only the best rows (by the score so far, boosts included) are fetched whole
            keep = max(4 * params.k, params.k + 30)
            counts = access_counts or {}
            most = max([counts.get(k, 0) for k in candidates] + [0])
            ranked = sorted(
                candidates,
                key=lambda k: -(candidates[k].rrf + candidates[k].lift)
                * _boost(spec, candidates[k].row, k, mentions, params, when, counts, most)[0],
            )[:keep]
            turns = self._fetch(
                spec, agent_id, {k: candidates[k].row for k in ranked}, params.window_turns,
                [*columns, *stored], vectors, snapshot,
            )
            eligible = replace(base, kinds=spec.result_kinds)
            candidates = {
                k: replace(candidates[k], row=turns[k]) for k in ranked if k in turns and eligible.accepts(turns[k])
            }
        if not candidates:
            return empty_result(spec)
        found = self._finish(
            spec, mentions, candidates, vectors, turns, params, when, mode, note, access_counts or {}
        )
        return found if spec.result_kinds else self._messages_best_first(found, agent_id, query, vector)

    def _messages_best_first(
        self, found: pl.DataFrame, agent_id: str, query: str, vector: np.ndarray | None
    ) -> pl.DataFrame:
        """Episode and fact hits with each row's message_ids best match first: by the cosine of each message's
        turn vector to the query's, or with no vectors by the query words the turn holds; ties and messages
        whose turn is not indexed keep their order, after the others."""
        conversations = sorted({c for c in found["conversation_id"].to_list() if c})
        ids = {m for row in found["message_ids"].to_list() for m in row}
        if len(ids) < 2 or not conversations or not self.turns.exists(CHUNK_INDEX):
            return found
        with_vectors = vector is not None and self.turns.has_vectors(CHUNK_INDEX)
        rows = self.turns.rows(
            CHUNK_INDEX, agent_id, Filters(conversation_ids=tuple(conversations), kinds=("turn",)),
            columns=["message_ids", "text", *([VECTOR] if with_vectors else [])],
        )
        words = content_words(query)
        match: dict[str, float] = {}
        for row in rows.iter_rows(named=True):
            if vector is not None and with_vectors and row[VECTOR] is not None:
                turn = np.asarray(row[VECTOR], dtype=np.float32)
                value = float(turn @ vector) / (float(np.linalg.norm(turn) * np.linalg.norm(vector)) or 1.0)
            else:
                value = float(len(words & content_words(row["text"])))
            for message_id in row["message_ids"] or []:
                match[message_id] = value
        ordered = [
            sorted(row, key=lambda m: (m not in match, -match.get(m, 0.0))) for row in found["message_ids"].to_list()
        ]
        return found.with_columns(pl.Series("message_ids", ordered, dtype=found.schema["message_ids"]))

    def _turn_scores(
        self,
        agent_id: str,
        params: SearchParams,
        candidates: dict[str, _Candidate],
        window_scores: Mapping[tuple[str, int, int], float],
        session_scores: Mapping[str, float],
    ) -> None:
        """Each turn: max(own, window view), plus the session lift and the best neighbour's share.

        Turns reached only through a window or a neighbour join the candidates
        with a light row (conversation, turn index, the time of the turn that
        brought them); the fetch gives them their whole row.
        """

        def light(conversation: str, index: int, created_at: Any) -> _Candidate:
            return _Candidate(row={"conversation_id": conversation, "turn_start": index, "turn_end": index,
                                   "kind": "turn", "created_at": created_at})

        window: defaultdict[str, float] = defaultdict(float)
        times = {(c.row["conversation_id"]): c.row.get("created_at") for c in candidates.values()}
        for (conversation, start, end), value in window_scores.items():
            for index in range(start, end + 1):
                key = turn_key(agent_id, conversation, index)
                window[key] = max(window[key], params.window_weight * value)
                if key not in candidates:
                    candidates[key] = light(conversation, index, times.get(conversation))
        base_score = {k: max(c.rrf, window.get(k, 0.0)) for k, c in candidates.items()}
        lifts: defaultdict[str, float] = defaultdict(float, {k: v - candidates[k].rrf for k, v in base_score.items()})
        for key, cand in candidates.items():  # a session hit lifts the candidate turns inside it
            lifts[key] += params.session_weight * session_scores.get(str(cand.row["conversation_id"]), 0.0)
        if params.neighbor_weight > 0:  # the best neighbour passes on a share of its score
            passed: dict[str, tuple[float, _Candidate]] = {}
            for key, value in base_score.items():
                row = candidates[key].row
                for index in (int(row["turn_start"]) - 1, int(row["turn_end"]) + 1):
                    if index < 0:
                        continue
                    neighbour = turn_key(agent_id, row["conversation_id"], index)
                    if neighbour not in passed or passed[neighbour][0] < value:
                        passed[neighbour] = (value, light(row["conversation_id"], index, row.get("created_at")))
            for key, (value, stub) in passed.items():
                candidates.setdefault(key, stub)
                lifts[key] += params.neighbor_weight * value
        for key, value in lifts.items():
            candidates[key].lift = value

    # -- internals ------------------------------------------------------------------------

    @staticmethod
    def _snapshot_lists(
        snapshot: Snapshot,
        vector: np.ndarray | None,
        text: str | None,
        limit: int,
        group: Filters,
        columns: list[str],
        params: SearchParams,
        text_job: Future[tuple[np.ndarray, np.ndarray]] | None = None,
    ) -> Iterator[tuple[str, list[dict[str, Any]]]]:
        """The candidate lists of one search from the agent's snapshot, as LanceDB would give them:
        the vector list first, then the full-text one (the order fusion reads them in).

        The full-text query (`text_job` if the caller started it already) runs in
        LanceDB on its event loop while the vector search runs here and its list
        is fused: exact, or through the snapshot's IVF lists for an agent large
        enough to use an ANN index when at least ANN_MIN_ROWS rows pass the
        filters (LanceDB's own ANN index only when one is forced on a snapshot
        without lists).
        """

        def rows(found: tuple[np.ndarray, np.ndarray], value: str) -> list[dict[str, Any]]:
            positions, values = found
            taken = snapshot.take(positions, columns)
            for row, number in zip(taken, values.tolist(), strict=True):
                row[value] = number
            return taken

        approximate = vector is not None and (snapshot.ann if params.exact is None else not params.exact)
        in_lancedb = approximate and snapshot.ivf_centroids is None
        jobs = {}
        if in_lancedb and vector is not None:
            jobs["vector"] = _POOL.submit(snapshot.search_ann, vector, limit, group)
        if text is not None:
            jobs["text"] = text_job or snapshot.submit_text(text, limit, group)
        if vector is not None and not in_lancedb:
            keep = snapshot.mask(group)
            if approximate and int(keep.sum()) >= ANN_MIN_ROWS:
                yield "vector", rows(snapshot.search_ivf(vector, limit, keep), "_distance")
            else:
                yield "vector", rows(snapshot.nearest(vector, limit, keep), "_distance")
        for name, job in jobs.items():  # the caller fuses the vector list while these run
            yield name, rows(job.result(), "_distance" if name == "vector" else "_score")

    @staticmethod
    def _columns(spec: IndexSpec) -> list[str]:
        base = ["agent_id", "conversation_id", "message_ids", "created_at", "text", "importance", "kind"]
        if spec.result_kinds:
            base += ["turn_start", "turn_end"]
        return list(dict.fromkeys([spec.key, *base, *spec.extra_columns]))

    def _fetch(
        self,
        spec: IndexSpec,
        agent_id: str,
        light: dict[str, dict[str, Any]],
        reach: int,
        columns: list[str],
        vectors: dict[str, np.ndarray],
        snapshot: Snapshot | None = None,
    ) -> dict[str, dict[str, Any]]:
        """The whole rows of `light`'s keys and of the turns `reach` around each (context): from the
        snapshot, else one LanceDB fetch."""
        wanted = set(light)
        for row in light.values():
            for index in range(int(row["turn_start"]) - reach, int(row["turn_end"]) + reach + 1):
                if index >= 0:
                    wanted.add(turn_key(agent_id, row["conversation_id"], index))
        turns: dict[str, dict[str, Any]] = {}
        if wanted:
            if snapshot is not None:
                fetched = list(snapshot.by_keys(wanted, columns).values())
            else:
                fetched = self.store.rows(
                    spec.table,
                    agent_id,
                    Filters(extra=(key_scope(spec.key, wanted),)),
                    columns=columns,
                ).to_dicts()
            for row in fetched:
                vec = row.pop(VECTOR, None)
                if vec is not None:
                    vectors[row[spec.key]] = np.asarray(vec, dtype=np.float32)
                turns[row[spec.key]] = row
        return turns

    def _finish(
        self,
        spec: IndexSpec,
        mentions: Mentions,
        candidates: dict[str, _Candidate],
        vectors: dict[str, np.ndarray],
        turns: dict[str, dict[str, Any]],
        params: SearchParams,
        when: datetime,
        mode: str,
        note: str | None,
        access_counts: Mapping[str, int],
    ) -> pl.DataFrame:
        keys = list(candidates)
        max_access = max([access_counts.get(k, 0) for k in keys] + [0])
        parts = []
        for key in keys:
            cand = candidates[key]
            boost, rec, importance, access, mention = _boost(
                spec, cand.row, key, mentions, params, when, access_counts, max_access
            )
            fused = cand.rrf + cand.lift
            parts.append((fused * boost, fused, rec, importance, access, mention, boost))
        scores = [p[0] for p in parts]
        matrix = None
        if params.mmr_lambda < 1.0 and all(k in vectors for k in keys):
            matrix = np.stack([vectors[k] for k in keys])
        out = []
        own = [candidates[k].rrf for k in keys]
        for rank, i in enumerate(mmr_order(scores, matrix, params.mmr_lambda, params.k, own), start=1):
            key = keys[i]
            score, fused, rec, importance, access, mention, boost = parts[i]
            cand = candidates[key]
            row = {
                "rank": rank,
                "score": score,
                "text": cand.row["text"],
                "agent_id": cand.row["agent_id"],
                "conversation_id": cand.row.get("conversation_id"),
                "message_ids": list(cand.row.get("message_ids") or []),
                "created_at": cand.row.get("created_at"),
                "kind": cand.row.get("kind"),
                "key": key,
                "rrf": cand.rrf,
                "vector_rank": cand.ranks.get("vector"),
                "text_rank": cand.ranks.get("text"),
                "vector_match": cand.matched.get("vector") or None,
                "text_match": cand.matched.get("text") or None,
                "context_lift": cand.lift,
                "recency": rec,
                "importance": importance,
                "access": access,
                "mention": mention,
                "boost": boost,
                "mode": mode,
                "note": note,
                "turn_start": cand.row.get("turn_start"),
                "turn_end": cand.row.get("turn_end"),
            }
            row.update(self._context(spec, cand.row, turns, params.window_turns))
            row.update({c: cand.row.get(c) for c in spec.extra_columns})
            out.append(row)
        if not out:
            return empty_result(spec)
        # types given up front: polars then skips inferring them (~0.8 ms a search)
        return pl.DataFrame(out, schema=result_schema(spec), strict=False)

    @staticmethod
    def _context(
        spec: IndexSpec, row: dict[str, Any], turns: dict[str, dict[str, Any]], window: int
    ) -> dict[str, Any]:
        """The hit with its `window` adjacent turns before and after, as text and message ids."""
        if not spec.expand_windows or window <= 0 or row.get("turn_start") is None or row.get("kind") != "turn":
            return {"context": row["text"], "context_message_ids": list(row.get("message_ids") or [])}
        parts: list[str] = []
        ids: list[str] = []
        for index in range(int(row["turn_start"]) - window, int(row["turn_end"]) + window + 1):
            turn = turns.get(turn_key(row["agent_id"], row["conversation_id"], index))
            if turn is not None:
                parts.append(turn["text"])
                ids.extend(turn.get("message_ids") or [])
        return {"context": "\n".join(parts), "context_message_ids": ids}


def _result_schema() -> dict[str, Any]:
    import polars as pl

    return {
        "rank": pl.Int32,
        "score": pl.Float64,
        "text": pl.String,
        "agent_id": pl.String,
        "conversation_id": pl.String,
        "message_ids": pl.List(pl.String),
        "created_at": pl.Datetime("us", "UTC"),
        "kind": pl.String,
        "key": pl.String,
        "rrf": pl.Float64,
        "vector_rank": pl.Int32,
        "text_rank": pl.Int32,
        "vector_match": pl.String,
        "text_match": pl.String,
        "context_lift": pl.Float64,
        "recency": pl.Float64,
        "importance": pl.Float64,
        "access": pl.Float64,
        "mention": pl.Float64,
        "boost": pl.Float64,
        "mode": pl.String,
        "note": pl.String,
        "turn_start": pl.Int32,
        "turn_end": pl.Int32,
        "context": pl.String,
        "context_message_ids": pl.List(pl.String),
    }


# the types of the index columns a scope's rows carry beyond the common ones (`IndexSpec.extra_columns`)
_EXTRA_TYPES = {
    "role": pl.String, "speaker": pl.String, "title": pl.String, "fact_id": pl.String, "version": pl.Int32,
    "type": pl.String, "subject": pl.String, "slot": pl.String, "status": pl.String,
}


def result_schema(spec: IndexSpec) -> dict[str, Any]:
    """The columns of a search result in `spec`'s scope, whether or not anything was found."""
    return {**_result_schema(), **{column: _EXTRA_TYPES[column] for column in spec.extra_columns}}


def empty_result(spec: IndexSpec) -> pl.DataFrame:
    return pl.DataFrame(schema=result_schema(spec))


# -- the three indexes: how they are searched (their rows are built in memlake/index_rows.py) ------

CHUNK_SPEC = IndexSpec(
    CHUNK_INDEX,
    key="chunk_id",
    result_kinds=("turn",),
    part_kinds=("sentence", "question"),
    context_kinds=("session", "window"),
    expand_windows=True,
    extra_columns=("role", "speaker"),
    mention_column="speaker",
    mention_role_column="role",
)
EPISODE_SPEC = IndexSpec(EPISODE_INDEX, key="episode_key", extra_columns=("title",))
FACT_SPEC = IndexSpec(
    FACT_INDEX,
    key="fact_key",
    extra_columns=("fact_id", "version", "type", "subject", "slot", "status"),
    mention_column="subject",
    base_filter=("status = 'active'",),
)
SPECS = {"chunks": CHUNK_SPEC, "episodes": EPISODE_SPEC, "facts": FACT_SPEC}


# -- the read entry point used by Memory.search ----------------------------------------------


def search_memory(
    settings: Any,
    query: str,
    agent_id: str,
    *,
    k: int = 10,
    scope: str = "chunks",
    as_of: datetime | str | None = None,
    filters: Filters | None = None,
    embedder: TextEmbedder | None = None,
    use_embedder: bool = True,
    query_vector: np.ndarray | None = None,
    store: VectorStore | None = None,
    access: AccessLog | None = None,
    turn_store: VectorStore | None = None,
    **overrides: Any,
) -> pl.DataFrame:
    """Hybrid search of one agent's memory in `scope` (chunks, episodes or facts); see `Searcher.search`.
    `access` is the home's access log (read whole when not given), for the access-frequency boost;
    `turn_store` holds the chunk index that orders an episode's or a fact's message ids (default `store`)."""
    from memlake.embedding import configured_embedder

    if scope not in SPECS:
        raise ValueError(f"unknown scope {scope!r}: expected one of {', '.join(SPECS)}")
    when = parse_as_of(as_of, end_of_day=True)
    if embedder is None and use_embedder:
        embedder = configured_embedder(settings)
    # a one-off store keeps no snapshot: loading the agent's rows would cost more than the one search
    searcher = Searcher(store or VectorStore(settings.lancedb_dir, snapshot_rows=0), embedder, turn_store)
    params = SearchParams.from_settings(settings, k=k, **overrides)
    return searcher.search(
        SPECS[scope],
        query,
        agent_id,
        params,
        filters=filters,
        as_of=when,
        access_counts=(access or AccessLog(settings)).counts(agent_id, scope, when),
        query_vector=query_vector,
    )
