"""Moments as search and the logs take them: aware UTC datetimes, or microseconds since the epoch."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def utc(moment: datetime) -> datetime:
    """`moment` in UTC; a naive one is taken as UTC."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def parse_as_of(as_of: datetime | date | str | None) -> datetime:
    """`as_of` as an aware UTC datetime: naive means UTC, a date is its first moment, strings are ISO 8601,
    None is now. Anything else is a ValueError that names the value."""
    if as_of is None:
        return datetime.now(UTC)
    if isinstance(as_of, str):
        try:
            as_of = datetime.fromisoformat(as_of.strip())
        except ValueError:
            raise ValueError(not_a_moment(as_of)) from None
    if isinstance(as_of, datetime):
        return utc(as_of)
    if isinstance(as_of, date):
        return datetime(as_of.year, as_of.month, as_of.day, tzinfo=UTC)
    raise ValueError(not_a_moment(as_of))


def not_a_moment(value: object) -> str:
    """The error message for a value that is not a moment."""
    return (f"{value!r} is not a date or time: give a datetime, a date or an ISO 8601 string "
            "(2024-05-01, 2024-05-01T10:00:00Z)")


def micros(moment: datetime) -> int:
    """Microseconds from the epoch to `moment` (naive: UTC)."""
    return (utc(moment) - EPOCH) // timedelta(microseconds=1)
