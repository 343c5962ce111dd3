"""Landing-file parsers: one landing file in, a `ParsedFile` of conversations out.

Formats (see `FORMATS`): the ChatGPT and Claude data exports (`conversations.json`, bare or
inside the `.zip` the services hand out), generic message tables (JSONL, CSV with a header,
Parquet) and the ingest JSON the HTTP service accepts. The format is detected from the
content; the file name only sharpens the guess reported in an error.

Everything here treats the file as untrusted: a bad shape anywhere becomes a `ParseError`
carrying the format guess and where in the file it was found, which is what quarantine
needs. `parse_file` raises nothing else. Pure Python: no Dagster import.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import math
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

from memlake.schemas import agent_id_problem

FORMATS = ("chatgpt", "claude", "jsonl", "csv", "parquet", "ingest_json")
ROLES = ("user", "assistant", "system", "tool")

# Columns of the generic message tables (JSONL, CSV, Parquet).
TABLE_REQUIRED_COLUMNS = ("conversation_id", "role", "content", "created_at")
TABLE_OPTIONAL_COLUMNS = ("agent_id", "message_id", "speaker", "title")

# A zip member larger than this is refused: it guards against zip bombs, and no real
# conversations.json comes near it.
MAX_ZIP_MEMBER_BYTES = 1 << 30

# Message text may be long (pasted logs); Python's csv default caps a field at 128 KiB.
_CSV_FIELD_LIMIT = 1 << 28

_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a local file header, or an empty archive
_PARQUET_MAGIC = b"PAR1"

_T = TypeVar("_T")


@dataclass(frozen=True)
class ParsedMessage:
    """One visible message of a conversation, as the source gives it."""

    message_id: str | None  # the source's own id; None: the caller derives one from position
    role: str  # "user" | "assistant" | "system" | "tool"
    content: str
    created_at: datetime | None  # timezone-aware UTC
    speaker: str | None  # a display name, when the source has one


@dataclass
class ParsedConversation:
    """One conversation: its visible messages in order, and counts of what was skipped.

    A conversation may have zero messages (everything skipped); a file in which every
    conversation is empty is a ParseError instead.
    """

    conversation_id: str
    agent_id: str | None  # only when the file itself carries one
    title: str | None
    # The source's own conversation start, else the earliest message time, else None.
    started_at: datetime | None
    messages: list[ParsedMessage] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> count


@dataclass
class ParsedFile:
    """One landing file: its format and its conversations in file order."""

    source_format: str  # one of FORMATS
    conversations: list[ParsedConversation]
    archive: str | None = None  # "zip" when the export came zipped


class ParseError(ValueError):
    """A landing file that cannot be read. Carries what quarantine needs."""

    def __init__(self, message: str, *, format_guess: str | None, location: str | None) -> None:
        self.message = message
        self.format_guess = format_guess
        self.location = location
        super().__init__(f"{location}: {message}" if location else message)

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only arguments defeat the default exception pickling; runs in other
        # processes may need to ship this error back.
        return (_rebuild_parse_error, (self.message, self.format_guess, self.location))


def _rebuild_parse_error(message: str, format_guess: str | None, location: str | None) -> ParseError:
    """Unpickle a ParseError."""
    return ParseError(message, format_guess=format_guess, location=location)


def detect_format(path: Path) -> str:
    """The format of a landing file, one of FORMATS, read from its content.

    A zip is reported with the format of the export inside it. Raises ParseError when the
    content is not a format we read.
    """
    path = Path(path)
    return _guarded(path, lambda: _detect(path.read_bytes(), path.name).format)


def parse_file(path: Path) -> ParsedFile:
    """The conversations in one landing file; raises ParseError (and nothing else) on bad input."""
    path = Path(path)
    return _guarded(path, lambda: _parse_bytes(path.read_bytes(), path.name))


# --- top level ---------------------------------------------------------------------------


def _guarded(path: Path, work: Callable[[], _T]) -> _T:
    """Run `work`, turning any exception that is not already a ParseError into one."""
    try:
        return work()
    except ParseError:
        raise
    except RecursionError as exc:
        raise ParseError("nesting too deep to read", format_guess=_guess_from_name(path.name),
                         location=None) from exc
    except Exception as exc:  # the contract: bad input never escapes as another type
        raise ParseError(f"cannot read file: {type(exc).__name__}: {exc}",
                         format_guess=_guess_from_name(path.name), location=None) from exc


class _Bad(Exception):
    """A bad shape found by a format parser, before the format and prefix are attached."""

    def __init__(self, location: str | None, message: str) -> None:
        super().__init__(message)
        self.location = location
        self.message = message


@dataclass
class _Detected:
    """A detected format with the payload its parser needs (parsed JSON, text or bytes)."""

    format: str
    payload: Any
    archive: str | None = None
    location_prefix: str | None = None  # e.g. "zip member conversations.json"


def _parse_bytes(data: bytes, name: str) -> ParsedFile:
    """Detect the format of `data` and parse it."""
    detected = _detect(data, name)
    parsers: dict[str, Callable[[Any], list[ParsedConversation]]] = {
        "chatgpt": _parse_chatgpt,
        "claude": _parse_claude,
        "jsonl": _parse_jsonl,
        "csv": _parse_csv,
        "parquet": _parse_parquet,
        "ingest_json": _parse_ingest,
    }
    try:
        conversations = parsers[detected.format](detected.payload)
        _check_unique_conversations(conversations)
    except _Bad as bad:
        raise ParseError(bad.message, format_guess=detected.format,
                         location=_prefixed(detected.location_prefix, bad.location)) from None
    if not conversations:
        raise ParseError("no conversations in file", format_guess=detected.format,
                         location=detected.location_prefix)
    if not any(c.messages for c in conversations):
        skipped: dict[str, int] = {}
        for c in conversations:
            for reason, n in c.skipped.items():
                skipped[reason] = skipped.get(reason, 0) + n
        raise ParseError(f"no messages in any conversation (skipped: {skipped or 'none'})",
                         format_guess=detected.format, location=detected.location_prefix)
    return ParsedFile(source_format=detected.format, conversations=conversations,
                      archive=detected.archive)


def _prefixed(prefix: str | None, location: str | None) -> str | None:
    """Join a container location (a zip member) and a location inside it."""
    if prefix and location:
        return f"{prefix}, {location}"
    return prefix or location


def _check_unique_conversations(conversations: list[ParsedConversation]) -> None:
    """Refuse a file that names the same (agent, conversation) twice as separate conversations."""
    seen: set[tuple[str | None, str]] = set()
    for i, conv in enumerate(conversations):
        key = (conv.agent_id, conv.conversation_id)
        if key in seen:
            raise _Bad(f"conversation {i}", f"duplicate conversation id {conv.conversation_id!r}")
        seen.add(key)


# --- detection ---------------------------------------------------------------------------


def _detect(data: bytes, name: str) -> _Detected:
    """The format of `data`, from its content; the name only sharpens error guesses."""
    if not data.strip():
        raise ParseError("file is empty", format_guess=_guess_from_name(name), location=None)
    if data[:4] in _ZIP_MAGIC:
        return _detect_zip(data)
    if data[:4] == _PARQUET_MAGIC:
        return _Detected("parquet", data)
    return _detect_text(data, name)


def _detect_zip(data: bytes) -> _Detected:
    """The export inside a zip: its conversations.json, shallowest first."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except Exception as exc:  # zipfile raises many types on corrupt input
        raise ParseError(f"corrupt or truncated zip: {exc}", format_guess=None, location="zip") from None
    candidates = [
        info for info in infos
        if not info.is_dir()
        and PurePosixPath(info.filename).name == "conversations.json"
        and not info.filename.startswith("__MACOSX/")  # macOS resource forks, not JSON
    ]
    if not candidates:
        raise ParseError("zip holds no conversations.json", format_guess=None, location="zip")
    member = min(candidates, key=lambda info: (info.filename.count("/"), info.filename))
    where = f"zip member {member.filename}"
    if member.file_size > MAX_ZIP_MEMBER_BYTES:
        raise ParseError(f"member too large ({member.file_size} bytes)", format_guess=None, location=where)
    try:
        with archive.open(member) as fh:
            raw = fh.read(MAX_ZIP_MEMBER_BYTES + 1)
    except Exception as exc:  # bad CRC, bad deflate stream, encryption, truncation
        raise ParseError(f"cannot read member: {exc}", format_guess=None, location=where) from None
    if len(raw) > MAX_ZIP_MEMBER_BYTES:
        raise ParseError("member too large", format_guess=None, location=where)
    try:
        inner = _detect_text(raw, member.filename)
    except ParseError as err:
        raise ParseError(err.message, format_guess=err.format_guess,
                         location=_prefixed(where, err.location)) from None
    if inner.format not in ("chatgpt", "claude"):
        raise ParseError(f"conversations.json is {inner.format}, not a ChatGPT or Claude export",
                         format_guess=inner.format, location=where)
    return _Detected(inner.format, inner.payload, archive="zip", location_prefix=where)


def _detect_text(data: bytes, name: str) -> _Detected:
    """The format of a text file: an export or ingest JSON, JSONL, or CSV."""
    text = _decode(data, name)
    stripped = text.lstrip()
    if not stripped:
        raise ParseError("file is empty", format_guess=_guess_from_name(name), location=None)
    if stripped[0] in "[{":
        try:
            value = _load_json(text)
        except ValueError as exc:
            return _detect_broken_json(text, name, exc)
        fmt = _json_shape(value)
        if fmt is None:
            raise ParseError(f"unknown JSON shape ({_shape_hint(value)})",
                             format_guess=_guess_from_text(text, name), location=None)
        # A one-line JSONL file is also a JSON document; JSONL parses from the text.
        return _Detected(fmt, text if fmt == "jsonl" else value)
    header = _csv_header(text)
    missing = [c for c in ("conversation_id", "role", "content") if c not in (header or ())]
    if header is not None and not missing:
        return _Detected("csv", text)
    if _guess_from_name(name) == "csv":
        raise ParseError(_csv_header_lacks(header or []), format_guess="csv", location="line 1")
    raise ParseError("not a format memlake reads (JSON export, JSONL, CSV, Parquet or zip)",
                     format_guess=_guess_from_name(name), location=None)


def _csv_header_lacks(header: list[str]) -> str:
    """What a CSV header lacks of the required columns, and what it has."""
    missing = [c for c in TABLE_REQUIRED_COLUMNS if c not in header]
    return f"CSV header lacks {_and(missing)} (it has {_and(header) or 'no columns'})"


def _and(names: list[str]) -> str:
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


def _detect_broken_json(text: str, name: str, exc: ValueError) -> _Detected:
    """A text that starts like JSON but is not one document: JSONL, or broken JSON."""
    first = next((line for _, line in _lines(text) if line.strip()), "")
    try:
        first_value = _load_json(first)
    except ValueError:
        first_value = None
    if isinstance(first_value, dict) and _looks_like_row(first_value):
        return _Detected("jsonl", text)
    location = f"line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else None
    message = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
    raise ParseError(f"invalid JSON: {message}", format_guess=_guess_from_text(text, name),
                     location=location)


def _json_shape(value: Any) -> str | None:
    """The format of a parsed JSON document, or None when its shape is unknown."""
    if isinstance(value, list):
        if not value:
            raise ParseError("empty JSON list: no conversations", format_guess=None, location=None)
        for item in value:
            if isinstance(item, dict):
                if "mapping" in item:
                    return "chatgpt"
                if "chat_messages" in item:
                    return "claude"
                if "turns" in item:
                    return "ingest_json"
        return None
    if isinstance(value, dict):
        if "turns" in value:
            return "ingest_json"
        if _looks_like_row(value):
            return "jsonl"
    return None


def _looks_like_row(value: dict[str, Any]) -> bool:
    """Whether a JSON object looks like one generic message row."""
    return "role" in value and ("content" in value or "conversation_id" in value)


def _shape_hint(value: Any) -> str:
    """A short description of a JSON value for an error message."""
    if isinstance(value, dict):
        keys = ", ".join(sorted(str(k) for k in value)[:8])
        return f"an object with keys: {keys or 'none'}"
    if isinstance(value, list):
        first = next((item for item in value if isinstance(item, dict)), None)
        return f"a list of {_type_name(value[0])}" if first is None else f"a list of {_shape_hint(first)}"
    return f"a {_type_name(value)}"


def _guess_from_name(name: str) -> str | None:
    """The format a file name suggests; used only as a tie-break and in errors."""
    suffix = PurePosixPath(name.lower()).suffix
    return {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet",
            ".pq": "parquet"}.get(suffix)


def _guess_from_text(text: str, name: str) -> str | None:
    """The format broken JSON most likely was, from telltale keys, else from the name."""
    head = text[:200_000]
    for key, fmt in (('"mapping"', "chatgpt"), ('"chat_messages"', "claude"),
                     ('"turns"', "ingest_json"), ('"role"', "jsonl")):
        if key in head:
            return fmt
    return _guess_from_name(name)


def _decode(data: bytes, name: str) -> str:
    """The text of a file: UTF-8 (a BOM allowed), or UTF-16 with a BOM."""
    if data.startswith(codecs.BOM_UTF8):
        encoding = "utf-8-sig"
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"
    else:
        encoding = "utf-8"
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise ParseError(f"not {encoding.upper()} text: {exc.reason}", format_guess=_guess_from_name(name),
                         location=f"byte {exc.start}") from None


def _load_json(text: str) -> Any:
    """Strict JSON: NaN and Infinity are not JSON, so they are refused."""
    return json.loads(text, parse_constant=_refuse_constant)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _csv_header(text: str) -> list[str] | None:
    """The header row of a CSV text, or None if the first line is not CSV."""
    try:
        row = next(csv.reader(io.StringIO(text, newline="")), None)
    except csv.Error:
        return None
    return None if row is None else [cell.strip() for cell in row]


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """Numbered lines of a text file. Splits on newline only: JSON strings may hold U+2028."""
    for number, line in enumerate(text.split("\n"), start=1):
        yield number, line.removesuffix("\r")


# --- shared field access -----------------------------------------------------------------


def _at(location: str, key: str | int) -> str:
    """The location of a key or index inside `location`."""
    if isinstance(key, int):
        return f"{location}[{key}]"
    return f"{location}.{key}" if location else key


def _type_name(value: Any) -> str:
    """A JSON-ish name for the type of a value, for error messages."""
    if value is None:
        return "null"
    return {dict: "object", list: "list", str: "string", bool: "boolean", int: "integer",
            float: "number"}.get(type(value), type(value).__name__)


def _as_dict(value: Any, location: str) -> dict[str, Any]:
    """`value` as a JSON object, or a _Bad."""
    if not isinstance(value, dict):
        raise _Bad(location or None, f"expected an object, got {_type_name(value)}")
    return value


def _as_list(value: Any, location: str) -> list[Any]:
    """`value` as a JSON list, or a _Bad."""
    if not isinstance(value, list):
        raise _Bad(location or None, f"expected a list, got {_type_name(value)}")
    return value


def _clean(text: str) -> str:
    """`text` as valid Unicode: JSON escapes can smuggle in lone surrogates, which Parquet refuses."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _opt_str(obj: dict[str, Any], key: str, location: str) -> str | None:
    """An optional string field: absent, null or empty gives None; another type is a _Bad."""
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _Bad(_at(location, key), f"expected a string, got {_type_name(value)}")
    return _clean(value) or None


def _req_str(obj: dict[str, Any], key: str, location: str) -> str:
    """A required, non-empty string field."""
    if key not in obj:
        raise _Bad(_at(location, key), "missing")
    value = _opt_str(obj, key, location)
    if value is None:
        raise _Bad(_at(location, key), "empty")
    return value


def _agent_id(value: Any, location: str) -> str | None:
    """An agent id carried by the file: None when absent or empty, else it must be valid."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise _Bad(location, f"expected a string, got {_type_name(value)}")
    problem = agent_id_problem(value)  # the one agent id rule (schemas)
    if problem is not None:
        raise _Bad(location, f"invalid agent_id {value[:80]!r}: {problem}")
    return value


def _utc(value: datetime, location: str) -> datetime:
    """A plain datetime in UTC; a naive one is taken as UTC already."""
    try:
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except (OverflowError, ValueError) as exc:
        raise _Bad(location, f"time out of range: {exc}") from None
    if type(value) is not datetime:
        # pyarrow hands out pandas.Timestamp for nanosecond columns; callers get stdlib datetimes.
        value = datetime(value.year, value.month, value.day, value.hour, value.minute, value.second,
                         value.microsecond, tzinfo=UTC)
    return value


def _iso_time(value: Any, location: str) -> datetime | None:
    """An ISO 8601 date or datetime (naive means UTC) as aware UTC; null or empty gives None."""
    if value is None:
        return None
    if isinstance(value, datetime):  # Parquet timestamp columns
        return _utc(value, location)
    if isinstance(value, date):  # Parquet date columns
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if not isinstance(value, str):
        raise _Bad(location, f"expected an ISO 8601 string, got {_type_name(value)}")
    text = value.strip()
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise _Bad(location, f"unparseable date {value[:60]!r}") from None
    return _utc(parsed, location)


def _epoch_time(value: Any, location: str) -> datetime | None:
    """Epoch seconds (int or float) as aware UTC; null gives None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Bad(location, f"expected epoch seconds, got {_type_name(value)}")
    try:
        if not math.isfinite(value):
            raise ValueError("not finite")
        return datetime.fromtimestamp(value, UTC)
    except (OverflowError, OSError, ValueError) as exc:
        raise _Bad(location, f"epoch seconds out of range: {exc}") from None


def _count(skipped: dict[str, int], reason: str) -> None:
    skipped[reason] = skipped.get(reason, 0) + 1


def _earliest(messages: Iterable[ParsedMessage]) -> datetime | None:
    """The earliest message time, or None when no message has one."""
    times = [m.created_at for m in messages if m.created_at is not None]
    return min(times) if times else None


def _add_message(messages: list[ParsedMessage], seen_ids: set[str], message: ParsedMessage,
                 location: str) -> None:
    """Append a message, refusing a message id the conversation already has."""
    if message.message_id is not None:
        if message.message_id in seen_ids:
            raise _Bad(location, f"duplicate message id {message.message_id[:80]!r} in conversation")
        seen_ids.add(message.message_id)
    messages.append(message)


# --- ChatGPT -----------------------------------------------------------------------------


def _parse_chatgpt(value: Any) -> list[ParsedConversation]:
    """Conversations of a ChatGPT export: for each, the path from current_node up to the root."""
    items = _as_list(value, "conversations")
    return [_chatgpt_conversation(_as_dict(raw, f"conversations[{i}]"), f"conversations[{i}]")
            for i, raw in enumerate(items)]


def _chatgpt_conversation(conv: dict[str, Any], loc: str) -> ParsedConversation:
    """One ChatGPT conversation: only the visible branch, skipped messages counted by reason."""
    conversation_id = _opt_str(conv, "id", loc) or _opt_str(conv, "conversation_id", loc)
    if conversation_id is None:
        raise _Bad(_at(loc, "id"), "missing conversation id")
    title = _opt_str(conv, "title", loc)
    started_at = _epoch_time(conv.get("create_time"), _at(loc, "create_time"))
    mapping = _as_dict(conv.get("mapping"), _at(loc, "mapping"))
    messages: list[ParsedMessage] = []
    skipped: dict[str, int] = {}
    seen_ids: set[str] = set()
    for node_id in _chatgpt_visible_path(mapping, conv.get("current_node"), loc):
        node_loc = f"{loc}.mapping.{node_id}"
        raw_message = mapping[node_id].get("message")
        if raw_message is None:  # the root node carries no message
            continue
        parsed = _chatgpt_message(_as_dict(raw_message, _at(node_loc, "message")), node_id, node_loc)
        if isinstance(parsed, str):
            _count(skipped, parsed)
        else:
            _add_message(messages, seen_ids, parsed, _at(node_loc, "message.id"))
    return ParsedConversation(
        conversation_id=conversation_id,
        agent_id=None,
        title=title,
        started_at=started_at or _earliest(messages),
        messages=messages,
        skipped=skipped,
    )


def _chatgpt_visible_path(mapping: dict[str, Any], current_node: Any, loc: str) -> list[str]:
    """Node ids from the root down to current_node: the branch the user last saw.

    Other branches (edited prompts, regenerated answers) hang off this path and are left out.
    """
    if current_node is None:
        if not mapping:
            return []
        raise _Bad(_at(loc, "current_node"), "missing current_node")
    if not isinstance(current_node, str):
        raise _Bad(_at(loc, "current_node"), f"expected a string, got {_type_name(current_node)}")
    path: list[str] = []
    seen: set[str] = set()
    node_id = current_node
    pointer = _at(loc, "current_node")  # where node_id was named, for a dangling reference
    while True:
        node_loc = f"{loc}.mapping.{node_id}"
        if node_id in seen:
            raise _Bad(node_loc, "cycle in parent links")
        if node_id not in mapping:
            raise _Bad(pointer, f"points to node {node_id[:80]!r}, which is not in mapping")
        seen.add(node_id)
        node = _as_dict(mapping[node_id], node_loc)
        path.append(node_id)
        parent = node.get("parent")
        if parent is None:
            break
        if not isinstance(parent, str):
            raise _Bad(_at(node_loc, "parent"), f"expected a string, got {_type_name(parent)}")
        pointer = _at(node_loc, "parent")
        node_id = parent
    path.reverse()
    return path


def _chatgpt_message(msg: dict[str, Any], node_id: str, node_loc: str) -> ParsedMessage | str:
    """A visible ChatGPT message, or the reason it is skipped."""
    loc = _at(node_loc, "message")
    author = _as_dict(msg.get("author"), _at(loc, "author"))
    role = _req_str(author, "role", _at(loc, "author"))
    if role == "system":
        return "system"
    metadata = msg.get("metadata")
    if metadata is not None and _as_dict(metadata, _at(loc, "metadata")).get(
        "is_visually_hidden_from_conversation"
    ) is True:
        return "hidden"
    if role not in ("user", "assistant", "tool"):
        # The export's own vocabulary may grow; an unknown role is skipped, not fatal.
        return "unknown_role"
    recipient = msg.get("recipient")
    if role == "assistant" and isinstance(recipient, str) and recipient != "all":
        return "tool_call"  # an assistant message addressed to a tool is not shown
    content = _as_dict(msg.get("content"), _at(loc, "content"))
    content_type = _req_str(content, "content_type", _at(loc, "content"))
    if content_type not in ("text", "multimodal_text"):
        return "non_text"  # code, execution output, browsing, reasoning, ...
    parts = _as_list(content.get("parts"), _at(loc, "content.parts"))
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
    text = _clean("\n".join(t for t in texts if t.strip()))
    if not text.strip():
        return "non_text" if non_text else "empty"
    author_name = author.get("name")
    return ParsedMessage(
        message_id=_opt_str(msg, "id", loc) or node_id,
        role=role,
        content=text,
        created_at=_epoch_time(msg.get("create_time"), _at(loc, "create_time")),
        speaker=_clean(author_name) if isinstance(author_name, str) and author_name else None,
    )


# --- Claude ------------------------------------------------------------------------------

_CLAUDE_ROLES = {"human": "user", "assistant": "assistant"}


def _parse_claude(value: Any) -> list[ParsedConversation]:
    """Conversations of a Claude export, messages in list order."""
    items = _as_list(value, "conversations")
    return [_claude_conversation(_as_dict(raw, f"conversations[{i}]"), f"conversations[{i}]")
            for i, raw in enumerate(items)]


def _claude_conversation(conv: dict[str, Any], loc: str) -> ParsedConversation:
    """One Claude conversation: text blocks only; thinking and tool blocks are not the text."""
    conversation_id = _req_str(conv, "uuid", loc)
    title = _opt_str(conv, "name", loc)
    started_at = _iso_time(conv.get("created_at"), _at(loc, "created_at"))
    raw_messages = _as_list(conv.get("chat_messages"), _at(loc, "chat_messages"))
    messages: list[ParsedMessage] = []
    skipped: dict[str, int] = {}
    seen_ids: set[str] = set()
    for j, raw in enumerate(raw_messages):
        msg_loc = _at(_at(loc, "chat_messages"), j)
        parsed = _claude_message(_as_dict(raw, msg_loc), msg_loc)
        if isinstance(parsed, str):
            _count(skipped, parsed)
        else:
            _add_message(messages, seen_ids, parsed, _at(msg_loc, "uuid"))
    return ParsedConversation(
        conversation_id=conversation_id,
        agent_id=None,
        title=title,
        started_at=started_at or _earliest(messages),
        messages=messages,
        skipped=skipped,
    )


def _claude_message(msg: dict[str, Any], loc: str) -> ParsedMessage | str:
    """A Claude message, or the reason it is skipped."""
    role = _CLAUDE_ROLES.get(_req_str(msg, "sender", loc))
    if role is None:
        return "unknown_role"
    blocks = msg.get("content")
    non_text = False
    if blocks is None:
        # Older exports have no content list; only then is the top-level text the message.
        text = _opt_str(msg, "text", loc) or ""
    else:
        texts: list[str] = []
        for k, raw_block in enumerate(_as_list(blocks, _at(loc, "content"))):
            block_loc = _at(_at(loc, "content"), k)
            block = _as_dict(raw_block, block_loc)
            if _req_str(block, "type", block_loc) == "text":
                block_text = _opt_str(block, "text", block_loc)
                if block_text and block_text.strip():
                    texts.append(block_text)
            else:
                non_text = True  # thinking, tool_use, tool_result, images, ...
        text = "\n\n".join(texts)
    if not text.strip():
        return "non_text" if non_text else "empty"
    return ParsedMessage(
        message_id=_opt_str(msg, "uuid", loc),
        role=role,
        content=text,
        created_at=_iso_time(msg.get("created_at"), _at(loc, "created_at")),
        speaker=None,
    )


# --- generic message tables: JSONL, CSV, Parquet -----------------------------------------


class _Grouper:
    """Builds conversations from message rows, grouped by (agent_id, conversation_id) in first-seen order."""

    def __init__(self) -> None:
        self.conversations: dict[tuple[str | None, str], ParsedConversation] = {}
        self.seen_ids: dict[tuple[str | None, str], set[str]] = {}

    def add(self, row: dict[str, Any], loc: str, *, empty_is_null: bool) -> None:
        """Add one row; `loc` names it ("line 17", "row 3") for errors."""

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
                raise _Bad(where(column), "missing required column")

        agent_id = _agent_id(cell("agent_id"), where("agent_id"))
        conversation_id = _table_str(cell("conversation_id"), where("conversation_id"))
        if not conversation_id:
            raise _Bad(where("conversation_id"), "empty")
        role = _table_str(cell("role"), where("role"))
        if role not in ROLES:
            raise _Bad(where("role"), f"unknown role {str(role)[:40]!r}: expected one of {', '.join(ROLES)}")
        content = row.get("content")
        if not isinstance(content, str):
            raise _Bad(where("content"), f"expected a string, got {_type_name(content)}")
        created_at = _iso_time(cell("created_at"), where("created_at"))
        message_id = _table_str(cell("message_id"), where("message_id")) or None
        speaker = _table_str(cell("speaker"), where("speaker")) or None
        title = _table_str(cell("title"), where("title")) or None

        key = (agent_id, conversation_id)
        conv = self.conversations.get(key)
        if conv is None:
            conv = ParsedConversation(conversation_id=conversation_id, agent_id=agent_id, title=title,
                                      started_at=None)
            self.conversations[key] = conv
            self.seen_ids[key] = set()
        if conv.title is None:
            conv.title = title
        if not content.strip():
            _count(conv.skipped, "empty")
            return
        message = ParsedMessage(message_id=message_id, role=role, content=_clean(content),
                                created_at=created_at, speaker=speaker)
        _add_message(conv.messages, self.seen_ids[key], message, where("message_id"))

    def result(self) -> list[ParsedConversation]:
        """The conversations, each started at its earliest message."""
        conversations = list(self.conversations.values())
        for conv in conversations:
            conv.started_at = _earliest(conv.messages)
        return conversations


def _table_str(value: Any, location: str) -> str | None:
    """A string cell of a message table (None stays None)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise _Bad(location, f"expected a string, got {_type_name(value)}")
    return _clean(value)


def _parse_jsonl(text: str) -> list[ParsedConversation]:
    """Conversations from JSONL, one message object per line; blank lines ignored."""
    grouper = _Grouper()
    for number, line in _lines(text):
        if not line.strip():
            continue
        try:
            value = _load_json(line)
        except ValueError as exc:
            message = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise _Bad(f"line {number}", f"invalid JSON: {message}") from None
        if not isinstance(value, dict):
            raise _Bad(f"line {number}", f"expected a JSON object, got {_type_name(value)}")
        grouper.add(value, f"line {number}", empty_is_null=False)
    return grouper.result()


def _parse_csv(text: str) -> list[ParsedConversation]:
    """Conversations from CSV with a header row; rows are named by the line they end on."""
    if csv.field_size_limit() < _CSV_FIELD_LIMIT:
        csv.field_size_limit(_CSV_FIELD_LIMIT)  # only ever raised, so concurrent readers are safe
    reader = csv.reader(io.StringIO(text, newline=""))
    grouper = _Grouper()
    try:
        header = [cell.strip() for cell in next(reader, [])]
        if len(set(header)) != len(header):
            raise _Bad("line 1", "duplicate column names in header")
        if any(c not in header for c in TABLE_REQUIRED_COLUMNS):
            raise _Bad("line 1", _csv_header_lacks(header))
        for cells in reader:
            loc = f"line {reader.line_num}"
            if not any(cell.strip() for cell in cells):
                continue  # a blank line
            if len(cells) != len(header):
                raise _Bad(loc, f"expected {len(header)} fields, got {len(cells)}")
            grouper.add(dict(zip(header, cells, strict=True)), loc, empty_is_null=True)
    except csv.Error as exc:
        raise _Bad(f"line {reader.line_num}", f"bad CSV: {exc}") from None
    return grouper.result()


def _parse_parquet(data: bytes) -> list[ParsedConversation]:
    """Conversations from a Parquet table with the message-table columns."""
    try:
        table = pq.read_table(pa.BufferReader(data))
    except Exception as exc:  # pyarrow raises several types on corrupt files
        raise _Bad(None, f"unreadable Parquet: {exc}") from None
    names = table.column_names
    for column in TABLE_REQUIRED_COLUMNS:
        if column not in names:
            raise _Bad(f"column {column}", "missing required column")
    wanted = [c for c in (*TABLE_REQUIRED_COLUMNS, *TABLE_OPTIONAL_COLUMNS) if c in names]
    try:
        rows = table.select(wanted).to_pylist()
    except Exception as exc:  # out-of-range timestamps, duplicate columns, ...
        raise _Bad(None, f"unreadable Parquet values: {exc}") from None
    grouper = _Grouper()
    for number, row in enumerate(rows, start=1):
        grouper.add(row, f"row {number}", empty_is_null=False)
    return grouper.result()


# --- ingest JSON -------------------------------------------------------------------------


def _parse_ingest(value: Any) -> list[ParsedConversation]:
    """Conversations from ingest JSON: one object, or a list of them."""
    if isinstance(value, dict):
        return [_ingest_conversation(value, "")]
    items = _as_list(value, "")
    return [_ingest_conversation(_as_dict(raw, f"[{i}]"), f"[{i}]") for i, raw in enumerate(items)]


def _ingest_conversation(obj: dict[str, Any], loc: str) -> ParsedConversation:
    """One ingest object: {agent_id, conversation_id, turns: [{user, assistant}], session_date?}."""
    session = _iso_time(obj.get("session_date"), _at(loc, "session_date"))
    turns = _as_list(obj.get("turns"), _at(loc, "turns"))
    conv = ParsedConversation(
        conversation_id=_req_str(obj, "conversation_id", loc),
        agent_id=_agent_id(obj.get("agent_id"), _at(loc, "agent_id")),
        title=_opt_str(obj, "title", loc),
        started_at=session,
    )
    for t, raw in enumerate(turns):
        turn_loc = _at(_at(loc, "turns"), t)
        turn = _as_dict(raw, turn_loc)
        for role in ("user", "assistant"):
            text = turn.get(role)
            if text is None:
                continue  # e.g. a last turn still waiting for its answer
            if not isinstance(text, str):
                raise _Bad(_at(turn_loc, role), f"expected a string, got {_type_name(text)}")
            if not text.strip():
                _count(conv.skipped, "empty")
                continue
            conv.messages.append(ParsedMessage(message_id=None, role=role, content=_clean(text),
                                               created_at=None, speaker=None))
    return conv
