"""The one home of UTC normalisation and as-of parsing: what each contract does with a value and with none."""

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from memlake.moments import as_utc, as_utc_if_moment, as_utc_or_none, parse_as_of, utc

PARIS_SUMMER = timezone(timedelta(hours=2))
END_OF_MARCH_2 = datetime(2024, 3, 2, 23, 59, 59, 999999, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (datetime(2024, 3, 2, 12), datetime(2024, 3, 2, 12, tzinfo=UTC)),  # naive means UTC
        (datetime(2024, 3, 2, 14, tzinfo=PARIS_SUMMER), datetime(2024, 3, 2, 12, tzinfo=UTC)),
        (date(2024, 3, 2), datetime(2024, 3, 2, tzinfo=UTC)),
        ("2024-03-02", datetime(2024, 3, 2, tzinfo=UTC)),
        (" 2024-03-02T14:00:00+02:00 ", datetime(2024, 3, 2, 12, tzinfo=UTC)),
        ("2024-03-02T12:00:00Z", datetime(2024, 3, 2, 12, tzinfo=UTC)),
    ],
)
def test_every_contract_converts_a_moment_the_same_way(value, expected):
    assert as_utc(value) == expected
    assert as_utc_or_none(value) == expected
    assert as_utc_if_moment(value) == expected
    assert parse_as_of(value) == expected
    assert parse_as_of(value, none_is_now=False) == expected
    assert as_utc(value).tzinfo is UTC


def test_a_day_ends_at_its_last_microsecond_only_when_asked():
    assert as_utc("2024-03-02", end_of_day=True) == END_OF_MARCH_2
    assert as_utc_or_none(date(2024, 3, 2), end_of_day=True) == END_OF_MARCH_2
    assert parse_as_of("2024-03-02", end_of_day=True, none_is_now=False) == END_OF_MARCH_2
    assert as_utc("2024-03-02T10:00:00", end_of_day=True) == datetime(2024, 3, 2, 10, tzinfo=UTC)  # a time stays


def test_no_value_is_none_except_for_an_as_of_which_is_now():
    before = datetime.now(UTC)
    now = parse_as_of(None)
    assert before <= now <= datetime.now(UTC)
    assert parse_as_of(None, end_of_day=True, none_is_now=False) is None
    assert as_utc_or_none(None) is None
    assert as_utc_if_moment(None) is None
    assert as_utc_if_moment("") is None


@pytest.mark.parametrize("value", ["next tuesday", "2024-13-01", 42, ["2024-03-02"]])
def test_what_is_no_moment_is_an_error_naming_it_or_none_when_lenient(value):
    with pytest.raises(ValueError, match="is not a date or time"):
        as_utc(value)
    with pytest.raises(ValueError, match="is not a date or time"):
        as_utc_or_none(value)
    with pytest.raises(ValueError, match="is not a date or time"):
        parse_as_of(value)
    assert as_utc_if_moment(value) is None


def test_utc_is_the_one_conversion_of_a_datetime():
    assert utc(datetime(2024, 3, 2, 12)) == datetime(2024, 3, 2, 12, tzinfo=UTC)
    assert utc(datetime(2024, 3, 2, 14, tzinfo=PARIS_SUMMER)).utcoffset() == timedelta(0)
