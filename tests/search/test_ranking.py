"""The pure functions a search ranks with: what names an identifier, recency decay, MMR, mentions, as-of."""

from datetime import UTC, date, datetime

import numpy as np
import pytest

from memlake.search import mentioned, mmr_order, names_identifier, parse_as_of, recency


@pytest.mark.parametrize(
    ("query", "names_one"),
    [("ORD-58213", True), ("was order 582131 refunded", True), ("A320 seat", True), ("parse_ledger_v2", True),
     ("getUserName fails", True), ("What did Caroline research?", False), ("on October 13, 2023", False),
     ("her 18th birthday", False), ("music of the 1990s", False), ("mid-August plans", False),
     ("self-care", False)],
)
def test_an_identifier_is_letters_with_digits_a_long_number_or_a_code_symbol(query, names_one):
    assert names_identifier(query) == names_one


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-03-01", datetime(2024, 3, 1, tzinfo=UTC)),
        ("2024-03-01T12:00:00Z", datetime(2024, 3, 1, 12, tzinfo=UTC)),
        ("2024-03-01T14:00:00+02:00", datetime(2024, 3, 1, 12, tzinfo=UTC)),
        (datetime(2024, 3, 1, 12), datetime(2024, 3, 1, 12, tzinfo=UTC)),
        (date(2024, 3, 1), datetime(2024, 3, 1, tzinfo=UTC)),
    ],
)
def test_as_of_naive_means_utc(value, expected):
    assert parse_as_of(value) == expected


def test_recency_halves_every_half_life_on_either_side():
    as_of = datetime(2024, 6, 1, tzinfo=UTC)
    assert recency(as_of, as_of, 30) == 1.0
    assert recency(datetime(2024, 5, 2, tzinfo=UTC), as_of, 30) == pytest.approx(0.5)
    assert recency(datetime(2024, 7, 1, tzinfo=UTC), as_of, 30) == pytest.approx(0.5)
    assert recency(None, as_of, 30) == 0.0


def test_mmr_keeps_order_at_one_and_skips_near_duplicates_below():
    vectors = np.asarray([[1, 0], [1, 0], [0, 1]], dtype=np.float32)
    assert mmr_order([0.9, 0.8, 0.7], vectors, 1.0, 3) == [0, 1, 2]
    assert mmr_order([0.9, 0.8, 0.7], vectors, 0.5, 3) == [0, 2, 1]
    assert mmr_order([0.9, 0.8, 0.7], None, 0.5, 2) == [0, 1]


def test_mention_matches_name_words_of_three_letters_or_more():
    assert mentioned("Caroline", {"what", "did", "caroline", "research"})
    assert mentioned("Priya Nair", {"priya"})
    assert not mentioned("Al", {"al"}) and not mentioned(None, {"x"})
