"""Relation versions: what was said, folded in time order into versions that hold from one time to another.

A relation that is said again confirms its open version. A new target of a one-target relation (the user's
employer, home city, partner) closes the open version with another target; a new source of a one-holder relation
("Alice leads Nova" -> "Bob leads Nova") closes the one with another source. Closed versions are kept:
status superseded, valid_until the new one's valid_from. A relation said to be over is `ended`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from memlake.graph.observed import Observation
from memlake.graph.resolve import stable_id

# One current target per source, and one current source per target.
ONE_TARGET = frozenset({"works_at", "lives_in", "partner_of"})
ONE_SOURCE = frozenset({"leads"})


@dataclass
class Version:
    """One version of one relation."""

    relation_id: str
    version: int
    agent_id: str
    source_entity_id: str
    relation: str
    relation_text: str
    target_entity_id: str
    confidence: float
    valid_from: datetime
    created_at: datetime
    valid_until: datetime | None = None
    status: str = "active"
    conversations: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)

    def confirm(self, said: Observation) -> None:
        self.confidence = max(self.confidence, said.confidence)
        self.created_at = min(self.created_at, said.at)  # folded by validity: a later statement may date it back
        if said.conversation_id and said.conversation_id not in self.conversations:
            self.conversations.append(said.conversation_id)
        self.messages.extend(m for m in said.message_ids if m not in self.messages)

    def close(self, at: datetime, status: str) -> None:
        self.valid_until, self.status = max(at, self.valid_from), status

    def row(self) -> dict[str, object]:
        return {
            "relation_id": self.relation_id, "version": self.version, "agent_id": self.agent_id,
            "source_entity_id": self.source_entity_id, "relation": self.relation,
            "relation_text": self.relation_text, "target_entity_id": self.target_entity_id,
            "confidence": self.confidence, "valid_from": self.valid_from, "valid_until": self.valid_until,
            "created_at": self.created_at, "source_conversation_ids": sorted(self.conversations),
            "source_message_ids": sorted(self.messages), "status": self.status,
        }


Resolved = tuple[str, str, Observation]  # (source entity id, target entity id, what was said)


def fold_versions(said: list[Resolved]) -> list[Version]:
    """Every relation version, from the observations with their ends resolved to entity ids."""
    versions: list[Version] = []
    open_: dict[str, Version] = {}  # relation_id -> its open version
    # the open versions a new one may replace: (agent, relation, source) for one-target relations, (agent,
    # relation, target) for one-holder ones
    holding: dict[tuple[str, str, str], set[str]] = {}
    counts: dict[str, int] = {}
    order = sorted(said, key=lambda r: (r[2].agent_id, r[2].valid_from, r[2].at, r[2].conversation_id, r[0],
                                        r[2].relation, r[1]))
    for source, target, o in order:
        if source == target:  # a relation of an entity to itself: two forms merged into one
            continue
        relation_id = stable_id("r_", o.agent_id, source, o.relation, target)
        current = open_.get(relation_id)
        keys = _holder_keys(o.agent_id, source, o.relation, target)
        if current is None:
            for key in keys:
                for other_id in sorted(holding.get(key, set()) - {relation_id}):
                    other = open_.pop(other_id)
                    other.close(o.valid_from, "superseded")
                    for other_key in _holder_keys(other.agent_id, other.source_entity_id, other.relation,
                                                  other.target_entity_id):
                        holding[other_key].discard(other_id)
            counts[relation_id] = counts.get(relation_id, 0) + 1
            current = Version(relation_id, counts[relation_id], o.agent_id, source, o.relation, o.relation_text,
                              target, o.confidence, o.valid_from, o.at)
            versions.append(current)
            open_[relation_id] = current
            for key in keys:
                holding.setdefault(key, set()).add(relation_id)
        current.confirm(o)
        if o.valid_until is not None:
            current.close(o.valid_until, "ended")
            del open_[relation_id]
            for key in keys:
                holding[key].discard(relation_id)
    return versions


def _holder_keys(agent: str, source: str, relation: str, target: str) -> list[tuple[str, str, str]]:
    """Where a relation's open version is kept for the versions that may replace it."""
    keys = []
    if relation in ONE_TARGET:
        keys.append((agent, relation, "source:" + source))
    if relation in ONE_SOURCE:
        keys.append((agent, relation, "target:" + target))
    return keys
