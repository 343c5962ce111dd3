"""Generic message tables (JSONL, CSV with a header, Parquet): one message per row, grouped into conversations."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from memlake.parsers.fields import (
    add_message,
    checked_agent_id,
    clean,
    count_skipped,
    earliest,
    iso_time,
    load_json,
    numbered_lines,
    type_name,
)
from memlake.parsers.parsed import ROLES, ParsedConversation, ParsedMessage, ShapeError

# Columns of the generic message tables (JSONL, CSV, Parquet).
TABLE_REQUIRED_COLUMNS = ("conversation_id", "role", "content", "created_at")

# conversation_started_at: when the conversation opened, if before its first message kept (an export's own start)
TABLE_OPTIONAL_COLUMNS = ("agent_id", "message_id", "speaker", "title", "conversation_started_at")


# Message text may be long (pasted logs); Python's csv default caps a field at 128 KiB.
_CSV_FIELD_LIMIT = 1 << 28


def csv_header_lacks(header: list[str]) -> str:
    """What a CSV header lacks of the required columns, and what it has."""
    missing = [c for c in TABLE_REQUIRED_COLUMNS if c not in header]
    return f"CSV header lacks {_and(missing)} (it has {_and(header) or 'no columns'})"


def _and(names: list[str]) -> str:
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


@dataclass(frozen=True)
class _Row:
    """One message row, its cells checked: the conversation it belongs to and the message it holds."""

    agent_id: str | None
    conversation_id: str
    title: str | None
    started_at: datetime | None  # the conversation's start, if the row says it
    message: ParsedMessage  # its content may be blank: the grouper counts that as skipped
    known_role: bool  # a role outside ROLES is skipped, as the exports skip theirs


def _read_row(row: dict[str, Any], loc: str, *, empty_is_null: bool) -> _Row:
    """The checked cells of one row; `loc` names it ("line 17", "row 3") for errors."""

    def cell(column: str) -> Any:
        value = row.get(column)
        # CSV has no null: an empty cell of an optional column means "not given".
        if empty_is_null and value == "":
            return None
        return value

    def where(column: str) -> str:
        return f"{loc}, column {column}"

    for column in TABLE_REQUIRED_COLUMNS:
        if column not in row:
            raise ShapeError(where(column), "missing required column")
    agent_id = checked_agent_id(cell("agent_id"), where("agent_id"))
    conversation_id = _table_str(cell("conversation_id"), where("conversation_id"))
    if not conversation_id:
        raise ShapeError(where("conversation_id"), "empty")
    role = _table_str(cell("role"), where("role"))
    if not role:  # a row with no role is broken; one with a role we do not know is only skipped
        raise ShapeError(where("role"), f"empty: expected one of {', '.join(ROLES)}")
    content = row.get("content")
    if not isinstance(content, str):
        raise ShapeError(where("content"), f"expected a string, got {type_name(content)}")
    created_at = iso_time(cell("created_at"), where("created_at"))
    message_id = _table_str(cell("message_id"), where("message_id")) or None
    speaker = _table_str(cell("speaker"), where("speaker")) or None
    message = ParsedMessage(message_id=message_id, role=role, content=clean(content), created_at=created_at,
                            speaker=speaker)
    title = _table_str(cell("title"), where("title")) or None
    started_at = iso_time(cell("conversation_started_at"), where("conversation_started_at"))
    return _Row(agent_id, conversation_id, title, started_at, message, known_role=role in ROLES)


class _Grouper:
    """Builds conversations from message rows, grouped by (agent_id, conversation_id) in first-seen order."""

    def __init__(self) -> None:
        self.conversations: dict[tuple[str | None, str], ParsedConversation] = {}
        self.seen_ids: dict[tuple[str | None, str], set[str]] = {}
        self.said_started: dict[tuple[str | None, str], datetime] = {}  # the earliest start a row gave

    def add(self, row: dict[str, Any], loc: str, *, empty_is_null: bool) -> None:
        """Add one row; `loc` names it ("line 17", "row 3") for errors."""
        read = _read_row(row, loc, empty_is_null=empty_is_null)
        key = (read.agent_id, read.conversation_id)
        conv = self.conversations.get(key)
        if conv is None:
            conv = ParsedConversation(conversation_id=read.conversation_id, agent_id=read.agent_id,
                                      title=read.title, started_at=None)
            self.conversations[key] = conv
            self.seen_ids[key] = set()
        if conv.title is None:
            conv.title = read.title
        if read.started_at is not None:
            said = self.said_started.get(key)
            self.said_started[key] = read.started_at if said is None else min(said, read.started_at)
        if not read.known_role:
            count_skipped(conv.skipped, "unknown_role")
            return
        if not read.message.content.strip():
            count_skipped(conv.skipped, "empty")
            return
        add_message(conv.messages, self.seen_ids[key], read.message, f"{loc}, column message_id")

    def result(self) -> list[ParsedConversation]:
        """The conversations, each started at its earliest message, or at the start a row gave if earlier."""
        for key, conv in self.conversations.items():
            times = [t for t in (earliest(conv.messages), self.said_started.get(key)) if t is not None]
            conv.started_at = min(times) if times else None
        return list(self.conversations.values())


def _table_str(value: Any, location: str) -> str | None:
    """A string cell of a message table (None stays None)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ShapeError(location, f"expected a string, got {type_name(value)}")
    return clean(value)


def parse_jsonl(text: str) -> list[ParsedConversation]:
    """Conversations from JSONL, one message object per line; blank lines ignored."""
    grouper = _Grouper()
    for number, line in numbered_lines(text):
        if not line.strip():
            continue
        try:
            value = load_json(line)
        except ValueError as exc:
            message = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise ShapeError(f"line {number}", f"invalid JSON: {message}") from None
        if not isinstance(value, dict):
            raise ShapeError(f"line {number}", f"expected a JSON object, got {type_name(value)}")
        grouper.add(value, f"line {number}", empty_is_null=False)
    return grouper.result()


def parse_csv(text: str) -> list[ParsedConversation]:
    """Conversations from CSV with a header row; rows are named by the line they end on."""
    if csv.field_size_limit() < _CSV_FIELD_LIMIT:
        csv.field_size_limit(_CSV_FIELD_LIMIT)  # only ever raised, so concurrent readers are safe
    reader = csv.reader(io.StringIO(text, newline=""))
    grouper = _Grouper()
    try:
        header = [cell.strip() for cell in next(reader, [])]
        if len(set(header)) != len(header):
            raise ShapeError("line 1", "duplicate column names in header")
        if any(c not in header for c in TABLE_REQUIRED_COLUMNS):
            raise ShapeError("line 1", csv_header_lacks(header))
        for cells in reader:
            loc = f"line {reader.line_num}"
            if not any(cell.strip() for cell in cells):
                continue  # a blank line
            if len(cells) != len(header):
                raise ShapeError(loc, f"expected {len(header)} fields, got {len(cells)}")
            grouper.add(dict(zip(header, cells, strict=True)), loc, empty_is_null=True)
    except csv.Error as exc:
        raise ShapeError(f"line {reader.line_num}", f"bad CSV: {exc}") from None
    return grouper.result()


def parse_parquet(data: bytes) -> list[ParsedConversation]:
    """Conversations from a Parquet table with the message-table columns."""
    try:
        table = pq.read_table(pa.BufferReader(data))
    except Exception as exc:  # pyarrow raises several types on corrupt files
        raise ShapeError(None, f"unreadable Parquet: {exc}") from None
    names = table.column_names
    for column in TABLE_REQUIRED_COLUMNS:
        if column not in names:
            raise ShapeError(f"column {column}", "missing required column")
    wanted = [c for c in (*TABLE_REQUIRED_COLUMNS, *TABLE_OPTIONAL_COLUMNS) if c in names]
    try:
        rows = table.select(wanted).to_pylist()
    except Exception as exc:  # out-of-range timestamps, duplicate columns, ...
        raise ShapeError(None, f"unreadable Parquet values: {exc}") from None
    grouper = _Grouper()
    for number, row in enumerate(rows, start=1):
        grouper.add(row, f"row {number}", empty_is_null=False)
    return grouper.result()
