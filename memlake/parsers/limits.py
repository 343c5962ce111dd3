"""How much one landing file may hold: the `max_*` settings, checked while a file is read and parsed.

Over a limit, the file is refused with a ParseError that names the setting, the limit and what was
measured, so that quarantine says which setting to raise.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from memlake.parsers.parsed import ParsedConversation, ParseError, joined_location
from memlake.settings import LimitsSettings


class ParseLimits(LimitsSettings):
    """The limits of one parse: the settings' landing-file limits group (its fields document them)."""

    @classmethod
    def of(cls, settings: LimitsSettings) -> ParseLimits:
        """The limits a `Settings` object sets."""
        return cls(**{name: getattr(settings, name) for name in LimitsSettings.model_fields})

    @classmethod
    def defaults(cls) -> ParseLimits:
        """The limits the settings set by default (defaults live in one place: `LimitsSettings`)."""
        return cls()

    @classmethod
    def none(cls) -> ParseLimits:
        """No limits: for a file the manifest already accepted under the limits of its day."""
        return cls(**dict.fromkeys(LimitsSettings.model_fields, sys.maxsize))


class OverLimitError(ParseError):
    """A file refused by one limit: which setting and its value, so that landing can read the file again once
    that setting is changed (the message says the same to people)."""

    def __init__(self, message: str, *, setting: str, limit: int, format_guess: str | None,
                 location: str | None) -> None:
        super().__init__(message, format_guess=format_guess, location=location)
        self.setting = setting
        self.limit = limit

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_over_limit, (self.message, self.setting, self.limit, self.format_guess, self.location))


def _rebuild_over_limit(message: str, setting: str, limit: int, format_guess: str | None,
                        location: str | None) -> OverLimitError:
    """Unpickle an OverLimitError."""
    return OverLimitError(message, setting=setting, limit=limit, format_guess=format_guess, location=location)


def over_limit(setting: str, measured: str, limit: int, *, format_guess: str | None,
               location: str | None) -> OverLimitError:
    """The error for a measured size over the limit `setting`."""
    return OverLimitError(f"{measured}: over the limit {setting} = {limit:,} (setting MEMLAKE_{setting.upper()})",
                          setting=setting, limit=limit, format_guess=format_guess, location=location)


def read_limited(path: Path, limits: ParseLimits, format_guess: str | None) -> bytes:
    """The bytes of `path`, refused past max_file_bytes before any is read."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limits.max_file_bytes:
            raise over_limit("max_file_bytes", f"file is {size:,} bytes", limits.max_file_bytes,
                             format_guess=format_guess, location=None)
        data = fh.read(size)  # no more than was measured
        if fh.read(1):
            raise ParseError("file grew while it was read: is it still being written?", format_guess=format_guess,
                             location=None)
    return data


def check_conversation_limits(conversations: list[ParsedConversation], limits: ParseLimits,
                              format_guess: str, location_prefix: str | None) -> None:
    """Refuse a conversation with too many messages, or a message too long."""
    for conv in conversations:
        where = f"conversation {conv.conversation_id[:80]!r}"
        count = len(conv.messages) + sum(conv.skipped.values())
        if count > limits.max_messages_per_conversation:
            raise over_limit("max_messages_per_conversation", f"conversation has {count:,} messages",
                             limits.max_messages_per_conversation, format_guess=format_guess,
                             location=joined_location(location_prefix, where))
        for position, message in enumerate(conv.messages):
            if len(message.content) > limits.max_message_chars:
                at = f"{where}, message {message.message_id or position}"
                raise over_limit("max_message_chars", f"message has {len(message.content):,} characters",
                                 limits.max_message_chars, format_guess=format_guess,
                                 location=joined_location(location_prefix, at))
