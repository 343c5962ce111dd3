"""The append-only logs people write about facts: user overrides and the forget log.

One write is one entry of `<home>/inputs/overrides/` or `<home>/inputs/forget/`
(see `memlake.inputs`). An override adds a fact, corrects one (a new version
that replaces FACT_ID) or rejects one by id; a forget entry names an agent, a
conversation or a fact to forget. The facts fold reads both logs whole, every run,
and stamps the facts table with the entries it read (`FOLDED_ENTRIES`), so a run
with no new chats still folds entries written since (`entries_unfolded`).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memlake.distill.models import Conversation, Message
from memlake.distill.offline import distill_offline
from memlake.errors import BadRequest
from memlake.facts.fold import Forget, Override
from memlake.facts.said_as_is import as_said, unread_statements
from memlake.inputs import append_entry, log_dir, log_files, read_log
from memlake.lake import Lake
from memlake.moments import as_utc_or_none, parse_as_of
from memlake.schemas import (
    FACT_TYPES,
    FACTS,
    FORGET,
    FORGET_SCOPES,
    GRAPH_SPLITS,
    OVERRIDE_ACTIONS,
    OVERRIDES,
    check_agent_id,
)
from memlake.settings import Settings
from memlake.text import content_words

FOLDED_ENTRIES = "memlake.folded_entries"  # the facts file's stamp: `log_entries` when the fold read the logs


def write_override(
    settings: Settings,
    agent_id: str,
    action: str,
    *,
    content: str | None = None,
    fact_id: str | None = None,
    type: str | None = None,  # noqa: A002 - the fact's type, as in the schema
    subject: str | None = None,
    slot: str | None = None,
    value: str | None = None,
    confidence: float | None = None,
    importance: float | None = None,
    tags: Sequence[str] = (),
    valid_from: datetime | str | None = None,
    valid_until: datetime | str | None = None,
    target: dict[str, Any] | None = None,
    author: str = "api",
    at: datetime | None = None,
) -> Override:
    """Append one override: `add` a fact, `correct` FACT_ID with `content`, or `reject` FACT_ID."""
    check_agent_id(agent_id)
    if action not in OVERRIDE_ACTIONS:
        raise BadRequest(f"unknown override action {action!r}: one of {', '.join(OVERRIDE_ACTIONS)}")
    if action in ("add", "correct") and not (content or "").strip():
        raise BadRequest(f"an override that does {action!r} needs the fact's content")
    if action in ("correct", "reject") and not fact_id:
        raise BadRequest(f"an override that does {action!r} needs the fact id it replaces")
    if type is not None and type not in FACT_TYPES:
        raise BadRequest(f"unknown fact type {type!r}: one of {', '.join(FACT_TYPES)}")
    for name, number in (("confidence", confidence), ("importance", importance)):
        if number is not None and not 0.0 <= number <= 1.0:
            raise BadRequest(f"{name} must be in [0, 1], got {number}")
    start, end = as_utc_or_none(valid_from), as_utc_or_none(valid_until)
    if start is not None and end is not None and end <= start:
        raise BadRequest(f"valid_until ({valid_until}) is not after valid_from ({valid_from})")
    written_at = parse_as_of(at)  # None: now
    override_id = f"o_{uuid.uuid4().hex[:16]}"
    target = target or {}
    row = {
        "override_id": override_id,
        "agent_id": agent_id,
        "action": action,
        "fact_id": fact_id,
        "type": type,
        "subject": subject,
        "slot": slot,
        "value": value,
        "content": (content or "").strip() or None,
        "confidence": confidence,
        "importance": importance,
        "tags": [t.strip().lower() for t in tags if t.strip()],
        "valid_from": start,
        "valid_until": end,
        "target_subject": target.get("subject"),
        "target_slot": target.get("slot"),
        "target_content": target.get("content"),
        "written_at": written_at,
        "author": author,
    }
    append_entry(settings, OVERRIDES, [row], override_id, written_at)
    return override_from_row(row)


def write_forget(
    settings: Settings,
    agent_id: str,
    scope: str,
    target: str | None = None,
    reason: str | None = None,
    at: datetime | None = None,
) -> Forget:
    """Append one forget entry: an agent, a conversation (id) or a fact (id)."""
    check_agent_id(agent_id)
    if scope not in FORGET_SCOPES:
        raise BadRequest(f"unknown forget scope {scope!r}: one of {', '.join(FORGET_SCOPES)}")
    if scope != "agent" and not target:
        raise BadRequest(f"forgetting a {scope} needs its id")
    written_at = parse_as_of(at)  # None: now
    forget_id = f"x_{uuid.uuid4().hex[:16]}"
    row = {
        "forget_id": forget_id,
        "agent_id": agent_id,
        "scope": scope,
        "target": target if scope != "agent" else None,
        "written_at": written_at,
        "reason": reason,
    }
    append_entry(settings, FORGET, [row], forget_id, written_at)
    return forget_from_row(row)


def override_from_row(row: dict[str, Any]) -> Override:
    return Override(
        override_id=row["override_id"],
        agent_id=row["agent_id"],
        action=row["action"],
        written_at=row["written_at"],
        fact_id=row.get("fact_id"),
        type=row.get("type"),
        subject=row.get("subject"),
        slot=row.get("slot"),
        value=row.get("value"),
        content=row.get("content"),
        confidence=row.get("confidence"),
        importance=row.get("importance"),
        tags=tuple(row.get("tags") or ()),
        valid_from=row.get("valid_from"),
        valid_until=row.get("valid_until"),
        target_subject=row.get("target_subject"),
        target_slot=row.get("target_slot"),
        target_content=row.get("target_content"),
    )


def forget_from_row(row: dict[str, Any]) -> Forget:
    return Forget(
        forget_id=row["forget_id"],
        agent_id=row["agent_id"],
        scope=row["scope"],
        written_at=row["written_at"],
        target=row.get("target"),
    )


def log_entries(settings: Settings) -> str:
    """Which override, forget and graph split entries exist now, as a short digest of their names ("" when none).
    A split is in it so that a run folds again, and the graph downstream is built again without the merge."""
    names = [f"{table.name}/{name}" for table in (OVERRIDES, FORGET, GRAPH_SPLITS)
             for name in log_files(log_dir(settings, table))]
    return hashlib.sha256("\n".join(names).encode()).hexdigest()[:16] if names else ""


def entries_unfolded(settings: Settings, lake: Lake) -> bool:
    """Whether override or forget entries were written since the facts table was last folded."""
    return log_entries(settings) != (lake.stamp(FACTS, FOLDED_ENTRIES) or "")


def read_overrides(settings: Settings, agent_id: str | None = None) -> list[Override]:
    return [override_from_row(r) for r in read_log(settings, OVERRIDES, agent_id).iter_rows(named=True)]


def read_forgets(settings: Settings, agent_id: str | None = None) -> list[Forget]:
    return [forget_from_row(r) for r in read_log(settings, FORGET, agent_id).iter_rows(named=True)]


def structure_statement(text: str, said_at: datetime) -> list[dict[str, Any]]:
    """Type, subject, slot, value, content and dates of each fact a remembered statement holds, by the offline
    distiller's rules, those with a slot first; then each part of it the rules left unread, as said in the third
    person (`said_as_is`), so that everything the user said is written.

    "I moved to Paris last week" -> home_city = Paris, valid from the week before `said_at`; "I'm left-handed"
    (no rule) -> "The user is left-handed.".
    """
    message = Message(message_id="remember", role="user", content=text, created_at=said_at)
    try:
        session = distill_offline(Conversation("remember", "remember", None, (message,)))
        candidates = sorted(session.fact_candidates, key=lambda c: not c.slot)  # stable: the rules' order otherwise
    except Exception:  # a rule that trips on odd text must not stop a user's override
        candidates = []
    found = [
        {
            "type": c.type,
            "subject": c.subject,
            "slot": c.slot,
            "value": c.value,
            "content": c.content,
            "valid_from": c.valid_from,
            "valid_until": c.valid_until,
        }
        for c in candidates
    ]
    unread = unread_statements(text, found, said_at)
    if any(fact["slot"] for fact in found):
        # "I left Toronto and now live in Montreal": leaving the old value is the same change as the new value, which
        # ends the old one when it is folded; written apart (as read, or as said), it is a second fact of one move
        left = [content_words(f["value"]) for f in found if not f["slot"] and (f["value"] or "").startswith("left ")]
        found = [fact for fact in found if fact["slot"] or content_words(fact["value"]) not in left]
        unread = [statement for statement in unread if not any(words <= content_words(statement) for words in left)]
    return found + [as_said(statement) for statement in unread]
