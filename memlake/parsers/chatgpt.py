"""The ChatGPT data export (`conversations.json`): the branch the user last saw of each conversation."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memlake.parsers.fields import (
    as_dict,
    as_list,
    at,
    clean,
    epoch_time,
    export_conversation,
    opt_str,
    req_str,
    type_name,
)
from memlake.parsers.parsed import ParsedConversation, ParsedMessage, ShapeError


def parse_chatgpt(value: Any) -> list[ParsedConversation]:
    """Conversations of a ChatGPT export: for each, the path from current_node up to the root."""
    items = as_list(value, "conversations")
    return [_chatgpt_conversation(as_dict(raw, f"conversations[{i}]"), f"conversations[{i}]")
            for i, raw in enumerate(items)]


def _chatgpt_conversation(conv: dict[str, Any], loc: str) -> ParsedConversation:
    """One ChatGPT conversation: only the visible branch, skipped messages counted by reason."""
    conversation_id = opt_str(conv, "id", loc) or opt_str(conv, "conversation_id", loc)
    if conversation_id is None:
        raise ShapeError(at(loc, "id"), "missing conversation id")
    title = opt_str(conv, "title", loc)
    started_at = epoch_time(conv.get("create_time"), at(loc, "create_time"))
    mapping = as_dict(conv.get("mapping"), at(loc, "mapping"))
    path = _chatgpt_visible_path(mapping, conv.get("current_node"), loc)
    return export_conversation(conversation_id, title, started_at, _chatgpt_messages(mapping, path, loc))


def _chatgpt_messages(mapping: dict[str, Any], path: list[str], loc: str) -> Iterator[tuple[ParsedMessage | str, str]]:
    """Each message on the visible path (or why it is skipped), with where its id is."""
    for node_id in path:
        node_loc = f"{loc}.mapping.{node_id}"
        raw_message = mapping[node_id].get("message")
        if raw_message is None:  # the root node carries no message
            continue
        parsed = _chatgpt_message(as_dict(raw_message, at(node_loc, "message")), node_id, node_loc)
        yield parsed, at(node_loc, "message.id")


def _chatgpt_visible_path(mapping: dict[str, Any], current_node: Any, loc: str) -> list[str]:
    """Node ids from the root down to current_node: the branch the user last saw.

    Other branches (edited prompts, regenerated answers) hang off this path and are left out.
    """
    if current_node is None:
        if not mapping:
            return []
        raise ShapeError(at(loc, "current_node"), "missing current_node")
    if not isinstance(current_node, str):
        raise ShapeError(at(loc, "current_node"), f"expected a string, got {type_name(current_node)}")
    path: list[str] = []
    seen: set[str] = set()
    node_id = current_node
    pointer = at(loc, "current_node")  # where node_id was named, for a dangling reference
    while True:
        node_loc = f"{loc}.mapping.{node_id}"
        if node_id in seen:
            raise ShapeError(node_loc, "cycle in parent links")
        if node_id not in mapping:
            raise ShapeError(pointer, f"points to node {node_id[:80]!r}, which is not in mapping")
        seen.add(node_id)
        node = as_dict(mapping[node_id], node_loc)
        path.append(node_id)
        parent = node.get("parent")
        if parent is None:
            break
        if not isinstance(parent, str):
            raise ShapeError(at(node_loc, "parent"), f"expected a string, got {type_name(parent)}")
        pointer = at(node_loc, "parent")
        node_id = parent
    path.reverse()
    return path


def _chatgpt_message(msg: dict[str, Any], node_id: str, node_loc: str) -> ParsedMessage | str:
    """A visible ChatGPT message, or the reason it is skipped."""
    loc = at(node_loc, "message")
    author = as_dict(msg.get("author"), at(loc, "author"))
    role = req_str(author, "role", at(loc, "author"))
    if role == "system":
        return "system"
    metadata = msg.get("metadata")
    if metadata is not None and as_dict(metadata, at(loc, "metadata")).get(
        "is_visually_hidden_from_conversation"
    ) is True:
        return "hidden"
    if role not in ("user", "assistant", "tool"):
        # The export's own vocabulary may grow; an unknown role is skipped, not fatal.
        return "unknown_role"
    recipient = msg.get("recipient")
    if role == "assistant" and isinstance(recipient, str) and recipient != "all":
        return "tool_call"  # an assistant message addressed to a tool is not shown
    content = as_dict(msg.get("content"), at(loc, "content"))
    content_type = req_str(content, "content_type", at(loc, "content"))
    if content_type not in ("text", "multimodal_text"):
        return "non_text"  # code, execution output, browsing, reasoning, ...
    parts = as_list(content.get("parts"), at(loc, "content.parts"))
    texts: list[str] = []
    non_text = False
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and part.get("content_type") == "audio_transcription" \
                and isinstance(part.get("text"), str):
            texts.append(part["text"])  # voice mode: the transcript is what was said
        else:
            non_text = True  # images, audio and other attachments
    text = clean("\n".join(t for t in texts if t.strip()))
    if not text.strip():
        return "non_text" if non_text else "empty"
    author_name = author.get("name")
    return ParsedMessage(
        message_id=opt_str(msg, "id", loc) or node_id,
        role=role,
        content=text,
        created_at=epoch_time(msg.get("create_time"), at(loc, "create_time")),
        speaker=clean(author_name) if isinstance(author_name, str) and author_name else None,
    )
