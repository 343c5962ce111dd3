"""Moments as memlake takes them: aware UTC datetimes, or microseconds since the epoch.

The one home of UTC normalisation and as-of parsing. `utc` is the one conversion of a datetime; the others
read what people and files give (a date, an ISO 8601 string) and differ only in what they do with no value:

- `as_utc`: a value is required; anything that is no moment is a ValueError naming it.
- `as_utc_or_none`: None stays None (no time given); anything else as `as_utc`.
- `as_utc_if_moment`: lenient, for values a model wrote: None when it is no moment.
- `parse_as_of`: the time a read is as of; None is now, unless `none_is_now=False` (then None: the current state).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Literal, overload

from memlake.errors import BadRequest

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def utc(moment: datetime) -> datetime:
    """`moment` in UTC; a naive one is taken as UTC."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def as_utc(value: datetime | date | str, end_of_day: bool = False) -> datetime:
    """A UTC datetime from a datetime (naive means UTC), a date or an ISO 8601 string ("2024-03-02" is its
    first moment, or with `end_of_day` its last). Anything else is a ValueError that names the value."""
    if isinstance(value, str):
        text = value.strip()
        try:
            value = date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text)
        except ValueError:
            raise BadRequest(not_a_moment(text)) from None
    if not isinstance(value, date):
        raise BadRequest(not_a_moment(value))
    if not isinstance(value, datetime):
        moment = datetime(value.year, value.month, value.day, tzinfo=UTC)
        return moment + timedelta(days=1, microseconds=-1) if end_of_day else moment
    return utc(value)


def as_utc_or_none(value: datetime | date | str | None, end_of_day: bool = False) -> datetime | None:
    """None for None (no time given), else `as_utc(value, end_of_day)`."""
    return None if value is None else as_utc(value, end_of_day=end_of_day)


def as_utc_if_moment(value: object) -> datetime | None:
    """`as_utc` of a value that may be no moment at all (a model's answer): None for None, an empty or
    unparseable string, or any other value whose text is no ISO 8601 date or time."""
    if value is None or value == "":
        return None
    try:
        return as_utc(value if isinstance(value, str | date) else str(value))
    except ValueError:
        return None


@overload
def parse_as_of(
    as_of: datetime | date | str | None, end_of_day: bool = False, *, none_is_now: Literal[True] = True
) -> datetime: ...


@overload
def parse_as_of(
    as_of: datetime | date | str | None, end_of_day: bool = False, *, none_is_now: Literal[False]
) -> datetime | None: ...


def parse_as_of(
    as_of: datetime | date | str | None, end_of_day: bool = False, *, none_is_now: bool = True
) -> datetime | None:
    """The time a read is as of, as an aware UTC datetime (see `as_utc`; a date is its first moment, or with
    `end_of_day` its last). None is now; with `none_is_now=False` it stays None, for reads whose "no as-of
    time" is the current state rather than a moment (current facts: active and not past their validity)."""
    if as_of is None and none_is_now:
        return datetime.now(UTC)
    return as_utc_or_none(as_of, end_of_day=end_of_day)


def not_a_moment(value: object) -> str:
    """The error message for a value that is not a moment."""
    return (f"{value!r} is not a date or time: give a datetime, a date or an ISO 8601 string "
            "(2024-05-01, 2024-05-01T10:00:00Z)")


def micros(moment: datetime) -> int:
    """Microseconds from the epoch to `moment` (naive: UTC)."""
    return (utc(moment) - EPOCH) // timedelta(microseconds=1)
