"""Landing-file parsers: one landing file in, a `ParsedFile` of conversations out.

Formats (see `FORMATS`): the ChatGPT and Claude data exports (`conversations.json`, bare or
inside the `.zip` the services hand out), generic message tables (JSONL, CSV with a header,
Parquet) and the ingest JSON the HTTP service accepts. The format is detected from the
content; the file name only sharpens the guess reported in an error.

Everything here treats the file as untrusted: a bad shape anywhere becomes a `ParseError`
carrying the format guess and where in the file it was found, which is what quarantine
needs. `parse_file` raises nothing else. Pure Python: no Dagster import.

One module per format (`chatgpt`, `claude`, `zip_export`, `rows` for JSONL, CSV and Parquet,
`ingest_json`), `detect` for format detection, `parsed` for what parsers return and raise,
`fields` for reading untrusted values, `limits` for how much a file may hold.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from memlake.parsers.chatgpt import parse_chatgpt
from memlake.parsers.claude import parse_claude
from memlake.parsers.detect import detect, guess_from_name
from memlake.parsers.ingest_json import parse_ingest_json
from memlake.parsers.limits import OverLimitError, ParseLimits, check_conversation_limits, read_limited
from memlake.parsers.parsed import (
    FORMATS,
    ROLES,
    ParsedConversation,
    ParsedFile,
    ParsedMessage,
    ParseError,
    ShapeError,
    joined_location,
)
from memlake.parsers.rows import TABLE_OPTIONAL_COLUMNS, TABLE_REQUIRED_COLUMNS, parse_csv, parse_jsonl, parse_parquet

__all__ = [
    "FORMATS",
    "ROLES",
    "TABLE_OPTIONAL_COLUMNS",
    "TABLE_REQUIRED_COLUMNS",
    "OverLimitError",
    "ParseError",
    "ParseLimits",
    "ParsedConversation",
    "ParsedFile",
    "ParsedMessage",
    "detect_format",
    "parse_file",
]

_T = TypeVar("_T")


def detect_format(path: Path, limits: ParseLimits | None = None) -> str:
    """The format of a landing file, one of FORMATS, read from its content.

    A zip is reported with the format of the export inside it. Raises ParseError when the
    content is not a format we read, or is over one of `limits` (default: the settings' defaults).
    """
    path, limits = Path(path), limits or ParseLimits.defaults()
    return _guarded(path, lambda: detect(_read(path, limits), path.name, limits).format)


def parse_file(path: Path, limits: ParseLimits | None = None) -> ParsedFile:
    """The conversations in one landing file; raises ParseError (and nothing else) on bad input,
    or on input over one of `limits` (default: the settings' defaults)."""
    path, limits = Path(path), limits or ParseLimits.defaults()
    return _guarded(path, lambda: _parse_bytes(_read(path, limits), path.name, limits))


def _read(path: Path, limits: ParseLimits) -> bytes:
    return read_limited(path, limits, guess_from_name(path.name))


def _guarded(path: Path, work: Callable[[], _T]) -> _T:
    """Run `work`, turning any exception that is not already a ParseError into one."""
    try:
        return work()
    except ParseError:
        raise
    except RecursionError as exc:
        raise ParseError("nesting too deep to read", format_guess=guess_from_name(path.name),
                         location=None) from exc
    except Exception as exc:  # the contract: bad input never escapes as another type
        raise ParseError(f"cannot read file: {type(exc).__name__}: {exc}",
                         format_guess=guess_from_name(path.name), location=None) from exc


def _parse_bytes(data: bytes, name: str, limits: ParseLimits) -> ParsedFile:
    """Detect the format of `data` and parse it."""
    detected = detect(data, name, limits)
    parsers: dict[str, Callable[[Any], list[ParsedConversation]]] = {
        "chatgpt": parse_chatgpt,
        "claude": parse_claude,
        "jsonl": parse_jsonl,
        "csv": parse_csv,
        "parquet": parse_parquet,
        "ingest_json": parse_ingest_json,
    }
    try:
        conversations = parsers[detected.format](detected.payload)
        _check_unique_conversations(conversations)
    except ShapeError as bad:
        raise ParseError(bad.message, format_guess=detected.format,
                         location=joined_location(detected.location_prefix, bad.location)) from None
    check_conversation_limits(conversations, limits, detected.format, detected.location_prefix)
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


def _check_unique_conversations(conversations: list[ParsedConversation]) -> None:
    """Refuse a file that names the same (agent, conversation) twice as separate conversations."""
    seen: set[tuple[str | None, str]] = set()
    for i, conv in enumerate(conversations):
        key = (conv.agent_id, conv.conversation_id)
        if key in seen:
            raise ShapeError(f"conversation {i}", f"duplicate conversation id {conv.conversation_id!r}")
        seen.add(key)
