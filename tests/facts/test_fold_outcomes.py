"""The fold's rules for plans, states and outcomes: what a later statement carries out or ends is closed.

A plan ("plans to move to Montreal") carried out by a later statement of any
type ("moved to Montreal", "lives in Montreal") is closed on the day said, and
the new value is current; a state ("is interviewing at Initech", "works with
Tomás at Acme") that a later statement ends (a new employer, leaving Acme) is
closed the same way. Old versions stay readable as of their time.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl

from memlake.facts.fold import Candidate, FoldResult, fold
from memlake.facts.reads import fact_history, select_facts

T0 = datetime(2024, 6, 1, 9, 0, tzinfo=UTC)


def said(day: int, type_: str, content: str, slot: str | None = None, value: str | None = None,
         valid_from: datetime | None = None, subject: str = "user") -> Candidate:
    at = T0 + timedelta(days=day)
    return Candidate(agent_id="a", type=type_, subject=subject, content=content, created_at=at, slot=slot,
                     value=value, valid_from=valid_from, conversation_id=f"c{day}", message_ids=(f"c{day}-m",))


def row(result: FoldResult, content: str) -> dict:  # type: ignore[type-arg]
    return result.facts.filter(pl.col("content") == content).row(0, named=True)


def current(result: FoldResult, as_of: datetime | None = None) -> list[str]:
    return sorted(select_facts(result.facts, as_of=as_of, edges=result.edges)["content"].to_list())


PLAN = "The user plans to move to Montreal (around 2024-07-31)."
TORONTO = "The user lives in Toronto."
MOVED = "The user moved to Montreal around 2024-06-17."


def test_a_move_told_in_steps_makes_the_new_city_current_and_closes_the_plan() -> None:
    result = fold([
        said(0, "fact", TORONTO, "home_city", "Toronto"),
        said(5, "commitment", PLAN, value="move to Montreal"),
        said(30, "fact", MOVED, "home_city", "Montreal", valid_from=T0 + timedelta(days=16)),
    ])
    assert current(result) == [MOVED]
    plan = row(result, PLAN)
    moved = row(result, MOVED)
    assert plan["status"] == "superseded" and plan["superseded_by"] == moved["fact_id"]
    assert plan["valid_until"] == T0 + timedelta(days=16)  # the day the move happened, as said
    assert row(result, TORONTO)["valid_until"] == T0 + timedelta(days=16)
    reasons = result.edges.filter(pl.col("to_fact_id") == plan["fact_id"])["reason"].to_list()
    assert reasons and "carried out" in reasons[0]
    # as known before the move was told: Toronto and the plan
    assert current(result, T0 + timedelta(days=10)) == [TORONTO, PLAN]
    # the city's history holds Toronto and the plan it carried out
    history = fact_history(result.facts, result.edges, moved["fact_id"])["content"].to_list()
    assert TORONTO in history and PLAN in history


def test_a_plan_carried_out_by_a_statement_of_another_kind_with_no_city_before() -> None:
    """No home city was known: "I live in Montreal" after the plan is the city, not a confirmation of the plan."""
    lives = "The user lives in Montreal."
    result = fold([said(5, "commitment", PLAN, value="move to Montreal"),
                   said(30, "fact", lives, "home_city", "Montreal")])
    assert current(result) == [lives]
    assert row(result, PLAN)["status"] == "superseded"


def test_a_statement_that_reads_like_the_plan_carries_it_out_rather_than_confirming_it() -> None:
    """Embeddings may find "lives in Montreal" a duplicate of "plans to move to Montreal": a plan is not
    confirmed by its outcome; the outcome is a fact of its own and the plan is closed."""
    lives = "The user lives in Montreal."
    alike = lambda texts: np.full((len(texts), 4), 0.5, dtype=np.float32)  # noqa: E731 - every text the same
    result = fold([said(5, "commitment", PLAN, value="move to Montreal"),
                   said(30, "fact", lives, "home_city", "Montreal")], embed=alike)
    assert current(result) == [lives]
    assert row(result, lives)["slot"] == "home_city" and row(result, PLAN)["status"] == "superseded"
    assert row(result, PLAN)["confirmation_count"] == 0


def test_a_move_from_a_city_is_not_carried_out_by_living_in_that_city() -> None:
    plan = "The user plans to move from Berlin to Lisbon (around 2024-07-01)."
    berlin = "The user lives in Berlin."
    result = fold([said(0, "commitment", plan, value="move from Berlin to Lisbon"),
                   said(2, "fact", berlin, "home_city", "Berlin")])
    assert current(result) == [berlin, plan]


def test_a_plan_said_after_the_move_stays_a_plan() -> None:
    """Only a later statement carries a plan out: one said in the same breath does not."""
    lives = "The user lives in Montreal."
    result = fold([said(0, "fact", lives, "home_city", "Montreal"),
                   said(0, "commitment", "The user plans to move to Montreal's Plateau.", value="move to Plateau")])
    assert len(current(result)) == 2


def test_starting_at_a_company_ends_interviewing_there() -> None:
    interviewing = "The user is interviewing at Initech."
    started = "The user started a new job at Initech."
    result = fold([
        said(0, "fact", "The user works at Acme.", "employer", "Acme"),
        said(3, "event", interviewing, value="interviewing at Initech"),
        said(20, "fact", started, "employer", "Initech", valid_from=T0 + timedelta(days=18)),
    ])
    assert current(result) == [started]
    closed = row(result, interviewing)
    assert closed["status"] == "superseded" and closed["valid_until"] == T0 + timedelta(days=18)
    assert current(result, T0 + timedelta(days=10)) == [interviewing, "The user works at Acme."]


def test_every_version_lists_what_another_fact_closed_now_and_as_of_a_later_day() -> None:
    """A user trial: `memlake facts --history` ("every version") left out "is interviewing at Initech" once starting
    there had closed it, as it did a plan carried out: their chains have no active version, but they were true."""
    interviewing = "The user is interviewing at Initech."
    started = "The user started a new job at Initech."
    result = fold([
        said(0, "fact", "The user works at Acme.", "employer", "Acme"),
        said(3, "event", interviewing, value="interviewing at Initech"),
        said(5, "commitment", PLAN, value="move to Montreal"),
        said(20, "fact", started, "employer", "Initech", valid_from=T0 + timedelta(days=18)),
        said(30, "fact", MOVED, "home_city", "Montreal", valid_from=T0 + timedelta(days=16)),
    ])

    def listed(as_of: datetime | None = None) -> list[tuple[str, str]]:
        every = select_facts(result.facts, as_of=as_of, include_history=True, edges=result.edges)
        return sorted(zip(every["content"].to_list(), every["status"].to_list(), strict=True))

    assert listed() == sorted([(started, "active"), (MOVED, "active"), ("The user works at Acme.", "superseded"),
                               (interviewing, "superseded"), (PLAN, "superseded")])
    # as of day 25: the interview was over by then (closed on day 18, told on day 20), the plan not yet carried out
    assert (interviewing, "superseded") in listed(T0 + timedelta(days=25))
    assert (PLAN, "active") in listed(T0 + timedelta(days=25))
    assert MOVED not in [content for content, _ in listed(T0 + timedelta(days=25))]


def test_a_past_event_naming_the_new_value_is_left_alone() -> None:
    """"I visited Initech last year" is done, not a state: joining Initech later does not close it."""
    visit = "The user visited Initech in 2023."
    result = fold([said(3, "event", visit, value="visited Initech", valid_from=datetime(2023, 5, 1, tzinfo=UTC)),
                   said(20, "fact", "The user works at Initech.", "employer", "Initech")])
    assert row(result, visit)["status"] == "active" and row(result, visit)["valid_until"] is None


WITH_TOMAS = "The user works with Tomás at Acme."


def test_a_new_employer_ends_working_with_a_colleague_at_the_old_one() -> None:
    result = fold([
        said(0, "fact", "The user works at Acme.", "employer", "Acme"),
        said(2, "relationship", WITH_TOMAS, value="Tomás"),
        said(40, "fact", "The user works at Initech.", "employer", "Initech"),
    ])
    assert current(result) == ["The user works at Initech."]
    closed = row(result, WITH_TOMAS)
    assert closed["status"] == "superseded" and closed["valid_until"] == T0 + timedelta(days=40)
    assert WITH_TOMAS in current(result, T0 + timedelta(days=20))


def test_leaving_a_job_ends_it_and_working_with_a_colleague_there() -> None:
    left = "The user left Acme around 2024-07-01."
    result = fold([
        said(0, "fact", "The user works at Acme.", "employer", "Acme"),
        said(2, "relationship", WITH_TOMAS, value="Tomás"),
        said(40, "event", left, value="left Acme", valid_from=T0 + timedelta(days=30)),
    ])
    assert current(result) == [left]
    end = T0 + timedelta(days=30)
    assert row(result, WITH_TOMAS)["valid_until"] == end
    employer = row(result, "The user works at Acme.")
    assert employer["valid_until"] == end  # ended, not replaced: the slot's last value, true until then
    assert current(result, T0 + timedelta(days=20)) == ["The user works at Acme.", WITH_TOMAS]


def test_a_rerun_over_the_same_inputs_changes_nothing() -> None:
    events = [
        said(0, "fact", TORONTO, "home_city", "Toronto"),
        said(0, "fact", "The user works at Acme.", "employer", "Acme"),
        said(2, "relationship", WITH_TOMAS, value="Tomás"),
        said(3, "event", "The user is interviewing at Initech.", value="interviewing at Initech"),
        said(5, "commitment", PLAN, value="move to Montreal"),
        said(20, "fact", "The user started a new job at Initech.", "employer", "Initech"),
        said(30, "fact", MOVED, "home_city", "Montreal", valid_from=T0 + timedelta(days=16)),
    ]
    once = fold(events)
    shuffled = list(events)
    random.Random(7).shuffle(shuffled)
    again = fold(shuffled + events)  # the same statements again, in another order
    assert once.facts.equals(again.facts) and once.edges.equals(again.edges)


def test_a_value_named_short_is_still_named() -> None:
    """People shorten names: "I left Acme" ends employer Acme Robotics, as "Acme" and "Acme Robotics" are one
    employer to the slot rules."""
    works = "The user works at Acme Robotics."
    left = "The user left Acme around 2024-07-01."
    result = fold([said(0, "fact", works, "employer", "Acme Robotics"),
                   said(40, "event", left, value="left Acme", valid_from=T0 + timedelta(days=30))])
    assert current(result) == [left]
    assert row(result, works)["valid_until"] == T0 + timedelta(days=30)


OAT_MILK = "The user always takes oat milk in their coffee."
NO_COWS_MILK = "The user doesn't drink cow's milk."


def test_a_taste_that_a_later_statement_ends_is_closed_on_the_day_said() -> None:
    """A stranger's trial: "I always take oat milk in my coffee", months later "I've gone off oat milk": oat milk
    stayed current. A state a later statement ends is closed, whatever the type; what it does not name stays."""
    gone_off = "The user has gone off oat milk."
    result = fold([said(0, "fact", OAT_MILK), said(0, "preference", NO_COWS_MILK, value="no cow's milk"),
                   said(90, "fact", gone_off)])
    closed = row(result, OAT_MILK)
    assert closed["status"] == "superseded" and closed["valid_until"] == T0 + timedelta(days=90)
    assert closed["superseded_by"] == row(result, gone_off)["fact_id"]
    assert current(result) == sorted([NO_COWS_MILK, gone_off])
    assert OAT_MILK in current(result, T0 + timedelta(days=30))


def test_ending_a_habit_or_a_trip_in_other_words_closes_it() -> None:
    squash = "The user plays squash every Tuesday."
    sugar = "The user takes two sugars in their tea."
    gym = "The user is a member of the climbing gym on Canal Street."
    trip = "The user is going to Porto from 2024-07-10 to 2024-07-17."
    result = fold([said(0, "fact", squash), said(0, "preference", sugar), said(0, "fact", gym),
                   said(1, "commitment", trip),
                   said(40, "event", "The user stopped playing squash after the knee injury."),
                   said(41, "fact", "The user gave up sugar in their tea."),
                   said(42, "fact", "The user no longer goes to the climbing gym."),
                   said(48, "event", "The user got back from Porto in the week of 2024-07-15.")])
    for state, day in ((squash, 40), (sugar, 41), (gym, 42), (trip, 48)):
        assert row(result, state)["status"] == "superseded", state
        assert row(result, state)["valid_until"] == T0 + timedelta(days=day), state


def test_an_end_said_in_the_same_breath_or_of_something_else_ends_nothing() -> None:
    """Only a later statement ends a state, and only one that names what it held: giving up coffee ends no tea."""
    tea = "The user drinks green tea every morning."
    result = fold([said(0, "fact", tea), said(5, "fact", "The user gave up coffee."),
                   said(6, "fact", "The user plays chess."), said(6, "event", "The user stopped playing chess.")])
    assert row(result, tea)["status"] == "active"
    assert row(result, "The user plays chess.")["status"] == "active"
