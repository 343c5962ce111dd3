"""`memlake.text`: the one Jaccard (lowercased Unicode words, stopwords removed)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlake.text import STOPWORDS, content_words, is_negated, jaccard, words


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The user lives in Berlin.", {"lives", "berlin"}),
        ("I'm allergic to PEANUTS!", {"allergic", "peanuts"}),
        ("The user doesn't drink coffee.", {"not", "drink", "coffee"}),
        ("I can't swim and won't try", {"not", "swim", "try"}),
        ("Tomás Ruiz leads Ünïcode Café", {"tomás", "ruiz", "leads", "ünïcode", "café"}),
        ("The launch is on March 4", {"launch", "march", "4"}),
        ("The user likes cycling", {"cycling"}),
        ("", set()),
        (None, set()),
    ],
)
def test_content_words(text: str | None, expected: set[str]) -> None:
    assert content_words(text) == expected


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("The user likes cycling.", "The user enjoys cycling.", 1.0),
        ("The user likes coffee.", "The user likes tea.", 0.0),
        ("The user lives in Berlin.", "Leela lives in Berlin.", 2 / 3),
        ("The launch is on March 4.", "The launch is on March 14.", 2 / 4),
        ("STRASSE", "strasse", 1.0),  # casefolded
        ("ＡＣＭＥ robotics", "acme Robotics", 1.0),  # NFKC: full-width letters
        ("the a an of", "the a an of", 0.0),  # only stopwords: no content, no similarity
        ("", "anything", 0.0),
    ],
)
def test_jaccard(a: str, b: str, expected: float) -> None:
    assert jaccard(a, b) == pytest.approx(expected)


def test_negations_are_content_and_detected() -> None:
    assert "not" not in STOPWORDS and "never" not in STOPWORDS
    assert is_negated("The user doesn't drink coffee.")
    assert is_negated("I no longer live there")
    assert not is_negated("The user drinks coffee.")
    assert jaccard("I like coffee", "I don't like coffee") < 0.6


def test_words_keep_order_and_spell_out_negations() -> None:
    assert words("I don't LIKE it") == ["i", "do", "not", "like", "it"]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(max_size=40), st.text(max_size=40))
def test_jaccard_is_a_symmetric_similarity(a: str, b: str) -> None:
    value = jaccard(a, b)
    assert 0.0 <= value <= 1.0
    assert value == jaccard(b, a)
    assert jaccard(a, a) == (1.0 if content_words(a) else 0.0)
