"""What the graph is built from: the names said (mentions) and the relations said (observations), as records the
readers (mentions, entity_types) and the builders (resolve, versions) share."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Mention:
    """One name said: in a conversation's episode, or as a fact's subject or value."""

    agent_id: str
    name: str
    type: str
    conversation_id: str  # "" for a fact with no conversation (a user's override)
    at: datetime
    message_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Observation:
    """One relation said: source, relation, target, when it holds from (and until, if said), where it was said."""

    agent_id: str
    source: str
    source_type: str
    relation: str  # normalized
    relation_text: str  # as said
    target: str
    target_type: str
    confidence: float
    valid_from: datetime
    valid_until: datetime | None
    at: datetime
    conversation_id: str
    message_ids: tuple[str, ...]


@dataclass(frozen=True)
class Said:
    """Everything the graph is built from."""

    mentions: list[Mention]
    observations: list[Observation]
    user_names: dict[str, set[str]]  # agent -> the names the user gave as their own
