"""The pure functions a search ranks with: what names an identifier, recency decay, MMR, mentions, as-of."""

from datetime import UTC, date, datetime

import numpy as np
import pytest

from memlake.search import mentioned, mmr_order, names_identifier, parse_as_of, recency
from memlake.search.rerank import mmr_picks


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


def test_a_group_decay_spreads_picks_over_groups_and_changes_nothing_at_one():
    scores, groups = [1.0, 0.9, 0.8, 0.5], ["a", "a", "a", "b"]
    assert mmr_order(scores, None, 1.0, 4, None, groups, 1.0) == [0, 1, 2, 3]
    assert mmr_order(scores, None, 1.0, 4, None, groups, 0.6) == [0, 1, 3, 2]  # 0.5 beats 0.8 x 0.36, not 0.9 x 0.6
    assert mmr_order(scores, None, 1.0, 2, None, groups, 0.4) == [0, 3]


def test_a_group_decays_by_the_words_already_picked_from_it():
    """A long pick uses up more of a budget of words than a short one: its group decays more."""
    scores, groups = [1.0, 0.9, 0.6], ["a", "a", "b"]
    assert mmr_order(scores, None, 1.0, 3, None, groups, 0.8, [200, 20, 20]) == [0, 2, 1]  # 0.9 x 0.64 < 0.6
    assert mmr_order(scores, None, 1.0, 3, None, groups, 0.8, [20, 20, 20]) == [0, 1, 2]  # 0.9 x 0.96 > 0.6


@pytest.mark.parametrize(("lam", "groups", "decay"), [
    (0.5, None, 1.0), (0.6, None, 1.0), (1.0, ["a", "a", "a", "b", "c"], 0.6), (0.7, ["a", "a", "b", "b", "a"], 0.8),
])
def test_a_picks_score_is_what_ordered_it_and_never_rises_down_the_list(lam, groups, decay):
    vectors = np.asarray([[1, 0], [0.99, 0.14], [0.6, 0.8], [0, 1], [0.7, 0.71]], dtype=np.float32)
    scores = [0.9, 0.85, 0.8, 0.5, 0.45]
    picks = mmr_picks(scores, vectors, lam, 5, None, groups, decay)
    ordered = [score for _, score in picks]
    assert ordered == sorted(ordered, reverse=True)
    assert picks[0] == (0, pytest.approx(0.9))  # the best keeps its own score
    assert [index for index, _ in picks] == mmr_order(scores, vectors, lam, 5, None, groups, decay)
    assert [index for index, _ in picks] != [0, 1, 2, 3, 4]  # the diversity moved a hit up, and its score says so
    assert mmr_picks(scores, None, 1.0, 3) == [(0, 0.9), (1, 0.85), (2, 0.8)]  # no diversity: own scores


def test_mention_matches_name_words_of_three_letters_or_more():
    assert mentioned("Caroline", {"what", "did", "caroline", "research"})
    assert mentioned("Priya Nair", {"priya"})
    assert not mentioned("Al", {"al"}) and not mentioned(None, {"x"})


def test_of_a_long_answers_passages_the_one_with_the_rarer_word_asked_about_is_nearest():
    """"What juice for the sourdough starter" in an answer on starters: the words every passage says name the
    topic; the passage holding "juice" is the one asked about, though another holds more of the question's words."""
    from memlake.search.finish import nearest_passage

    rows = {
        "p0": {"text": "Keep the sourdough starter warm, between 24 and 27 degrees."},
        "p1": {"text": "Feed the sourdough starter rye flour for a few days."},
        "p2": {"text": "Replace the water with pineapple juice in one feed."},
    }
    assert nearest_passage(list(rows), rows, {}, "what juice for the sourdough starter", None) == "p2"
    assert nearest_passage(list(rows), rows, {}, "how warm should it be", None) == "p0"
