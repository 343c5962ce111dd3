"""The ingest JSON the HTTP service accepts: {agent_id, conversation_id, turns: [{user, assistant}]}."""

from __future__ import annotations

from typing import Any

from memlake.parsers.fields import (
    as_dict,
    as_list,
    at,
    checked_agent_id,
    clean,
    count_skipped,
    iso_time,
    opt_str,
    req_str,
    type_name,
)
from memlake.parsers.parsed import ParsedConversation, ParsedMessage, ShapeError
from memlake.schemas import PROXY_ORIGIN


def parse_ingest_json(value: Any) -> list[ParsedConversation]:
    """Conversations from ingest JSON: one object, or a list of them."""
    if isinstance(value, dict):
        return [_ingest_conversation(value, "")]
    items = as_list(value, "")
    return [_ingest_conversation(as_dict(raw, f"[{i}]"), f"[{i}]") for i, raw in enumerate(items)]


def _ingest_conversation(obj: dict[str, Any], loc: str) -> ParsedConversation:
    """One ingest object: {agent_id, conversation_id, turns: [{user, assistant}], session_date?, origin?}."""
    session = iso_time(obj.get("session_date"), at(loc, "session_date"))
    origin = obj.get("origin")
    if origin not in (None, PROXY_ORIGIN):
        raise ShapeError(at(loc, "origin"), f'expected "{PROXY_ORIGIN}" or nothing, got {origin!r}'[:200])
    turns = as_list(obj.get("turns"), at(loc, "turns"))
    conv = ParsedConversation(
        conversation_id=req_str(obj, "conversation_id", loc),
        agent_id=checked_agent_id(obj.get("agent_id"), at(loc, "agent_id")),
        title=opt_str(obj, "title", loc),
        started_at=session,
        origin=origin,
    )
    for t, raw in enumerate(turns):
        turn_loc = at(at(loc, "turns"), t)
        turn = as_dict(raw, turn_loc)
        for role in ("user", "assistant"):
            text = turn.get(role)
            if text is None:
                continue  # e.g. a last turn still waiting for its answer
            if not isinstance(text, str):
                raise ShapeError(at(turn_loc, role), f"expected a string, got {type_name(text)}")
            if not text.strip():
                count_skipped(conv.skipped, "empty")
                continue
            conv.messages.append(ParsedMessage(message_id=None, role=role, content=clean(text),
                                               created_at=None, speaker=None))
    return conv
