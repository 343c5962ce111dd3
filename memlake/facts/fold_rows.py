"""The rows the facts fold keeps while it runs (fact versions, edges, the statement entering it), what it returns,
and its index of an agent's versions by subject."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import polars as pl

from memlake.facts.fold_inputs import EXTRACTION, OVERRIDE

Embed = Callable[[list[str]], np.ndarray]


# ----------------------------------------------------------------------------------------- fact rows


@dataclass
class FactVersion:
    """One row of `facts/facts` while the fold runs."""

    fact_id: str
    version: int
    agent_id: str
    type: str
    subject: str
    slot: str | None
    value: str | None
    content: str
    confidence: float
    importance: float
    tags: list[str]
    valid_from: datetime
    valid_until: datetime | None
    created_at: datetime
    ingested_at: datetime | None
    source_conversation_ids: list[str]
    source_message_ids: list[str]
    source_count: int
    confirmation_count: int
    last_confirmed_at: datetime | None
    status: str
    superseded_by: str | None
    source_interface: str
    override_ids: list[str] = field(default_factory=list)
    # The best prior of the readings that said it (`confidence.reading_prior`), kept while the fold runs (not a
    # column): `confidence` is worked out from it and the conversations that said it (`fact_confidence`).
    prior: float | None = None

    @property
    def key(self) -> tuple[str, int]:
        return (self.fact_id, self.version)

    @property
    def held(self) -> bool:
        """Made or confirmed by a user override: extraction never replaces it."""
        return bool(self.override_ids)

    def row(self) -> dict[str, Any]:
        return {
            "fact_id": self.fact_id,
            "version": self.version,
            "agent_id": self.agent_id,
            "type": self.type,
            "subject": self.subject,
            "slot": self.slot,
            "value": self.value,
            "content": self.content,
            "confidence": self.confidence,
            "importance": self.importance,
            "tags": list(self.tags),
            "valid_from": self.valid_from,
            "valid_until": self.valid_until,
            "created_at": self.created_at,
            "ingested_at": self.ingested_at,
            "source_conversation_ids": list(self.source_conversation_ids),
            "source_message_ids": list(self.source_message_ids),
            "source_count": self.source_count,
            "confirmation_count": self.confirmation_count,
            "last_confirmed_at": self.last_confirmed_at,
            "status": self.status,
            "superseded_by": self.superseded_by,
            "source_interface": self.source_interface,
            "override_ids": list(self.override_ids),
        }


@dataclass
class Edge:
    """One row of `facts/fact_edges`: from the newer version to the one it updates or contradicts."""

    agent_id: str
    edge_type: str
    from_fact_id: str
    from_version: int
    to_fact_id: str
    to_version: int
    created_at: datetime
    reason: str

    def row(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class _Obs:
    """A statement entering the fold: an extracted candidate or an override's new fact."""

    agent_id: str
    type: str
    subject: str
    slot: str | None
    value: str | None
    content: str
    confidence: float
    importance: float
    tags: tuple[str, ...]
    valid_from: datetime
    valid_until: datetime | None
    created_at: datetime
    ingested_at: datetime | None
    conversation_id: str | None
    message_ids: tuple[str, ...]
    override_id: str | None = None

    @property
    def is_override(self) -> bool:
        return self.override_id is not None

    @property
    def interface(self) -> str:
        return OVERRIDE if self.is_override else EXTRACTION


@dataclass(frozen=True)
class _Match:
    fact: FactVersion
    jaccard: float
    cosine: float
    same_polarity: bool
    values_conflict: bool


@dataclass
class FoldStats:
    """What the fold did, for asset metadata."""

    candidates: int = 0
    overrides: int = 0
    forgets: int = 0
    created: int = 0
    superseded: int = 0
    confirmed: int = 0
    contradictions: int = 0
    blocked_by_override: int = 0
    closed: int = 0  # plans carried out and states ended by a later statement
    rejected: int = 0
    forgotten_chains: int = 0
    dropped_by_forget: int = 0
    unresolved_overrides: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class FoldResult:
    """The fold's tables and what it did."""

    facts: pl.DataFrame
    edges: pl.DataFrame
    stats: FoldStats


class _SubjectIndex:
    """The versions about one subject of one agent: by content word, and their vectors as one matrix."""

    def __init__(self, dim: int | None) -> None:
        self.versions: list[FactVersion] = []
        self.by_word: dict[str, list[int]] = {}
        self.matrix = np.zeros((16, dim), dtype=np.float32) if dim else None

    def add(self, version: FactVersion, words: frozenset[str], vector: np.ndarray | None) -> None:
        position = len(self.versions)
        self.versions.append(version)
        for word in words:
            self.by_word.setdefault(word, []).append(position)
        if self.matrix is not None and vector is not None:
            if position >= self.matrix.shape[0]:
                grown = np.zeros((self.matrix.shape[0] * 2, self.matrix.shape[1]), dtype=np.float32)
                grown[:position] = self.matrix[:position]
                self.matrix = grown
            self.matrix[position] = vector

    def near(self, words: frozenset[str], vector: np.ndarray | None, min_cosine: float) -> dict[int, float]:
        """Positions sharing a word with `words`, or with cosine >= `min_cosine` to `vector`, with their cosine."""
        found: set[int] = set()
        for word in words:
            found.update(self.by_word.get(word, ()))
        if self.matrix is None or vector is None or not self.versions:
            return dict.fromkeys(found, 0.0)
        cosines = self.matrix[: len(self.versions)] @ vector
        found.update(np.nonzero(cosines >= min_cosine)[0].tolist())
        return {position: float(cosines[position]) for position in found}
