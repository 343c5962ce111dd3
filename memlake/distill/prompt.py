"""The distillation prompt, splitting long conversations to fit the model, and merging the parts.

The prompt carries the conversation's own dates: every message is rendered
with its id and the UTC time it was said, and the header names the
conversation's first and last day. Relative dates ("last week") resolve
against those, never against today; the prompt never mentions the date of
the run. `PROMPT_VERSION` is part of the result cache key: change it whenever
the prompt or the response model changes meaning.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from memlake.distill.models import (
    ENTITY_TYPES,
    RELATIONS,
    SLOT_TYPES,
    SLOTS,
    USER_SUBJECT,
    Conversation,
    DistilledSession,
    Entity,
    FactCandidate,
    KeyDate,
    Message,
    Relation,
)
from memlake.schemas import FACT_TYPES

PROMPT_VERSION = "distill-v1"

# Tokens kept free for the instructions, the schema and the answer.
OUTPUT_RESERVE_TOKENS = 3000
# Below this many tokens for the transcript a part is not worth a call.
MIN_PART_TOKENS = 500

SYSTEM_PROMPT = f"""\
You distill one conversation between a user and an AI assistant into structured memory.

Dates: every message below carries the UTC date and time it was said. Resolve relative
dates ("yesterday", "last week", "next month", "in October") against the date of the
message that says them, never against today's date. Write dates as YYYY-MM-DD
(YYYY-MM when only the month is known).

Return:
- summary: 1-3 sentences on what the conversation was about and what came of it.
- topics: a few short topic labels.
- decisions, action_items: one sentence each; empty when there are none.
- key_dates: dates the conversation mentions, with a short description and the ids of
  the messages that mention them.
- entities: named people, organisations, places, projects, products
  (type one of: {", ".join(ENTITY_TYPES)}).
- relations: links between entities, "user" standing for the user
  (relation in snake_case, e.g. {", ".join(RELATIONS)}).
- fact_candidates: facts the USER states about themselves, the people in their life
  or their work. Only what the user says: never take a fact from the assistant's
  messages, from questions, hypotheticals or role play. Each candidate has:
  - type: one of {", ".join(FACT_TYPES)};
  - subject: "{USER_SUBJECT}" for the user, else the person's or thing's name ("Jonas",
    "Project Heron");
  - slot: only for single-valued attributes, one of {", ".join(SLOTS)}; else null;
  - value: the slot's value ("Lisbon"), or a short value for a slot-less fact;
    project_deadline values are dates (YYYY-MM-DD);
  - content: one self-contained sentence without first person ("The user lives in
    Lisbon.");
  - confidence and importance between 0 and 1; tags: short lowercase labels;
  - valid_from: when it became true if the user says so (e.g. the move date), else the
    date of the message; valid_until: when it stops being true, if said; else null;
  - message_ids: the ids of the user messages that state it.
  A correction ("actually ... not ...") is a candidate of type correction carrying the
  corrected value. Typical slot types: {", ".join(f"{s} -> {t}" for s, t in SLOT_TYPES.items())}.
- salience: 0-1, how much this conversation will matter later (0.1 small talk, 0.9
  life events).
Precision over recall: leave out anything that is not clearly true of the user."""


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate: about four characters per token."""
    return math.ceil(len(text) / 4)


def render_message(message: Message) -> str:
    speaker = f" ({message.speaker})" if message.speaker else ""
    return (
        f"[{message.message_id}] {message.created_at:%Y-%m-%d %H:%M} UTC "
        f"{message.role}{speaker}: {message.content}"
    )


def conversation_header(conversation: Conversation, part: int = 1, parts: int = 1) -> str:
    first, last = conversation.started_at.date(), conversation.ended_at.date()
    span = first.isoformat() if first == last else f"{first.isoformat()} to {last.isoformat()}"
    lines = [f"Conversation {conversation.conversation_id!r}, held {span} (UTC)."]
    if conversation.title:
        lines.append(f"Title: {conversation.title}")
    if parts > 1:
        lines.append(
            f"This is part {part} of {parts} of a long conversation; distill this part only."
        )
    lines.append("Messages ([message id] date time UTC role: text):")
    return "\n".join(lines)


def build_messages(
    conversation: Conversation, messages: Sequence[Message] | None = None, part: int = 1, parts: int = 1
) -> list[dict[str, Any]]:
    """The chat messages of one call: the instructions, then the (part of the) conversation."""
    body = "\n".join(render_message(m) for m in (messages if messages is not None else conversation.messages))
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": conversation_header(conversation, part, parts) + "\n" + body},
    ]


def split_conversation(conversation: Conversation, context_tokens: int) -> list[list[Message]]:
    """The conversation's messages in consecutive parts that each fit the model's context.

    A message longer than a part on its own is cut into pieces (same id and
    time), so nothing is left out.
    """
    budget = max(MIN_PART_TOKENS, context_tokens - OUTPUT_RESERVE_TOKENS - estimate_tokens(SYSTEM_PROMPT))
    parts: list[list[Message]] = []
    current: list[Message] = []
    used = estimate_tokens(conversation_header(conversation, 1, 2))
    header = used
    for message in conversation.messages:
        for piece in _pieces(message, budget - header):
            cost = estimate_tokens(render_message(piece)) + 1
            if current and used + cost > budget:
                parts.append(current)
                current, used = [], header
            current.append(piece)
            used += cost
    if current:
        parts.append(current)
    return parts


def _pieces(message: Message, budget: int) -> Iterable[Message]:
    overhead = estimate_tokens(render_message(Message(message.message_id, message.role, "", message.created_at,
                                                      message.speaker)))
    room_chars = max(400, (budget - overhead - 1) * 4)
    if len(message.content) <= room_chars:
        yield message
        return
    for start in range(0, len(message.content), room_chars):
        yield Message(message.message_id, message.role, message.content[start : start + room_chars],
                      message.created_at, message.speaker)


def merge_sessions(parts: Sequence[DistilledSession]) -> DistilledSession:
    """One result from the results of a conversation's parts, without another model call.

    The summary keeps the first sentence of each part (at most three); lists
    are concatenated with duplicates removed; salience is the highest.
    """
    if len(parts) == 1:
        return parts[0]
    sentences = [_first_sentence(p.summary) for p in parts if p.summary.strip()]
    if len(sentences) > 3:
        sentences = [sentences[0], sentences[len(sentences) // 2], sentences[-1]]
    return DistilledSession(
        summary=" ".join(sentences),
        topics=_unique(t for p in parts for t in p.topics),
        decisions=_unique(d for p in parts for d in p.decisions),
        action_items=_unique(a for p in parts for a in p.action_items),
        key_dates=_merge_key_dates(d for p in parts for d in p.key_dates),
        entities=_merge_entities(e for p in parts for e in p.entities),
        relations=_merge_relations(r for p in parts for r in p.relations),
        fact_candidates=_merge_candidates(c for p in parts for c in p.fact_candidates),
        salience=max(p.salience for p in parts),
    )


def _first_sentence(text: str) -> str:
    text = text.strip()
    for i, ch in enumerate(text):
        if ch in ".!?" and (i + 1 == len(text) or text[i + 1] == " "):
            return text[: i + 1]
    return text


def _unique(values: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for value in values:
        key = value.strip().lower()
        if key and key not in seen:
            seen.add(key)
            out.append(value.strip())
    return out


def _merge_key_dates(dates: Iterable[KeyDate]) -> list[KeyDate]:
    merged: dict[tuple[str, str], KeyDate] = {}
    for d in dates:
        key = (d.date, d.description.lower())
        if key in merged:
            ids = merged[key].message_ids + [m for m in d.message_ids if m not in merged[key].message_ids]
            merged[key] = merged[key].model_copy(update={"message_ids": ids})
        else:
            merged[key] = d
    return list(merged.values())


def _merge_entities(entities: Iterable[Entity]) -> list[Entity]:
    merged: dict[str, Entity] = {}
    for e in entities:
        first = merged.setdefault(e.name.lower(), e)
        if first is not e:  # the same name in two parts of a long conversation: every message naming it
            ids = list(dict.fromkeys(first.message_ids + e.message_ids))
            merged[e.name.lower()] = first.model_copy(update={"message_ids": ids})
    return list(merged.values())


def _merge_relations(relations: Iterable[Relation]) -> list[Relation]:
    merged: dict[tuple[str, str, str], Relation] = {}
    for r in relations:
        key = (r.source.lower(), r.relation, r.target.lower())
        if key not in merged or r.confidence > merged[key].confidence:
            merged[key] = r
    return list(merged.values())


def _merge_candidates(candidates: Iterable[FactCandidate]) -> list[FactCandidate]:
    merged: dict[tuple[str, str, str | None, str], FactCandidate] = {}
    for c in candidates:
        key = (c.type, c.subject.lower(), c.slot, (c.value if c.slot else c.content).lower())
        if key in merged:
            old = merged[key]
            ids = old.message_ids + [m for m in c.message_ids if m not in old.message_ids]
            merged[key] = old.model_copy(update={"message_ids": ids, "confidence": max(old.confidence, c.confidence)})
        else:
            merged[key] = c
    return list(merged.values())
