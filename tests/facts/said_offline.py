"""What the offline distiller reads in what the user says, as the fold's inputs: for tests from chat to facts."""

from __future__ import annotations

from datetime import UTC, datetime

from memlake.distill.models import Conversation, Message
from memlake.distill.offline import distill_offline
from memlake.facts.fold import Candidate
from memlake.moments import as_utc_if_moment


def at(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=UTC)


def said_offline(text: str, when: str) -> list[Candidate]:
    """What the offline distiller reads in the user's `text` said at `when`, as fold inputs."""
    session = distill_offline(Conversation("ann", when, None, (Message(f"{when}-m", "user", text, at(when)),)))
    return [Candidate(agent_id="ann", type=c.type, subject=c.subject, slot=c.slot, value=c.value, content=c.content,
                      created_at=at(when), tags=tuple(c.tags), valid_from=as_utc_if_moment(c.valid_from),
                      valid_until=as_utc_if_moment(c.valid_until), conversation_id=when,
                      message_ids=tuple(c.message_ids)) for c in session.fact_candidates]
