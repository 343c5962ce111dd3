"""What one search is asked: its knobs (`SearchParams`), how each index is searched (`IndexSpec`), a turn's key."""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any

from memlake.chunks import chunk_id
from memlake.errors import BadRequest
from memlake.schemas import CHUNK_INDEX, EPISODE_INDEX, FACT_INDEX
from memlake.settings import SearchSettings


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
    # for a question about now, a turn that says only what has since been replaced keeps this share of its score
    # and passes the whole to the turns that said what replaced it (memlake.search.current; 1 = it only passes it)
    superseded_weight: float = 1.0
    # the turns naming the query's entities and its first hits' (memlake.graph.links), fused as one more list at
    # this weight (0 = off); the first `graph_seeds` hits' entities pull too; depth 2 adds related entities
    graph_weight: float = 0.0
    graph_seeds: int = 3
    graph_depth: int = 1
    text_score_power: float = 1.0  # 0 = plain RRF; 1 = each term scaled by score / best score of its list
    vector_score_power: float = 1.0
    mmr_lambda: float = 1.0
    same_conversation_decay: float = 1.0  # a hit's score times this per 100 words its conversation gave before
    window_turns: int = 1
    exact: bool | None = None  # None: exact scan unless the agent is large and the table has an ANN index

    def __post_init__(self) -> None:
        for name in ("k", "candidates", "context_candidates"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise BadRequest(f"{name} must be a whole number of at least 1, got {value!r}")
        for name in _NUMBER_FIELDS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise BadRequest(f"{name} must be a number, got {value!r}")
        if isinstance(self.graph_seeds, bool) or not isinstance(self.graph_seeds, int) or self.graph_seeds < 0:
            raise BadRequest(f"graph_seeds must be a whole number of at least 0, got {self.graph_seeds!r}")
        if self.graph_depth not in (1, 2) or isinstance(self.graph_depth, bool):
            raise BadRequest(f"graph_depth must be 1 or 2, got {self.graph_depth!r}")
        if not 0.0 <= self.superseded_weight <= 1.0:
            raise BadRequest(f"superseded_weight must be in [0, 1], got {self.superseded_weight!r}")
        if not 0.0 <= self.mmr_lambda <= 1.0:
            raise BadRequest(f"mmr_lambda must be in [0, 1], got {self.mmr_lambda!r}")
        if not 0.0 < self.same_conversation_decay <= 1.0:
            raise BadRequest(f"same_conversation_decay must be above 0 and at most 1, got "
                             f"{self.same_conversation_decay!r}")
        for name in ("rrf_k", "recency_half_life_days"):
            if getattr(self, name) <= 0:
                raise BadRequest(f"{name} must be above 0, got {getattr(self, name)!r}")
        # a negative weight would turn a lift into a penalty (and scores below 0): never what a setting means
        for name in (*_WEIGHT_FIELDS, "window_turns", "text_score_power", "vector_score_power"):
            if getattr(self, name) < 0:
                raise BadRequest(f"{name} must be at least 0, got {getattr(self, name)!r}")

    @classmethod
    def from_settings(cls, settings: SearchSettings, **overrides: Any) -> SearchParams:
        """The search group's knobs (`Settings.search`), with `overrides` (None: keep the setting) on top; built and
        checked once."""
        unknown = sorted(set(overrides) - set(_FIELDS))
        if unknown:
            raise BadRequest(f"unknown search setting {', '.join(unknown)}: one of {', '.join(_FIELDS)}")
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
            superseded_weight=settings.search_superseded_weight,
            graph_weight=settings.search_graph_weight,
            graph_seeds=settings.search_graph_seeds,
            graph_depth=settings.search_graph_depth,
            question_weight=settings.search_question_weight,
            mmr_lambda=settings.mmr_lambda,
            same_conversation_decay=settings.search_same_conversation_decay,
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
    spread_column: str | None = None  # results are spread over this column's values (same_conversation_decay)
    base_filter: tuple[str, ...] = ()  # trusted clauses always applied (e.g. only active facts)


CHUNK_SPEC = IndexSpec(
    CHUNK_INDEX,
    key="chunk_id",
    result_kinds=("turn",),
    part_kinds=("sentence", "passage", "question"),
    context_kinds=("session", "window"),
    expand_windows=True,
    extra_columns=("role", "speaker"),
    mention_column="speaker",
    mention_role_column="role",
    spread_column="conversation_id",
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


@lru_cache(maxsize=1 << 16)
def turn_key(agent_id: str, conversation_id: str, index: int) -> str:
    """The chunk id of one turn; remembered, as a search asks for the same neighbours again and again."""
    return chunk_id(agent_id, conversation_id, "turn", index, index)
