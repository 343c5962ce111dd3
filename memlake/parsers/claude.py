"""The Claude data export (`conversations.json`): text blocks of each message, in list order."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memlake.parsers.fields import (
    as_dict,
    as_list,
    at,
    export_conversation,
    iso_time,
    opt_str,
    req_str,
)
from memlake.parsers.parsed import ParsedConversation, ParsedMessage

_CLAUDE_ROLES = {"human": "user", "assistant": "assistant"}


def parse_claude(value: Any) -> list[ParsedConversation]:
    """Conversations of a Claude export, messages in list order."""
    items = as_list(value, "conversations")
    return [_claude_conversation(as_dict(raw, f"conversations[{i}]"), f"conversations[{i}]")
            for i, raw in enumerate(items)]


def _claude_conversation(conv: dict[str, Any], loc: str) -> ParsedConversation:
    """One Claude conversation: text blocks only; thinking and tool blocks are not the text."""
    conversation_id = req_str(conv, "uuid", loc)
    title = opt_str(conv, "name", loc)
    started_at = iso_time(conv.get("created_at"), at(loc, "created_at"))
    raw_messages = as_list(conv.get("chat_messages"), at(loc, "chat_messages"))
    return export_conversation(conversation_id, title, started_at, _claude_messages(raw_messages, loc))


def _claude_messages(raw_messages: list[Any], loc: str) -> Iterator[tuple[ParsedMessage | str, str]]:
    """Each message (or why it is skipped), with where its id is."""
    for j, raw in enumerate(raw_messages):
        msg_loc = at(at(loc, "chat_messages"), j)
        yield _claude_message(as_dict(raw, msg_loc), msg_loc), at(msg_loc, "uuid")


def _claude_message(msg: dict[str, Any], loc: str) -> ParsedMessage | str:
    """A Claude message, or the reason it is skipped."""
    role = _CLAUDE_ROLES.get(req_str(msg, "sender", loc))
    if role is None:
        return "unknown_role"
    blocks = msg.get("content")
    non_text = False
    if blocks is None:
        # Older exports have no content list; only then is the top-level text the message.
        text = opt_str(msg, "text", loc) or ""
    else:
        texts: list[str] = []
        for k, raw_block in enumerate(as_list(blocks, at(loc, "content"))):
            block_loc = at(at(loc, "content"), k)
            block = as_dict(raw_block, block_loc)
            if req_str(block, "type", block_loc) == "text":
                block_text = opt_str(block, "text", block_loc)
                if block_text and block_text.strip():
                    texts.append(block_text)
            else:
                non_text = True  # thinking, tool_use, tool_result, images, ...
        text = "\n\n".join(texts)
    if not text.strip():
        return "non_text" if non_text else "empty"
    return ParsedMessage(
        message_id=opt_str(msg, "uuid", loc),
        role=role,
        content=text,
        created_at=iso_time(msg.get("created_at"), at(loc, "created_at")),
        speaker=None,
    )
