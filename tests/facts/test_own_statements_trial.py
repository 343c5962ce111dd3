"""The user's own tastes and habits as a stranger's trial of main told them (issue 37, s14): a taste reversed in a
later conversation the usual ways must be shown and current, the earlier opposite taste ended on the day of the
change; a habit said with a quantity keeps what it is of and how often. Phrasings written for these tests."""

from __future__ import annotations

import polars as pl
import pytest

from memlake.distill.models import Conversation, DistilledSession, Message
from memlake.distill.offline import distill_offline
from memlake.facts.fold import Candidate, fold
from memlake.facts.reads import select_facts
from memlake.moments import as_utc_if_moment
from memlake.settings import Settings
from tests.facts.said_offline import at

SHOWN = Settings().shown_confidence


def _session(text: str, when: str) -> DistilledSession:
    return distill_offline(Conversation("ann", when, None, (Message(f"{when}-m", "user", text, at(when)),)))


def _told(*steps: tuple[str, str]):  # type: ignore[no-untyped-def]
    """The fold of what the offline distiller read in each step, each candidate with the confidence it was read with."""
    return fold([Candidate(agent_id="ann", type=c.type, subject=c.subject, slot=c.slot, value=c.value,
                           content=c.content, created_at=at(when), tags=tuple(c.tags), confidence=c.confidence,
                           valid_from=as_utc_if_moment(c.valid_from), valid_until=as_utc_if_moment(c.valid_until),
                           conversation_id=when, message_ids=tuple(c.message_ids))
                 for text, when in steps for c in _session(text, when).fact_candidates])


def _shown_about(result, thing: str, day: str) -> pl.DataFrame:  # type: ignore[no-untyped-def]
    now = select_facts(result.facts, as_of=at(day), edges=result.edges, shown_confidence=SHOWN)
    return now.filter(pl.col("content").str.to_lowercase().str.contains(thing))


@pytest.mark.parametrize("before, change, thing, likes_now", [
    ("I like coffee in the morning.", "I've gone off coffee.", "coffee", False),
    ("I really like red wine with dinner.", "I've gone off red wine.", "red wine", False),
    ("I hate mushrooms in my pasta.", "I used to hate mushrooms but now I love them.", "mushrooms", True),
    ("I love espresso after lunch.", "Lately I've gone right off espresso.", "espresso", False),
    ("Honestly I hate mushrooms.", "I used to hate mushrooms but now I love them.", "mushrooms", True),
    ("I can't stand jazz.", "I never liked jazz, but these days I really enjoy it.", "jazz", True),
])
def test_a_taste_reversed_later_is_shown_and_current_and_the_old_one_ends_that_day(before: str, change: str,
                                                                                  thing: str, likes_now: bool) -> None:
    result = _told((before, "2026-01-05"), (change, "2026-05-02"))
    now = _shown_about(result, thing, "2026-05-03")
    assert now.height == 1, now["content"].to_list()
    taste = now.row(0, named=True)
    assert taste["type"] == "preference" and ("dislike" not in taste["tags"]) == likes_now, taste
    assert taste["created_at"] == at("2026-05-02")
    old = result.facts.filter((pl.col("created_at") == at("2026-01-05"))
                              & pl.col("content").str.to_lowercase().str.contains(thing))
    assert old.height, result.facts["content"].to_list()
    assert all(u is not None and u <= at("2026-05-02") for u in old["valid_until"].to_list()) or set(
        old["status"].to_list()) == {"superseded"}, old.select("content", "status", "valid_until").to_dicts()


@pytest.mark.parametrize("text, thing", [
    ("I've gone off beer, nowadays I'd rather have oat milk.", "oat milk"),
    ("These days I'd rather drink green tea.", "green tea"),
    ("Nowadays I would rather take the train.", "the train"),
])
def test_a_taste_said_with_would_rather_is_a_preference_shown_as_current(text: str, thing: str) -> None:
    result = _told((text, "2026-05-02"))
    now = _shown_about(result, thing, "2026-05-03")
    assert now.height == 1, result.facts.select("content", "confidence").to_dicts()
    taste = now.row(0, named=True)
    assert taste["type"] == "preference" and "dislike" not in taste["tags"], taste
    assert "would" not in taste["content"] and "'d" not in taste["content"], taste["content"]


@pytest.mark.parametrize("text, what, how_often", [
    ("I drink two litres of water a day.", "two litres of water", "a day"),
    ("I eat three eggs every morning.", "three eggs", "every morning"),
    ("I read about four books a month.", "four books", "a month"),
    ("We walk the dog twice a day.", "the dog", "twice a day"),
    ("I eat two eggs every morning, is that too much?", "two eggs", "every morning"),
])
def test_a_habit_with_a_quantity_keeps_what_and_how_often(text: str, what: str, how_often: str) -> None:
    contents = [c.content for c in _session(text, "2026-05-02").fact_candidates]
    assert any(what in c and how_often in c for c in contents), contents
