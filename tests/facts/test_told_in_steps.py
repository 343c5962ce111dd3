"""From chat to facts: a job change and a move told in steps, as a user told them, end current.

A user's trial: a city of work said in an introduction, then a new job "as a senior data engineer", a lease signed
"moving on June 1st", and weeks later "We've moved into the Manchester flat now". The facts must end with the new
city, employer and title current, the old ones in history, and the move's plan closed.
"""

from __future__ import annotations

import polars as pl

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
    # the lease said the move was coming: the move carried it out, on the day it was told
    plan = result.facts.filter(pl.col("content").str.contains("lease")).row(0, named=True)
    assert plan["status"] == "superseded" and plan["valid_until"] == at("2025-07-02")
    assert plan["fact_id"] not in now["fact_id"].to_list()
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
