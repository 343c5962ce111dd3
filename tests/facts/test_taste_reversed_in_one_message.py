"""A taste told reversed within one message (issue 37, a stranger's trial: a dislike, later a like, came out as a lost
dislike and a like garbled into a place): the taste now is current, the one it replaced is kept in history, ended."""

from __future__ import annotations

import polars as pl
import pytest

from memlake.facts.fold import fold
from memlake.facts.profile import section_of
from memlake.facts.reads import select_facts
from tests.facts.said_offline import at, said_offline

SAID = "2026-05-02"


def _about(frame: pl.DataFrame, thing: str) -> pl.DataFrame:
    return frame.filter(pl.col("content").str.to_lowercase().str.contains(thing))


@pytest.mark.parametrize("text, thing, likes_now", [
    # a like, then a dislike of the same thing
    ("I used to adore mushrooms but these days I can't stand them.", "mushrooms", False),
    ("I was really into podcasts for a while, but I've gone off them.", "podcasts", False),
    ("I've gone off tea since the summer.", "tea", False),
    ("We went off sourdough after the holidays.", "sourdough", False),
    ("I stopped enjoying crime novels after a while.", "crime novels", False),
    ("I used to adore mushrooms and peppers but these days I can't stand them.", "mushrooms and peppers", False),
    # a dislike, then a like
    ("I never enjoyed opera, but recently I've been loving it.", "opera", True),
    ("I used to hate cycling. Now I love it.", "cycling", True),
    ("Anchovies used to be my least favourite food, these days I can't get enough of them.", "anchovies", True),
    ("I always disliked board games but now I really enjoy them.", "board games", True),
])
def test_a_taste_reversed_in_one_message_is_current_and_the_old_one_ended(text: str, thing: str,
                                                                          likes_now: bool) -> None:
    result = fold(said_offline(text, SAID))
    now = _about(select_facts(result.facts, as_of=at("2026-05-03"), edges=result.edges), thing)
    assert now.height == 1, now["content"].to_list()
    taste = now.row(0, named=True)
    assert section_of(taste) == "preferences", taste
    assert taste["type"] == "preference" and taste["content"].startswith("The user ")
    assert ("dislike" not in taste["tags"]) == likes_now, taste
    assert thing in taste["value"].lower() and not any(w in taste["content"].lower().split() for w in ("it", "them"))
    assert "used to" not in taste["content"]
    # the taste it replaced: in history, the opposite one, no longer current
    before = _about(result.facts, thing).filter(pl.col("fact_id") != taste["fact_id"])
    assert before.height == 1, _about(result.facts, thing)["content"].to_list()
    old = before.row(0, named=True)
    assert old["type"] == "preference" and ("dislike" in old["tags"]) == likes_now, old
    assert old["valid_until"] is not None and old["valid_until"] <= at("2026-05-03"), old


@pytest.mark.parametrize("text, thing", [
    ("I never liked horror films.", "horror films"),
    ("Honestly I've never enjoyed karaoke.", "karaoke"),
])
def test_a_taste_never_held_is_a_current_dislike_and_ends_nothing(text: str, thing: str) -> None:
    """"Never liked" with no taste now said against it: the dislike holds, nothing of a change is made up."""
    result = fold(said_offline(text, SAID))
    about = _about(result.facts, thing)
    assert about.height == 1, about["content"].to_list()
    dislike = about.row(0, named=True)
    assert dislike["type"] == "preference" and "dislike" in dislike["tags"] and dislike["valid_until"] is None, dislike
    assert section_of(dislike) == "preferences"


@pytest.mark.parametrize("text, thing", [
    ("I love green tea. I never liked him though.", "green tea"),
    ("Pottery is my favourite hobby. I never like to rush it, though.", "pottery"),
    ("I adore hiking. Lately I can't stand her.", "hiking"),
])
def test_a_taste_of_someone_or_of_no_thing_leaves_the_taste_before_it_as_it_was(text: str, thing: str) -> None:
    """A pronoun for a person, or a taste with no object, is not taken for the thing liked before in the message."""
    result = fold(said_offline(text, SAID))
    about = _about(result.facts, thing)
    assert about.height and not about.filter(pl.col("tags").list.contains("dislike")).height, about["content"]
    assert about["valid_until"].is_null().all(), about["content"].to_list()
