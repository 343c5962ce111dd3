"""Reading untrusted values: JSON text and lines, typed fields, times, and the message lists parsers build."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from datetime import UTC, date, datetime
from typing import Any

from memlake.moments import as_utc, utc
from memlake.parsers.parsed import ParsedConversation, ParsedMessage, ShapeError
from memlake.schemas import agent_id_problem


def load_json(text: str) -> Any:
    """Strict JSON: NaN and Infinity are not JSON, so they are refused."""
    return json.loads(text, parse_constant=_refuse_constant)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def numbered_lines(text: str) -> Iterator[tuple[int, str]]:
    """Numbered lines of a text file. Splits on newline only: JSON strings may hold U+2028."""
    for number, line in enumerate(text.split("\n"), start=1):
        yield number, line.removesuffix("\r")


def at(location: str, key: str | int) -> str:
    """The location of a key or index inside `location`."""
    if isinstance(key, int):
        return f"{location}[{key}]"
    return f"{location}.{key}" if location else key


def type_name(value: Any) -> str:
    """A JSON-ish name for the type of a value, for error messages."""
    if value is None:
        return "null"
    return {dict: "object", list: "list", str: "string", bool: "boolean", int: "integer",
            float: "number"}.get(type(value), type(value).__name__)


def as_dict(value: Any, location: str) -> dict[str, Any]:
    """`value` as a JSON object, or a ShapeError."""
    if not isinstance(value, dict):
        raise ShapeError(location or None, f"expected an object, got {type_name(value)}")
    return value


def as_list(value: Any, location: str) -> list[Any]:
    """`value` as a JSON list, or a ShapeError."""
    if not isinstance(value, list):
        raise ShapeError(location or None, f"expected a list, got {type_name(value)}")
    return value


def clean(text: str) -> str:
    """`text` as valid Unicode: JSON escapes can smuggle in lone surrogates, which Parquet refuses."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def opt_str(obj: dict[str, Any], key: str, location: str) -> str | None:
    """An optional string field: absent, null or empty gives None; another type is a ShapeError."""
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ShapeError(at(location, key), f"expected a string, got {type_name(value)}")
    return clean(value) or None


def req_str(obj: dict[str, Any], key: str, location: str) -> str:
    """A required, non-empty string field."""
    if key not in obj:
        raise ShapeError(at(location, key), "missing")
    value = opt_str(obj, key, location)
    if value is None:
        raise ShapeError(at(location, key), "empty")
    return value


def checked_agent_id(value: Any, location: str) -> str | None:
    """An agent id carried by the file: None when absent or empty, else it must be valid."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ShapeError(location, f"expected a string, got {type_name(value)}")
    problem = agent_id_problem(value)  # the one agent id rule (schemas)
    if problem is not None:
        raise ShapeError(location, f"invalid agent_id {value[:80]!r}: {problem}")
    return value


def _checked_utc(value: datetime, location: str) -> datetime:
    """`moments.utc` of a value read from a file: out of range, a ShapeError at `location`; a plain datetime."""
    try:
        value = utc(value)
    except (OverflowError, ValueError) as exc:
        raise ShapeError(location, f"time out of range: {exc}") from None
    if type(value) is not datetime:
        # pyarrow hands out pandas.Timestamp for nanosecond columns; callers get stdlib datetimes.
        value = datetime(value.year, value.month, value.day, value.hour, value.minute, value.second,
                         value.microsecond, tzinfo=UTC)
    return value


def iso_time(value: Any, location: str) -> datetime | None:
    """An ISO 8601 date or datetime (naive means UTC) as aware UTC; null or empty gives None."""
    if value is None:
        return None
    if isinstance(value, datetime):  # Parquet timestamp columns
        return _checked_utc(value, location)
    if isinstance(value, date):  # Parquet date columns: the day's first moment
        return as_utc(value)
    if not isinstance(value, str):
        raise ShapeError(location, f"expected an ISO 8601 string, got {type_name(value)}")
    text = value.strip()
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise ShapeError(location, f"unparseable date {value[:60]!r}") from None
    return _checked_utc(parsed, location)


def epoch_time(value: Any, location: str) -> datetime | None:
    """Epoch seconds (int or float) as aware UTC; null gives None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ShapeError(location, f"expected epoch seconds, got {type_name(value)}")
    try:
        if not math.isfinite(value):
            raise ValueError("not finite")
        return datetime.fromtimestamp(value, UTC)
    except (OverflowError, OSError, ValueError) as exc:
        raise ShapeError(location, f"epoch seconds out of range: {exc}") from None


def count_skipped(skipped: dict[str, int], reason: str) -> None:
    skipped[reason] = skipped.get(reason, 0) + 1


def earliest(messages: Iterable[ParsedMessage]) -> datetime | None:
    """The earliest message time, or None when no message has one."""
    times = [m.created_at for m in messages if m.created_at is not None]
    return min(times) if times else None


def add_message(messages: list[ParsedMessage], seen_ids: set[str], message: ParsedMessage,
                 location: str) -> None:
    """Append a message, refusing a message id the conversation already has."""
    if message.message_id is not None:
        if message.message_id in seen_ids:
            raise ShapeError(location, f"duplicate message id {message.message_id[:80]!r} in conversation")
        seen_ids.add(message.message_id)
    messages.append(message)


def export_conversation(conversation_id: str, title: str | None, started_at: datetime | None,
                        candidates: Iterable[tuple[ParsedMessage | str, str]]) -> ParsedConversation:
    """A conversation of an export from its messages in order, each a message or the reason it is skipped,
    with where its message id is (for a duplicate id)."""
    messages: list[ParsedMessage] = []
    skipped: dict[str, int] = {}
    seen_ids: set[str] = set()
    for parsed, id_location in candidates:
        if isinstance(parsed, str):
            count_skipped(skipped, parsed)
        else:
            add_message(messages, seen_ids, parsed, id_location)
    return ParsedConversation(
        conversation_id=conversation_id,
        agent_id=None,
        title=title,
        started_at=started_at or earliest(messages),
        messages=messages,
        skipped=skipped,
    )
