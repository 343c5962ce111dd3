"""Slot readers of the offline distiller on changes told in everyday shapes (issue 23): lowercase chat, the
passive, the organisation as subject, "we", a filler before the verb. Phrasings written for these tests."""

from datetime import UTC, datetime

import pytest

from memlake.distill.models import Conversation, Message
from memlake.distill.offline import distill_offline

SAID = datetime(2023, 5, 8, 10, 0, tzinfo=UTC)  # a Monday


def slots(text: str) -> list[tuple[str | None, str]]:
    session = distill_offline(Conversation("a", "c", None, (Message("m1", "user", text, SAID),)))
    return [(c.slot, c.value) for c in session.fact_candidates if c.slot]


@pytest.mark.parametrize(
    ("text", "slot", "value"),
    [
        ("just moved to porto, still unpacking", "home_city", "Porto"),
        ("i live in san sebastian now", "home_city", "San Sebastian"),
        ("i work for hooli now", "employer", "Hooli"),
        ("i'm a product manager now", "job_title", "product manager"),
        ("i go by sasha these days", "name", "Sasha"),
        ("ugh long day. i started at northwind labs on monday", "employer", "Northwind Labs"),
    ],
)
def test_a_message_typed_all_in_lowercase_is_read_as_if_typed_with_capitals(text, slot, value):
    assert (slot, value) in slots(text)


@pytest.mark.parametrize("text", ["i work from home now", "i live in hope lol", "i moved to a new flat",
                                  "i'm in love with this song"])
def test_lowercase_words_after_a_preposition_are_not_names(text):
    assert slots(text) == []
