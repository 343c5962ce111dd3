"""The facts fold's inputs (candidates, overrides, forgets), its thresholds, and the keys its chains are kept under.

Ids come from content: a slotted chain is `hash(agent, subject, slot)`, a slot-less one `hash(agent, subject, type,
first content)`. Pure domain code (`memlake.facts.fold` folds them).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import polars as pl

from memlake.moments import as_utc_or_none
from memlake.settings import FoldSettings
from memlake.text import words

USER = "user"
_USER_ALIASES = {"", "user", "the user", "i", "me", "myself"}
EXTRACTION = "extraction"
OVERRIDE = "override"
# Types that look ahead: they carry nothing out, and a statement of another type carries a plan out.
PLAN_TYPES = ("commitment", "decision")
# What a later statement carries out (it names the new value as its goal): plans and events still open.
GOAL_TYPES = ("commitment", "event")
# What a value's end ends (it names the value): states as well as plans and open events.
STATE_TYPES = ("commitment", "event", "fact", "relationship")
# What a statement that names it as ended ends ("gone off oat milk"): any state, taste or skill, and open plans.
ENDABLE_TYPES = (*STATE_TYPES, "preference", "skill")
_KIND_RANK = {"candidate": 0, "override": 1, "forget": 2}


# ---------------------------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class Candidate:
    """A fact candidate, dated: `created_at` is when the user said it."""

    agent_id: str
    type: str
    subject: str
    content: str
    created_at: datetime
    slot: str | None = None
    value: str | None = None
    confidence: float = 0.8
    importance: float = 0.5
    tags: tuple[str, ...] = ()
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    ingested_at: datetime | None = None
    conversation_id: str | None = None
    message_ids: tuple[str, ...] = ()

    def sort_key(self) -> tuple[Any, ...]:
        return (
            as_utc_or_none(self.created_at),
            _KIND_RANK["candidate"],
            self.agent_id,
            subject_key(self.subject),
            self.slot or "",
            self.type,
            self.content,
            self.value or "",
            _iso(self.valid_from),
            _iso(self.valid_until),
            self.conversation_id or "",
            self.message_ids,
            self.confidence,
            self.importance,
            tuple(sorted(self.tags)),
            _iso(self.ingested_at),
        )


@dataclass(frozen=True)
class Override:
    """One entry of the overrides log: add a fact, correct one (by id), or reject one (by id)."""

    override_id: str
    agent_id: str
    action: str  # add | correct | reject
    written_at: datetime
    fact_id: str | None = None
    type: str | None = None
    subject: str | None = None
    slot: str | None = None
    value: str | None = None
    content: str | None = None
    confidence: float | None = None
    importance: float | None = None
    tags: tuple[str, ...] = ()
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    # What the target looked like when the override was written, to find it again if its id changed.
    target_subject: str | None = None
    target_slot: str | None = None
    target_content: str | None = None

    def sort_key(self) -> tuple[Any, ...]:
        return (as_utc_or_none(self.written_at), _KIND_RANK["override"], self.agent_id, self.override_id)


@dataclass(frozen=True)
class Forget:
    """One entry of the forget log: an agent, a conversation or a fact (chain) to forget."""

    forget_id: str
    agent_id: str
    scope: str  # agent | conversation | fact
    written_at: datetime
    target: str | None = None

    def sort_key(self) -> tuple[Any, ...]:
        return (as_utc_or_none(self.written_at), _KIND_RANK["forget"], self.agent_id, self.forget_id)


Event = Candidate | Override | Forget


class FoldConfig(FoldSettings):
    """The fold's thresholds and policy: the settings' fold group (`FoldSettings`, where their defaults live)."""

    @classmethod
    def from_settings(cls, settings: FoldSettings) -> FoldConfig:
        return cls(**{name: getattr(settings, name) for name in FoldSettings.model_fields})


# ------------------------------------------------------------------------------------------------ keys


def _iso(value: datetime | None) -> str:
    return value.isoformat() if value is not None else ""


def subject_key(subject: str | None) -> str:
    """How subjects compare: the user's aliases are "user", names compare casefolded."""
    text = " ".join((subject or "").split())
    return USER if text.casefold() in _USER_ALIASES else text.casefold()


def display_subject(subject: str | None) -> str:
    text = " ".join((subject or "").split())
    return USER if text.casefold() in _USER_ALIASES else text


def _hash_id(*parts: str) -> str:
    return "f_" + hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]


def chain_id(agent_id: str, subject: str, slot: str | None, fact_type: str, first_content: str) -> str:
    """The id of a fact chain: stable for a slot, else derived from the first statement."""
    if slot:
        return _hash_id(agent_id, subject_key(subject), "slot", slot)
    return _hash_id(agent_id, subject_key(subject), "type", fact_type, " ".join(words(first_content)))


# Slots a subject may hold several values of at once (a second sister is not a new value of the first): each
# value is a chain of its own, and two values are neither a change nor a contradiction.
MULTI_VALUED_SLOTS = frozenset({"sibling"})


def slot_of(slot: str, value: str | None) -> str:
    """The slot a chain is kept under: the slot, or for a multi-valued one the slot and its value."""
    if slot in MULTI_VALUED_SLOTS:
        return f"{slot}={' '.join((value or '').split()).casefold()}"
    return slot


def slot_key(agent_id: str, subject: str | None, slot: str, value: str | None) -> tuple[str, str, str]:
    return (agent_id, subject_key(subject), slot_of(slot, value))


def slot_chains(facts: pl.DataFrame) -> pl.DataFrame:
    """One row per fact (`agent_id`, `fact_id`) with a slot, and `slot_chain`: the slot chain the fold keeps it in.

    The fold keeps a fact under the slot key of every value its versions held (`slot_key`): one key for a
    single-valued slot; for a multi-valued one (sibling), a value replaced by another adds the new value's key.
    Facts sharing a key are one slot chain, and the fold keeps exactly one active version in each (none only when
    the newest was rejected): Bob replacing Ken joins Ken's key and Bob's; Tom stays a chain of his own. The
    chain is named by its smallest key, so the same facts always give the same names."""
    pairs = facts.filter(pl.col("slot").is_not_null()).select("agent_id", "fact_id", "subject", "slot", "value")
    joined: dict[tuple[str, str, str], tuple[str, str, str]] = {}  # a key -> a key of the same chain (a union-find)

    def root(key: tuple[str, str, str]) -> tuple[str, str, str]:
        while joined.setdefault(key, key) != key:
            key = joined[key]
        return key

    first_key: dict[tuple[str, str], tuple[str, str, str]] = {}
    for agent_id, fact_id, subject, slot, value in pairs.iter_rows():
        key = slot_key(agent_id, subject, slot, value)
        held = first_key.setdefault((agent_id, fact_id), key)
        a, b = root(held), root(key)
        if a != b:  # the smaller key names the joined chain
            joined[max(a, b)] = min(a, b)
    return pl.DataFrame(
        [(agent_id, fact_id, "\x1f".join(root(key))) for (agent_id, fact_id), key in first_key.items()],
        schema={"agent_id": pl.String, "fact_id": pl.String, "slot_chain": pl.String}, orient="row",
    )
