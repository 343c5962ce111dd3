"""When a conversation is due for distillation, and the `episodes/pending` row of one that is not.

Pure functions. Times are data, never the clock at read time: a conversation
is due once it has been idle for `summary_debounce_seconds`, counted from its
last message to `as_of`. `as_of` is what the caller passes (`memlake distill`
passes the time it runs); a pipeline run without one uses the newest
`ingested_at` of the landing manifest, the moment the lake last learned
anything, so a rerun over the same inputs decides the same way. A
conversation ingested while it was still going on therefore waits, and is
distilled by the first later run whose `as_of` is far enough past its last
message.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

NO_DISTILLER = "no core model configured and the offline distiller is off"
CIRCUIT_OPEN = "circuit breaker open"
NOT_SELECTED = "not yet distilled: outside the selection of an on-demand run"


def default_as_of(ingested_at: Iterable[datetime | None]) -> datetime | None:
    """The newest ingestion time: the data's own 'now'."""
    times = [t for t in ingested_at if t is not None]
    return max(times) if times else None


def idle_seconds(last_message_at: datetime, as_of: datetime) -> float:
    return (as_of - last_message_at).total_seconds()


def is_due(last_message_at: datetime, as_of: datetime, debounce_seconds: float) -> bool:
    """Idle for at least the debounce, as of `as_of`."""
    return idle_seconds(last_message_at, as_of) >= debounce_seconds


def debounce_reason(last_message_at: datetime, as_of: datetime, debounce_seconds: float) -> str:
    idle = max(0.0, idle_seconds(last_message_at, as_of))
    return f"debounce: idle {idle:.0f} s of {debounce_seconds:.0f} s as of {as_of.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}"


def pending_row(
    agent_id: str,
    conversation_id: str,
    content_hash: str,
    reason: str,
    as_of: datetime,
    previous: dict[str, Any] | None = None,
    attempted: bool = False,
) -> dict[str, Any]:
    """The pending row of a conversation: `since` is kept from an earlier row, `attempts` counts failed calls."""
    previous = previous or {}
    attempts = int(previous.get("attempts") or 0) + (1 if attempted else 0)
    return {
        "agent_id": agent_id,
        "conversation_id": conversation_id,
        "content_hash": content_hash,
        "reason": reason,
        "since": previous.get("since") or as_of,
        "attempts": attempts,
    }
