"""What distillation returns: one validated `DistilledSession` per conversation, and its parts.

The core model (through instructor) and the offline rule-based distiller fill
the same object; `episodes/episodes` stores one per conversation, its parts as
the struct columns of `memlake.schemas.EPISODES`.

Fact candidates (`FactCandidate`) are the contract the facts fold reads from
`episodes/episodes.fact_candidates`:

- `type`: one of `FACT_TYPES` (fact, preference, decision, correction,
  commitment, relationship, skill, identity, event).
- `subject`: whom the fact is about. `USER_SUBJECT` ("user") for the user;
  otherwise the person's or thing's name as said ("Jonas", "Tomás Ruiz",
  "Project Heron").
- `slot`: only for single-valued attributes, from `SLOTS`; else null. A newer
  candidate with the same subject and slot and another value supersedes the
  older fact. `SLOT_TYPES` gives the type a slot's candidates carry.
- `value`: the slot's value ("Lisbon", "Northwind Labs", "2024-03-14" for a
  `project_deadline`); for slot-less facts a short value ("oolong tea").
- `content`: one self-contained sentence in the third person, never first
  person ("The user lives in Lisbon.").
- `confidence`, `importance`: in [0, 1].
- `tags`: short lowercase labels ("food", "work", "health").
- `valid_from` / `valid_until`: ISO dates (YYYY-MM-DD) or null. `valid_from`
  is when it became true if the user said so (the move date), else the date
  of the message that says it.
- `message_ids`: the ids of the user messages it comes from (never empty).

Facts come only from what the user says (role "user"), never from the assistant.

Pure Python and Pydantic: no Dagster.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from memlake.schemas import FACT_TYPES

USER_SUBJECT = "user"
# How a relative or someone close to the user, said without a name, is a fact's subject: "the user's dad", "the
# user's best friend" (docs/decisions.md, 2026-11-26, s8-leftovers).
UNNAMED_RELATIVE = "the user's "
# The tag of a slot value guessed rather than said ("works in Leeds" -> home city Leeds): the facts fold lets it fill
# an empty slot or replace another guess, never replace a value the user said.
INFERRED = "inferred"
# The tag of a fact saying the user has a relative or a pet ("has a dog named Biscuit"): one of their people.
KIN_OR_PET = "kin_or_pet"

# Single-valued attributes. A subject has at most one current value per slot, but for `sibling`: each
# sibling is a value of its own (`memlake.facts.fold.MULTI_VALUED_SLOTS`).
SLOTS = (
    "name",  # the subject's name ("Priya Nair")
    "home_city",  # the city the subject lives in ("Lisbon")
    "employer",  # the organisation the subject works for ("Northwind Labs")
    "job_title",  # the subject's role ("backend software engineer", "tech lead")
    "diet",  # vegetarian, vegan, pescatarian, ...
    "partner",  # the subject's partner's name ("Jonas")
    "sibling",  # a sibling's name ("Leela")
    "project_deadline",  # a project's launch or due date, ISO ("2024-03-14"); subject = the project
)

# The type a slot's candidates carry.
SLOT_TYPES: dict[str, str] = {
    "name": "identity",
    "job_title": "identity",
    "home_city": "fact",
    "employer": "fact",
    "diet": "preference",
    "partner": "relationship",
    "sibling": "relationship",
    "project_deadline": "fact",
}

ENTITY_TYPES = ("person", "organization", "place", "project", "product", "event", "other")

# Suggested relation names; the model may use others (lowercase, snake_case).
RELATIONS = (
    "partner_of",
    "sibling_of",
    "works_at",
    "works_with",
    "lives_in",
    "member_of",
    "uses",
    "role",
)

FactType = Literal[
    "fact", "preference", "decision", "correction", "commitment", "relationship", "skill", "identity", "event"
]
assert set(FactType.__args__) == set(FACT_TYPES)  # type: ignore[attr-defined]

_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_ISO_MONTH = re.compile(r"^\d{4}-\d{2}$")


def iso_day(value: Any) -> str | None:
    """An ISO date string (YYYY-MM-DD) from a date, datetime or string; None when it is no date."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    text = str(value).strip()
    if _ISO_DAY.match(text[:10]):
        try:
            return date.fromisoformat(text[:10]).isoformat()
        except ValueError:
            return None
    return None


def _key_date(value: Any) -> str:
    text = str(value).strip()
    if _ISO_MONTH.match(text):
        year, month = (int(p) for p in text.split("-"))
        if 1 <= month <= 12:
            return text
    day = iso_day(text)
    if day is None:
        raise ValueError(f"not an ISO date (YYYY-MM-DD or YYYY-MM): {value!r}")
    return day


class _Part(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)


class KeyDate(_Part):
    """A date the conversation mentions, resolved against when it was said."""

    date: str = Field(description="ISO date YYYY-MM-DD (or YYYY-MM when only the month is known).")
    description: str = Field(description="What happens or happened on that date, one short sentence.")
    message_ids: list[str] = Field(default_factory=list, description="Ids of the messages that mention it.")

    @field_validator("date", mode="before")
    @classmethod
    def _date(cls, value: Any) -> str:
        return _key_date(value)


class Entity(_Part):
    """A named person, organisation, place, project or thing the conversation mentions."""

    name: str
    type: str = Field("other", description=f"One of {', '.join(ENTITY_TYPES)}.")
    message_ids: list[str] = Field(default_factory=list, description="Ids of the messages that name it.")

    @field_validator("type", mode="before")
    @classmethod
    def _type(cls, value: Any) -> str:
        text = str(value or "other").strip().lower()
        return text if text in ENTITY_TYPES else "other"


class Relation(_Part):
    """A typed link between two entities ("user" stands for the user)."""

    source: str
    relation: str = Field(description=f"snake_case, e.g. {', '.join(RELATIONS)}.")
    target: str
    confidence: float = Field(0.8, ge=0.0, le=1.0)
    valid_from: str | None = Field(None, description="ISO date or null.")
    valid_until: str | None = Field(None, description="ISO date or null.")

    @field_validator("relation", mode="before")
    @classmethod
    def _relation(cls, value: Any) -> str:
        return re.sub(r"[^a-z0-9]+", "_", str(value).strip().lower()).strip("_") or "related_to"

    @field_validator("confidence", mode="before")
    @classmethod
    def _clamp(cls, value: Any) -> float:
        return _clamp01(value, 0.8)

    @field_validator("valid_from", "valid_until", mode="before")
    @classmethod
    def _dates(cls, value: Any) -> str | None:
        return iso_day(value)


class FactCandidate(_Part):
    """A fact the user stated, ready for the facts fold (see the module docstring for the contract)."""

    type: FactType = Field(description=f"One of {', '.join(FACT_TYPES)}.")
    subject: str = Field(USER_SUBJECT, description='"user" for the user, else the person\'s or thing\'s name.')
    slot: str | None = Field(None, description=f"Only for single-valued attributes: one of {', '.join(SLOTS)}.")
    value: str = Field(description="The slot's value, or a short value for a slot-less fact.")
    content: str = Field(description='One self-contained sentence, no first person: "The user lives in Lisbon."')
    confidence: float = Field(0.8, ge=0.0, le=1.0)
    importance: float = Field(0.5, ge=0.0, le=1.0)
    tags: list[str] = Field(default_factory=list)
    valid_from: str | None = Field(None, description="ISO date it became true if stated, else the message date.")
    valid_until: str | None = Field(None, description="ISO date it stops being true, if stated.")
    message_ids: list[str] = Field(description="Ids of the user messages that state it.", min_length=1)

    @field_validator("type", mode="before")
    @classmethod
    def _type(cls, value: Any) -> str:
        return str(value).strip().lower()

    @field_validator("subject", mode="before")
    @classmethod
    def _subject(cls, value: Any) -> str:
        text = str(value or "").strip()
        return USER_SUBJECT if text.lower() in ("", "user", "the user", "i", "me") else text

    @field_validator("slot", mode="before")
    @classmethod
    def _slot(cls, value: Any) -> str | None:
        text = str(value or "").strip().lower().replace(" ", "_")
        return text if text in SLOTS else None

    @field_validator("confidence", "importance", mode="before")
    @classmethod
    def _clamp(cls, value: Any) -> float:
        return _clamp01(value, 0.5)

    @field_validator("tags", mode="before")
    @classmethod
    def _tags(cls, value: Any) -> list[str]:
        return [str(t).strip().lower() for t in (value or []) if str(t).strip()]

    @field_validator("valid_from", "valid_until", mode="before")
    @classmethod
    def _dates(cls, value: Any) -> str | None:
        return iso_day(value)


class DistilledSession(BaseModel):
    """What one conversation was about, and what the user stated in it."""

    model_config = ConfigDict(extra="ignore")

    summary: str = Field(description="1-3 sentences: what the conversation was about and what came of it.")
    topics: list[str] = Field(default_factory=list, description="A few short topic labels.")
    decisions: list[str] = Field(default_factory=list, description="Decisions taken, one sentence each.")
    action_items: list[str] = Field(default_factory=list, description="Things someone will do, one each.")
    key_dates: list[KeyDate] = Field(default_factory=list)
    entities: list[Entity] = Field(default_factory=list)
    relations: list[Relation] = Field(default_factory=list)
    fact_candidates: list[FactCandidate] = Field(default_factory=list)
    salience: float = Field(0.5, ge=0.0, le=1.0, description="How much this conversation matters later, 0-1.")

    @field_validator("salience", mode="before")
    @classmethod
    def _clamp(cls, value: Any) -> float:
        return _clamp01(value, 0.5)

    @field_validator("topics", "decisions", "action_items", mode="before")
    @classmethod
    def _strings(cls, value: Any) -> list[str]:
        return [str(v).strip() for v in (value or []) if str(v).strip()]

    @model_validator(mode="after")
    def _summary_present(self) -> DistilledSession:
        if not self.summary.strip():
            raise ValueError("summary must not be empty")
        return self

    def restricted_to(self, message_roles: dict[str, str]) -> tuple[DistilledSession, int]:
        """This session with provenance limited to the conversation's messages and facts to user messages.

        Message ids that are not in the conversation are dropped; a fact
        candidate that keeps no user message is dropped. Returns the session
        and how many candidates were dropped.
        """
        candidates = []
        for candidate in self.fact_candidates:
            user_ids = [m for m in candidate.message_ids if message_roles.get(m) == "user"]
            if user_ids:
                candidates.append(candidate.model_copy(update={"message_ids": user_ids}))
        key_dates = [
            d.model_copy(update={"message_ids": [m for m in d.message_ids if m in message_roles]})
            for d in self.key_dates
        ]
        entities = [
            e.model_copy(update={"message_ids": [m for m in e.message_ids if m in message_roles]})
            for e in self.entities
        ]
        dropped = len(self.fact_candidates) - len(candidates)
        return self.model_copy(update={"fact_candidates": candidates, "key_dates": key_dates,
                                       "entities": entities}), dropped


def _clamp01(value: Any, default: float) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    if number != number:  # NaN
        return default
    return min(1.0, max(0.0, number))


@dataclass(frozen=True)
class Message:
    """One turn of a conversation, as distillation sees it."""

    message_id: str
    role: str
    content: str
    created_at: datetime  # timezone-aware UTC
    speaker: str | None = None


@dataclass(frozen=True)
class Conversation:
    """One conversation of one agent, its turns in order."""

    agent_id: str
    conversation_id: str
    title: str | None
    messages: tuple[Message, ...] = field(default_factory=tuple)

    @property
    def started_at(self) -> datetime:
        return self.messages[0].created_at

    @property
    def ended_at(self) -> datetime:
        return max(m.created_at for m in self.messages)

    @property
    def message_roles(self) -> dict[str, str]:
        return {m.message_id: m.role for m in self.messages}


# --- what a distiller reports besides its result ----------------------------------------------


class DistillError(RuntimeError):
    """A conversation could not be distilled now; it stays pending with `reason`."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class CircuitOpen(DistillError):
    """The endpoint's circuit breaker is open: no call was made."""


@dataclass
class Usage:
    """What a distiller spent: requests to the endpoint and tokens."""

    calls: int = 0  # logical calls (one per conversation, or per part of a long one) that reached the endpoint
    requests: int = 0  # HTTP requests, with retries and re-asks
    failed_requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict[str, int]:
        return {
            "calls": self.calls,
            "requests": self.requests,
            "failed_requests": self.failed_requests,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }
