"""Changes a stranger told in a trial of ten ChatGPT conversations (issue 37), each class in phrasings written for
these tests: what is current after the change, and what history keeps."""

from __future__ import annotations

from datetime import date

import polars as pl
import pytest

from memlake.distill.models import Conversation, Message
from memlake.distill.offline import distill_offline
from memlake.facts.fold import fold
from memlake.facts.profile import section_of
from memlake.facts.reads import select_facts
from tests.facts.said_offline import at, said_offline


def told(*steps: tuple[str, str]):  # type: ignore[no-untyped-def]
    return fold([candidate for text, day in steps for candidate in said_offline(text, day)])


def current(result, day: str) -> pl.DataFrame:  # type: ignore[no-untyped-def]
    return select_facts(result.facts, as_of=at(day), edges=result.edges)


def slot_values(frame: pl.DataFrame, slot: str) -> list[str]:
    return frame.filter(pl.col("slot") == slot)["value"].to_list()


@pytest.mark.parametrize("move", [
    "We finally got the keys to a flat in Bristol!",
    "We've moved into a place in Bristol, still surrounded by boxes.",
    "Picked up the keys to our new house in Bristol this morning.",
    "We've just moved into a little terraced house in Bristol.",
    "I'm settling in fine since the move to Bristol last month.",
])
def test_a_move_told_indirectly_ends_the_old_home(move: str) -> None:
    result = told(("I live in Leeds with my partner.", "2026-02-03"), (move, "2026-06-10"))
    assert slot_values(current(result, "2026-06-11"), "home_city") == ["Bristol"]
    leeds = result.facts.filter(pl.col("value") == "Leeds")
    assert leeds.height and leeds["status"].to_list() == ["superseded"]  # kept in history, no longer current


@pytest.mark.parametrize("text, city", [
    ("I moved to Leeds last spring and work at a bakery now.", "Leeds"),
    ("I live in Porto these days and teach piano on weekends.", "Porto"),
    ("Work's been mad since I moved up to Glasgow in March and started at the hospital.", "Glasgow"),
    ("I work at a bakery now and live in Leeds since last spring.", "Leeds"),
    ("I moved across to Cardiff in January, working at a garage now.", "Cardiff"),
])
def test_a_home_said_in_a_sentence_joined_to_another_clause_gives_the_home(text: str, city: str) -> None:
    result = told((text, "2026-06-10"))
    assert slot_values(current(result, "2026-06-11"), "home_city") == [city]


@pytest.mark.parametrize("before, change", [
    ("I eat a lot of red meat, steak is my favourite dinner.", "I went vegetarian last month."),
    ("I love a good bacon sandwich on Sundays.", "Big change: I've gone vegan since January."),
    ("I'm a big meat eater, I have chicken most days.", "I've become a vegetarian."),
])
def test_a_diet_change_ends_the_earlier_meat_eating_facts(before: str, change: str) -> None:
    result = told((before, "2026-01-05"), (change, "2026-04-20"))
    then = result.facts.filter(pl.col("created_at") == at("2026-01-05"))
    assert then.height, "the earlier statement gave facts"
    now = current(result, "2026-04-21")
    assert not set(then["fact_id"].to_list()) & set(now["fact_id"].to_list()), now["content"].to_list()
    assert slot_values(now, "diet")  # the new diet is current
    before_change = current(result, "2026-02-01")["fact_id"].to_list()
    assert set(then["fact_id"].to_list()) <= set(before_change)  # history keeps what held then


@pytest.mark.parametrize("dislike, like, thing", [
    ("Honestly I can't stand olives.", "Funny, I've come round to olives, I love them now.", "olives"),
    ("I really dislike jazz.", "These days I actually enjoy jazz a lot.", "jazz"),
    ("I hate running.", "Weirdly I've started to like running.", "running"),
])
def test_a_reversed_taste_keeps_the_dislike_in_history_and_the_like_current(dislike: str, like: str,
                                                                             thing: str) -> None:
    result = told((dislike, "2026-01-05"), (like, "2026-05-02"))
    about = result.facts.filter(pl.col("content").str.to_lowercase().str.contains(thing))
    then = about.filter(pl.col("created_at") == at("2026-01-05"))
    assert then.height, about["content"].to_list()
    now = current(result, "2026-05-03").filter(pl.col("content").str.to_lowercase().str.contains(thing))
    assert now.height == 1, now["content"].to_list()
    liked = now.row(0, named=True)
    assert liked["created_at"] == at("2026-05-02")
    assert liked["content"].startswith("The user ") and thing in liked["content"].lower()
    assert not any(w in liked["content"].lower() for w in ("hate", "dislike", "can't stand", "them now"))
    assert section_of(liked) == "preferences"
    assert set(then["fact_id"].to_list()) <= set(current(result, "2026-02-01")["fact_id"].to_list())


@pytest.mark.parametrize("text", [
    "Last week was lovely, on Saturday we went hiking in the Peak District.",
    "I went hiking on Saturday.",
    "Took the kids to the zoo on Saturday, they loved it.",
    "Drove up to see my gran on Saturday and stayed the night.",
])
def test_a_weekday_in_a_message_about_the_past_is_the_past_one(text: str) -> None:
    said = "2026-06-10"  # a Wednesday: the Saturday before is 2026-06-06, the next one 2026-06-13
    assert date.fromisoformat("2026-06-06").weekday() == 5
    session = distill_offline(Conversation("ann", "c", None, (Message("m", "user", text, at(said)),)))
    days = {d.date for d in session.key_dates}
    assert "2026-06-06" in days and "2026-06-13" not in days, session.key_dates
    said_of_it = " ".join(c.content for c in session.fact_candidates)
    assert "2026-06-13" not in said_of_it, said_of_it


@pytest.mark.parametrize("text, employer, title", [
    ("I started at Acme as a data engineer.", "Acme", "data engineer"),
    ("I accepted a job at Umbrella Corp as a lab manager.", "Umbrella Corp", "lab manager"),
    ("I just started a new role at Wayne Enterprises as a security analyst.", "Wayne Enterprises", "security analyst"),
    ("Last week I joined Globex as a product designer.", "Globex", "product designer"),
    ("I've been hired by Initech as their new office manager!", "Initech", "office manager"),
])
def test_a_new_title_said_with_the_new_job_gives_employer_and_title(text: str, employer: str, title: str) -> None:
    result = told(("I work at Hooli as a support agent.", "2026-01-05"), (text, "2026-03-02"))
    now = current(result, "2026-03-03")
    assert slot_values(now, "employer") == [employer]
    assert slot_values(now, "job_title") == [title]


@pytest.mark.parametrize("text, employer, title", [
    ("Last week I started as a Principal Engineer at Revolut.", "Revolut", "Principal Engineer"),
    ("I've joined Ocado as head of logistics.", "Ocado", "head of logistics"),
    ("I took a post as lead analyst with Barclays.", "Barclays", "lead analyst"),
    ("I began work as a junior architect with Foster Partners in March.", "Foster Partners", "junior architect"),
    ("I've been taken on as a trainee accountant at Mazars.", "Mazars", "trainee accountant"),
    ("I accepted a post as deputy head of science with Kingsmead Academy.", "Kingsmead Academy",
     "deputy head of science"),
])
def test_a_start_told_with_title_and_employer_in_one_clause_ends_the_old_job(text: str, employer: str,
                                                                             title: str) -> None:
    result = told(("I work at Hooli as a support engineer.", "2026-01-05"), (text, "2026-03-02"))
    now = current(result, "2026-03-03")
    assert slot_values(now, "employer") == [employer]
    assert slot_values(now, "job_title") == [title]
    ended = result.facts.filter(pl.col("value").is_in(["Hooli", "support engineer"]))
    assert sorted(ended["status"].to_list()) == ["superseded", "superseded"]  # in history, no longer current
    session = distill_offline(Conversation("ann", "c", None, (Message("m", "user", text, at("2026-03-02")),)))
    assert {(e.name, e.type) for e in session.entities} >= {(employer, "organization")}
