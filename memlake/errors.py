"""What memlake refuses, by what went wrong: the caller's request (`BadRequest`), an agent with no memory here
(`UnknownAgent`), a thing the agent does not have (`NotFound`), a request at odds with what is there (`Conflict`),
or a store not ready to answer (`Unavailable`).

Each is a `MemlakeError`, and a `MemlakeError` is a `ValueError`, so callers that caught `ValueError` before these
types existed keep working. A plain `ValueError` (or any other error) raised in the core is a bug, not the
caller's fault: the service answers it with a logged 500, never a 4xx. Each type has a `kind`, the word the
memory tools and the MCP server put in a refusal; the HTTP statuses are the service's (`service.errors`).
"""

from __future__ import annotations


class MemlakeError(ValueError):
    """A refusal whose message says what to do about it."""

    kind = "refused"


class BadRequest(MemlakeError):
    """What was asked is not a valid request: a value out of its bounds, of the wrong type, or unknown."""

    kind = "bad_request"


class NotFound(MemlakeError):
    """The agent has no such thing: a fact, a conversation, a merge, a profile version, an export."""

    kind = "not_found"


class UnknownAgent(NotFound):
    """The agent has no memory here (most often a mistyped id)."""

    kind = "unknown_agent"


class Conflict(MemlakeError):
    """The request is at odds with what is there already: an export over an existing file, an import into an
    agent that has memory, a merge undone twice."""

    kind = "conflict"


class Unavailable(MemlakeError):
    """A store the request needs is not ready (an index missing or being built): asking again later, or after the
    repair the message names, works."""

    kind = "unavailable"
