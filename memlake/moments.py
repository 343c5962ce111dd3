"""Moments as search and the logs take them: aware UTC datetimes, or microseconds since the epoch."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def utc(moment: datetime) -> datetime:
    """`moment` in UTC; a naive one is taken as UTC."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def parse_as_of(as_of: datetime | str | None) -> datetime:
    """`as_of` as an aware UTC datetime: naive means UTC, strings are ISO 8601, None is now."""
    if as_of is None:
        return datetime.now(UTC)
    if isinstance(as_of, str):
        as_of = datetime.fromisoformat(as_of.strip())
    return utc(as_of)


def micros(moment: datetime) -> int:
    """Microseconds from the epoch to `moment` (naive: UTC)."""
    return (utc(moment) - EPOCH) // timedelta(microseconds=1)
