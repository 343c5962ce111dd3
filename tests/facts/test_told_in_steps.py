"""From chat to facts: a job change and a move told in steps, as a user told them, end current.

A user's trial: a city of work said in an introduction, then a new job "as a senior data engineer", a lease signed
"moving on June 1st", and weeks later "We've moved into the Manchester flat now". The facts must end with the new
city, employer and title current, the old ones in history, and the move's plan closed.
"""

from __future__ import annotations

import polars as pl
import pytest

from memlake.facts.fold import fold
from memlake.facts.reads import fact_history, select_facts
from tests.facts.said_offline import at, said_offline

INTRO = "Hi! Quick intro: I'm Marco, I work as a data analyst at Brightline Insurance in Leeds."
NEW_JOB = "Big news: I started at Northwind last Monday as a senior data engineer!"
LEASE = "Great. We signed the lease on a flat in Ancoats, Manchester, moving on June 1st."
MOVED = "We've moved into the Manchester flat now, everything's unpacked."


def test_a_move_and_a_job_change_told_in_steps_end_current_with_the_old_values_in_history() -> None:
    result = fold([*said_offline(INTRO, "2025-03-04"), *said_offline(f"{NEW_JOB} {LEASE}", "2025-05-20"),
                   *said_offline(MOVED, "2025-07-02")])
    now = select_facts(result.facts, as_of=at("2025-07-03"), edges=result.edges)
    slots = {row["slot"]: row["value"] for row in now.iter_rows(named=True) if row["slot"]}
    assert slots["home_city"] == "Manchester"
    assert slots["employer"] == "Northwind"
    assert slots["job_title"] == "senior data engineer"
    # the lease said the move and its day: the plan holds until that day, and Manchester is home from it
    plan = result.facts.filter(pl.col("content").str.contains("plans to move to Manchester")).row(0, named=True)
    assert plan["valid_until"] == at("2025-06-01")
    assert plan["fact_id"] not in now["fact_id"].to_list()
    assert current_home(result, "2025-06-02") == ["Manchester"]
    # Leeds is the home city's history, as it was known before the move
    city = now.filter(pl.col("slot") == "home_city").row(0, named=True)
    history = fact_history(result.facts, result.edges, city["fact_id"])
    assert {"Leeds", "Manchester"} <= set(history["value"].to_list())
    before = select_facts(result.facts, as_of=at("2025-05-21"), edges=result.edges)
    assert "Leeds" in before.filter(pl.col("slot") == "home_city")["value"].to_list()


def current_home(result, day: str) -> list[str]:  # type: ignore[no-untyped-def]
    now = select_facts(result.facts, as_of=at(day), edges=result.edges)
    return now.filter(pl.col("slot") == "home_city")["value"].to_list()


def test_a_city_of_work_does_not_replace_a_home_the_user_said() -> None:
    """"I work ... in Leeds" guesses home only when nothing says otherwise: a home said before stays current."""
    result = fold([*said_offline("I live in York.", "2025-01-10"), *said_offline(INTRO, "2025-03-04")])
    assert current_home(result, "2025-03-05") == ["York"]


def test_a_home_said_after_a_city_of_work_replaces_the_guess() -> None:
    result = fold([*said_offline(INTRO, "2025-03-04"), *said_offline("I live in York.", "2025-04-10")])
    assert current_home(result, "2025-04-11") == ["York"]


def test_a_said_home_that_a_guess_confirmed_is_still_said() -> None:
    """A guess that agrees with a said home confirms it and leaves it said: a later guess cannot replace it."""
    result = fold([*said_offline("I live in Leeds.", "2025-01-10"), *said_offline(INTRO, "2025-03-04"),
                   *said_offline("I work at Globex in York.", "2025-04-10")])
    assert current_home(result, "2025-04-11") == ["Leeds"]


def person_slots(result, subject: str, day: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    now = select_facts(result.facts, as_of=at(day), edges=result.edges)
    return {row["slot"]: row["value"] for row in now.iter_rows(named=True) if row["slot"] and row["subject"] == subject}


@pytest.mark.parametrize("steps, subject, expected, in_history", [
    # a stranger's trial: two people named in the chat ("my partner Ana", "my sister Giulia"), so "she" was no one's
    ([("Also we're thinking about moving to Edinburgh, my partner Ana got a job offer there. My sister Giulia lives in "
       "Leeds, she's a nurse at St James's Hospital, so we'd be a bit further from her.", "2026-03-04"),
      ("My sister Giulia just got promoted to ward manager, by the way.", "2026-06-25"),
      # (and the dog named in the same conversation: "she" is whom the message named before it)
      ("Also Giulia moved from Leeds to York in August. She works at York Hospital now, still as a ward manager. "
       "Biscuit turned four last week.", "2026-09-02")],
     "Giulia", {"home_city": "York", "employer": "York Hospital", "job_title": "ward manager"},
     {"home_city": "Leeds", "employer": "St James's Hospital", "job_title": "nurse"}),
    ([("My brother Tom lives in Cardiff, he's a teacher at Ysgol Glantaf. My friend Priya says hi.", "2025-01-10"),
      ("Tom was promoted to deputy head last month!", "2025-04-02"),
      ("Tom has moved to Swansea, he works for Gower College now.", "2025-09-15")],
     "Tom", {"home_city": "Swansea", "employer": "Gower College", "job_title": "deputy head"},
     {"home_city": "Cardiff", "employer": "Ysgol Glantaf", "job_title": "teacher"}),
    # a fourth trial: a job taken and a job landed, told of a relative, gave no fact
    ([("My brother Tomasz lives in Cardiff, he's a pharmacist at University Hospital of Wales.", "2026-03-10"),
      ("News from the family, Tomasz is moving to Swansea this summer. He's taken a job at Morriston Hospital.",
       "2026-05-02")],
     "Tomasz", {"home_city": "Cardiff", "employer": "Morriston Hospital", "job_title": "pharmacist"},
     {"employer": "University Hospital of Wales"}),
    ([("My partner Imogen teaches at Oldfield School.", "2026-03-10"),
      # (the trial said "..., she starts in September": test_distill_people has the start)
      ("Imogen has just landed a new job as head of geography at Kingswood School.", "2026-07-20")],
     "Imogen", {"employer": "Kingswood School", "job_title": "head of geography"}, {}),
    ([("My sister Ana works at Globex.", "2026-01-10"), ("Ana got a job at Initech last month.", "2026-04-02")],
     "Ana", {"employer": "Initech"}, {"employer": "Globex"}),
])
def test_a_relatives_city_employer_and_title_told_in_steps_end_current(
        steps: list[tuple[str, str]], subject: str, expected: dict[str, str], in_history: dict[str, str]) -> None:
    result = fold([candidate for text, day in steps for candidate in said_offline(text, day)])
    last_day = steps[-1][1]
    assert person_slots(result, subject, last_day) == expected
    for slot, old in in_history.items():
        chain = result.facts.filter((pl.col("subject") == subject) & (pl.col("slot") == slot))
        assert old in chain["value"].to_list(), (slot, chain.select("value", "status").rows())


@pytest.mark.parametrize("said, city, district", [
    # a stranger's trial: Edinburgh was "superseded" by Leith the same day, for no time, as if the user moved again
    ("We moved into the Leith flat last weekend, so I live in Edinburgh now.", "Edinburgh", "Leith"),
    ("We moved into the Clifton flat on Saturday, so I live in Bristol now.", "Bristol", "Clifton"),
])
def test_two_places_said_in_one_breath_are_both_kept_and_neither_is_a_former_home(
        said: str, city: str, district: str) -> None:
    """One message giving a home two values tells no move between them (a district and its city, without a
    gazetteer to say which holds which): both stay current, the home city keeps one, and history holds no
    version of either ended by the other."""
    result = fold([*said_offline("I live in Leeds.", "2026-03-04"), *said_offline(said, "2026-06-25")])
    now = select_facts(result.facts, as_of=at("2026-06-26"), edges=result.edges)
    current_text = " ".join(now["content"].to_list())
    assert city in current_text and district in current_text
    assert now.filter(pl.col("slot") == "home_city")["value"].to_list() in ([city], [district])
    ended_same_day = result.facts.filter(pl.col("value").is_in([city, district]) & pl.col("valid_until").is_not_null())
    assert ended_same_day.height == 0, ended_same_day.select("content", "valid_from", "valid_until").rows()
    leeds = result.facts.filter(pl.col("value") == "Leeds").row(0, named=True)
    assert leeds["status"] == "superseded"  # the move from Leeds is one change


@pytest.mark.parametrize("before, after, ended, kept", [
    # a stranger's trial: oat milk stayed the current preference
    ("By the way I don't drink cow's milk, I always take oat milk in my coffee.",
     "Small update: I've gone off oat milk, these days I just drink my coffee black.", "oat milk", "cow's milk"),
    ("I take two sugars in my tea. I love a strong builder's brew.",
     "I gave up sugar, nowadays I take my tea plain.", "two sugars", "builder's brew"),
    # a fourth trial: "completely" was taken for part of what ended, so nothing about coffee held it
    ("My morning coffee is sacred, I take it black. I also love green tea.",
     "Funny thing, I've given up coffee completely now.", "coffee is sacred", "green tea"),
])
def test_a_taste_the_user_says_ended_is_no_longer_current(before: str, after: str, ended: str, kept: str) -> None:
    result = fold([*said_offline(before, "2026-05-12"), *said_offline(after, "2026-09-02")])
    said_before = result.facts.filter(pl.col("created_at") == at("2026-05-12"))
    the_state = said_before.filter(pl.col("content").str.contains(ended))["content"].to_list()
    now = select_facts(result.facts, as_of=at("2026-09-03"), edges=result.edges)["content"].to_list()
    assert the_state and not set(the_state) & set(now), now
    assert [content for content in now if kept in content], now
    then = select_facts(result.facts, as_of=at("2026-06-01"), edges=result.edges)["content"].to_list()
    assert set(the_state) <= set(then)


@pytest.mark.parametrize("steps, subject, age", [
    # a stranger's trial: "Biscuit turned four" gave no fact
    ([("I've got a beagle called Biscuit.", "2026-03-04"),
      ("Biscuit turned four last week and he's much calmer in the new flat now.", "2026-09-02")], "Biscuit", "four"),
    ([("My daughter Mia just turned 8!", "2026-05-11")], "Mia", "8"),
])
def test_an_age_a_pet_or_a_person_reached_is_a_fact_about_them(
        steps: list[tuple[str, str]], subject: str, age: str) -> None:
    """(No `age` slot yet: a later birthday is a fact of its own, not the next value of a chain.)"""
    result = fold([candidate for text, day in steps for candidate in said_offline(text, day)])
    now = select_facts(result.facts, as_of=at(steps[-1][1]), edges=result.edges)
    assert f"{subject} is {age}." in now.filter(pl.col("subject") == subject)["content"].to_list()


@pytest.mark.parametrize("offer, start, employer, title", [
    # a fourth trial: "there" named no employer, so the old one stayed current
    ("Big news: I accepted Halvard's offer!", "I started there last Monday as a senior analyst.", "Halvard",
     "senior analyst"),
    ("I had my final interview at Globex Labs and they made me an offer.", "I've been working there since Monday.",
     "Globex Labs", None),
])
def test_a_job_started_there_is_at_the_one_employer_the_message_named(offer: str, start: str, employer: str,
                                                                      title: str | None) -> None:
    result = fold([*said_offline("I'm a data analyst at Kestrel Insurance.", "2026-03-10"),
                   *said_offline(f"{offer} {start}", "2026-07-20")])
    slots = person_slots(result, "user", "2026-07-21")
    assert slots["employer"] == employer
    if title:
        assert slots["job_title"] == title
    chain = result.facts.filter(pl.col("slot") == "employer")
    assert "Kestrel Insurance" in chain["value"].to_list()


def test_there_with_no_one_employer_before_it_names_none() -> None:
    """Two places of work before it, or none: "there" stays unread."""
    for said in ("I visited Globex and Initech last week. I started there on Monday.",
                 "I started there on Monday."):
        result = fold(said_offline(said, "2026-07-20"))
        assert person_slots(result, "user", "2026-07-21").get("employer") is None, said


def test_she_after_a_curly_apostrophe_is_still_the_person_the_message_named_before() -> None:
    """Phones and ChatGPT exports type ’: the text before "She’s a nurse" was looked up in the raw message, missed,
    and taken to be the whole message, Ana included, so "she" was no one and the job was lost."""
    said = "My sister Giulia lives in Leeds. She’s a nurse at St James’s Hospital. My partner Ana says hi."
    result = fold(said_offline(said, "2026-03-04"))
    assert person_slots(result, "Giulia", "2026-03-05") == {
        "home_city": "Leeds", "job_title": "nurse", "employer": "St James's Hospital"}


@pytest.mark.parametrize("steps, subject, title, old_title, since, employer", [
    # a stranger's trial: the promotion became a fact about the user, and "Morriston" would have replaced the
    # hospital it is the short name of
    ([("Also my tortoise Biscuit has his birthday on 4 June, he'll be twelve. And my brother Tomasz lives in Cardiff. "
       "He works as a pharmacist at the University Hospital of Wales.", "2026-03-10"),
      ("Oh and news from the family, Tomasz is moving to Swansea this summer. He's taken a job at Morriston "
       "Hospital.", "2026-05-02"),
      ("My brother got promoted last week, Tomasz is now lead pharmacist at Morriston. He's been there since June.",
       "2026-10-05")],
     "Tomasz", "lead pharmacist", "pharmacist", "2026-09-28", "Morriston Hospital"),
    ([("My sister Ana works as a nurse at Leeds General Infirmary.", "2025-02-01"),
      ("Ana got a promotion in May, she's now senior nurse at Leeds General.", "2025-06-10")],
     "Ana", "senior nurse", "nurse", "2025-05-01", "Leeds General Infirmary"),
])
def test_a_persons_promotion_is_the_next_title_of_theirs_and_a_short_name_of_their_workplace_keeps_it(
        steps: list[tuple[str, str]], subject: str, title: str, old_title: str, since: str, employer: str) -> None:
    result = fold([candidate for text, day in steps for candidate in said_offline(text, day)])
    last = steps[-1][1]
    assert person_slots(result, subject, last)["job_title"] == title
    assert person_slots(result, subject, last)["employer"] == employer
    now = select_facts(result.facts, as_of=at(last), edges=result.edges)
    chain = now.filter((pl.col("subject") == subject) & (pl.col("slot") == "job_title")).row(0, named=True)
    assert chain["valid_from"] == at(since)
    history = fact_history(result.facts, result.edges, chain["fact_id"])
    old = history.filter(pl.col("value") == old_title).row(0, named=True)
    assert old["status"] == "superseded" and old["valid_until"] == at(since)
    assert not [c for c in now.filter(pl.col("subject") == "user")["content"].to_list() if subject in c
                and "promot" in c]


@pytest.mark.parametrize("steps, subject, slot, moved_to, was_in", [
    ([("My brother Tomasz lives in Cardiff.", "2026-03-10"),
      ("Oh and news from the family, Tomasz is moving to Swansea this summer.", "2026-05-02"),
      ("Tomasz has moved to Swansea now, he loves it.", "2026-08-20")], "Tomasz", "home_city", "Swansea", "Cardiff"),
    ([("My sister Ana lives in Leeds.", "2025-01-10"),
      ("Ana's going to move to York in June.", "2025-04-02"),
      ("Ana lives in York now.", "2025-07-15")], "Ana", "home_city", "York", "Leeds"),
    ([("My sister Ana works at Globex.", "2026-03-10"),
      ("Ana is going to start at Initech in May.", "2026-04-02"),
      ("Ana works at Initech now.", "2026-06-02")], "Ana", "employer", "Initech", "Globex"),
])
def test_a_persons_plan_is_carried_out_by_a_later_statement_of_theirs(
        steps: list[tuple[str, str]], subject: str, slot: str, moved_to: str, was_in: str) -> None:
    result = fold([candidate for text, day in steps for candidate in said_offline(text, day)])
    plan = result.facts.filter((pl.col("subject") == subject) & (pl.col("type") == "commitment"))
    assert plan.height == 1, plan
    then = select_facts(result.facts, as_of=at(steps[1][1]), edges=result.edges)
    assert plan["fact_id"][0] in then["fact_id"].to_list()  # a plan while it was to come
    last = steps[-1][1]
    now = select_facts(result.facts, as_of=at(last), edges=result.edges)
    assert plan["fact_id"][0] not in now["fact_id"].to_list()
    assert plan["status"][0] == "superseded" and plan["valid_until"][0] == at(last)
    assert person_slots(result, subject, last)[slot] == moved_to
    city = now.filter((pl.col("subject") == subject) & (pl.col("slot") == slot))["fact_id"][0]
    assert was_in in fact_history(result.facts, result.edges, city)["value"].to_list()


def test_a_since_told_later_dates_the_persons_workplace_and_ends_the_old_one_then() -> None:
    """The trial: Tomasz's job at Morriston was told in May ("He's taken a job at Morriston Hospital"), and in October
    "He's been there since June": the new employer holds from June, the old one until then."""
    steps = [("My brother Tomasz works as a pharmacist at the University Hospital of Wales.", "2026-03-10"),
             ("Oh and news from the family, Tomasz is moving to Swansea this summer. He's taken a job at Morriston "
              "Hospital.", "2026-05-02"),
             ("My brother got promoted last week, Tomasz is now lead pharmacist at Morriston. He's been there since "
              "June.", "2026-10-05")]
    result = fold([candidate for text, day in steps for candidate in said_offline(text, day)])
    employer = result.facts.filter((pl.col("subject") == "Tomasz") & (pl.col("slot") == "employer")).sort("version")
    assert employer.select("value", "valid_from", "valid_until").rows() == [
        ("University Hospital of Wales", at("2026-03-10"), at("2026-06-01")),
        ("Morriston Hospital", at("2026-06-01"), None)]
