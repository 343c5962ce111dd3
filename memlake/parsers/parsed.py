"""What a parser hands back: parsed files, conversations and messages, and the errors it raises."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

FORMATS = ("chatgpt", "claude", "jsonl", "csv", "parquet", "ingest_json")

ROLES = ("user", "assistant", "system", "tool")


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
    origin: str | None = None  # "proxy": landed by the proxy (`transcripts/turns.origin`); None: any other source


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


class ShapeError(Exception):
    """A bad shape found by a format parser, before the format and prefix are attached."""

    def __init__(self, location: str | None, message: str) -> None:
        super().__init__(message)
        self.location = location
        self.message = message


def joined_location(prefix: str | None, location: str | None) -> str | None:
    """Join a container location (a zip member) and a location inside it."""
    if prefix and location:
        return f"{prefix}, {location}"
    return prefix or location
