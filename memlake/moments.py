"""Moments as search and the logs take them: aware UTC datetimes, or microseconds since the epoch."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def utc(moment: datetime) -> datetime:
    """`moment` in UTC; a naive one is taken as UTC."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def parse_as_of(as_of: datetime | date | str | None, end_of_day: bool = False) -> datetime:
    """`as_of` as an aware UTC datetime (see `as_utc`); None is now."""
    return datetime.now(UTC) if as_of is None else as_utc(as_of, end_of_day=end_of_day)


def as_utc(value: datetime | date | str, end_of_day: bool = False) -> datetime:
    """A UTC datetime from a datetime (naive means UTC), a date or an ISO 8601 string ("2024-03-02" is its
    first moment, or with `end_of_day` its last). Anything else is a ValueError that names the value."""
    if isinstance(value, str):
        text = value.strip()
        try:
            value = date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(not_a_moment(text)) from None
    if not isinstance(value, date):
        raise ValueError(not_a_moment(value))
    if not isinstance(value, datetime):
        moment = datetime(value.year, value.month, value.day, tzinfo=UTC)
        return moment + timedelta(days=1, microseconds=-1) if end_of_day else moment
    return utc(value)


def not_a_moment(value: object) -> str:
    """The error message for a value that is not a moment."""
    return (f"{value!r} is not a date or time: give a datetime, a date or an ISO 8601 string "
            "(2024-05-01, 2024-05-01T10:00:00Z)")


def micros(moment: datetime) -> int:
    """Microseconds from the epoch to `moment` (naive: UTC)."""
    return (utc(moment) - EPOCH) // timedelta(microseconds=1)
