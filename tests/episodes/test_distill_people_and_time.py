"""People and time a stranger's trial still lost (issue 23): a season is a stretch of days, an unnamed relative's
statement is theirs, a workplace's "since", the user's own age.

Each test carries the trial's sentence (agent `rowan`) where it had one, and phrasings of other shapes.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from memlake.distill.dates import find_dates, with_dates_resolved
from memlake.distill.models import Conversation, DistilledSession, Message


def said(*texts: str, day: str = "2026-05-02") -> DistilledSession:
    """The offline distiller's session of one conversation in which the user said `texts`, one message each."""
    from memlake.distill.offline import distill_offline

    at = datetime.fromisoformat(day).replace(tzinfo=UTC)
    messages = tuple(Message(f"m{i}", "user", text, at) for i, text in enumerate(texts))
    return distill_offline(Conversation("rowan", "c1", None, messages))


# ---------------------------------------------------------------- seasons and parts of a month


@pytest.mark.parametrize("text, day, first, last", [
    ("Tomasz is moving to Swansea this summer.", "2026-05-02", "2026-06-01", "2026-08-31"),  # the trial
    ("We're going to Japan next spring.", "2026-05-02", "2027-03-01", "2027-05-31"),
    ("We'll repaint the hall in the autumn.", "2026-05-02", "2026-09-01", "2026-11-30"),
    ("I want the kitchen done by the end of summer.", "2026-05-02", "2026-08-01", "2026-08-31"),
    ("We went to Crete last summer.", "2026-05-02", "2025-06-01", "2025-08-31"),
    ("This winter we'll stay in Oslo.", "2026-11-05", "2026-12-01", "2027-02-28"),  # a winter crosses the year
    ("We're off to Portugal in the fall.", "2026-05-02", "2026-09-01", "2026-11-30"),
    ("The wedding is in early July.", "2026-05-02", "2026-07-01", "2026-07-10"),
    ("They're moving in late August.", "2026-05-02", "2026-08-21", "2026-08-31"),
])
def test_a_season_or_a_part_of_a_month_is_the_stretch_of_days_it_names(text: str, day: str, first: str,
                                                                        last: str) -> None:
    (mention,) = find_dates(text, date.fromisoformat(day))
    assert (mention.day.isoformat(), mention.last.isoformat()) == (first, last)


@pytest.mark.parametrize("text", ["Summer is my favourite season.", "Have you read the Autumn Statement?",
                                  "We're renting the summer house again.", "I fixed the spring in the old chair.",
                                  "Spring rolls are my weakness."])
def test_a_season_word_that_is_no_time_is_no_date(text: str) -> None:
    assert find_dates(text, date(2026, 5, 2)) == []
    assert with_dates_resolved(text, date(2026, 5, 2)) == text


def test_a_season_said_in_a_fact_names_its_year_and_reads_back_the_same() -> None:
    resolved = with_dates_resolved("I want the kitchen done by the end of summer.", date(2026, 5, 2))
    assert resolved == "I want the kitchen done by the end of summer 2026."
    (mention,) = find_dates(resolved, date(2027, 1, 10))  # read months later, the year it says holds
    assert (mention.day, mention.last) == (date(2026, 8, 1), date(2026, 8, 31))


@pytest.mark.parametrize("text, subject, content, until", [
    ("Oh and news from the family, Tomasz is moving to Swansea this summer. He's taken a job at Morriston Hospital.",
     "Tomasz", "Tomasz is moving to Swansea in summer 2026.", "2026-09-01"),  # the trial
    ("I'm planning to visit Japan next spring.", "user", "The user plans to visit Japan in spring 2027.",
     "2027-06-01"),
    ("My sister Ana is going to move to York in the autumn.", "Ana", "Ana is going to move to York in autumn 2026.",
     "2026-12-01"),
    ("I'm going to repaint the hall by the end of summer.", "user",
     "The user plans to repaint the hall by the end of summer 2026.", "2026-09-01"),
    ("I'm going to start my course in early June.", "user", "The user plans to start their course in early June 2026.",
     "2026-06-11"),
])
def test_a_plan_for_a_season_says_which_and_ends_after_it(text: str, subject: str, content: str, until: str) -> None:
    plans = [(c.subject, c.content, c.valid_until) for c in said(text).fact_candidates if c.type == "commitment"]
    assert plans == [(subject, content, until)]


# ---------------------------------------------------------------- a relative said without a name


@pytest.mark.parametrize("text, subject, content", [
    ("My dad plans to retire next year.", "the user's dad", "The user's dad plans to retire next year."),
    ("My mum hates flying.", "the user's mum", "The user's mum hates flying."),
    ("My best friend works as a nurse at St Mary's.", "the user's best friend",
     "The user's best friend works as a nurse at St Mary's."),
    ("My grandma is vegan.", "the user's grandma", "The user's grandma is vegan."),
    ("My boss is moving to Berlin in the autumn.", "the user's boss",
     "The user's boss is moving to Berlin in autumn 2026."),
])
def test_a_statement_about_an_unnamed_relative_is_about_them_not_the_user(text: str, subject: str,
                                                                          content: str) -> None:
    facts = [(c.subject, c.content) for c in said(text).fact_candidates]
    assert facts == [(subject, content)]


@pytest.mark.parametrize("texts, subject, content", [
    (("My brother Tomasz lives in Cardiff.", "My brother is moving to Swansea this summer."), "Tomasz",
     "Tomasz is moving to Swansea in summer 2026."),
    (("My sister Ana works at Globex.", "My sister loves wild swimming."), "Ana", "Ana loves wild swimming."),
])
def test_a_relative_the_conversation_named_is_the_subject_by_name(texts: tuple[str, ...], subject: str,
                                                                   content: str) -> None:
    assert (subject, content) in [(c.subject, c.content) for c in said(*texts).fact_candidates]
    assert not [c.content for c in said(*texts).fact_candidates if c.subject == "user" and not c.slot]


def test_two_relatives_named_by_one_word_leave_the_word_unnamed() -> None:
    facts = said("My sister Ana lives in Leeds and my sister Eve lives in York.", "My sister hates flying.")
    assert ("the user's sister", "The user's sister hates flying.") in [(c.subject, c.content)
                                                                      for c in facts.fact_candidates]


@pytest.mark.parametrize("text", ["My dad's car broke down again.", "My sister and I went to Rome.",
                                  "My best friend is Sam."])
def test_a_relatives_thing_the_two_of_us_or_an_introduction_is_no_statement_about_the_relative(text: str) -> None:
    assert not [c for c in said(text).fact_candidates if c.subject.startswith("the user's")]


# ---------------------------------------------------------------- "been there since"


@pytest.mark.parametrize("text, person, slot, since", [
    ("My brother got promoted last week, Tomasz is now lead pharmacist at Morriston. He's been there since June.",
     "Tomasz", "employer", "2026-06-01"),  # the trial
    ("Ana works at Initech, she's been there since March.", "Ana", "employer", "2026-03-01"),
    ("My sister Ana works at Globex. She has worked there since 2019.", "Ana", "employer", "2019-01-01"),
    ("My cousin Leo lives in Galway. He's lived there since the spring.", "Leo", "home_city", "2026-03-01"),
])
def test_a_persons_workplace_or_home_is_held_from_the_since_said(text: str, person: str, slot: str,
                                                                 since: str) -> None:
    held = [c.valid_from for c in said(text, day="2026-10-05").fact_candidates
            if c.subject == person and c.slot == slot]
    assert held == [since]


def test_there_with_a_home_and_a_workplace_and_no_verb_to_tell_dates_neither() -> None:
    facts = said("My sister Ana lives in Leeds. Ana works at Globex. She's been there since 2019.",
                 day="2026-10-05").fact_candidates
    assert {(c.slot, c.valid_from) for c in facts if c.subject == "Ana"} == {("home_city", "2026-10-05"),
                                                                             ("employer", "2026-10-05")}


# ---------------------------------------------------------------- the user's own age


@pytest.mark.parametrize("text, fact", [
    ("I turned 34 last week.", ("fact", "The user is 34 as of 2026-04-25.", "2026-04-25")),
    ("I'm 29.", ("fact", "The user is 29 as of 2026-05-02.", "2026-05-02")),
    ("I am 52 years old now", ("fact", "The user is 52 as of 2026-05-02.", "2026-05-02")),
    ("Just turned thirty!", ("fact", "The user is thirty as of 2026-05-02.", "2026-05-02")),
    ("I'll be 40 in March.", ("event", "The user turns 40 in March 2027.", "2026-05-02")),
    ("I turn 30 next month, a bit scary.", ("event", "The user turns 30 in June 2026.", "2026-05-02")),
])
def test_the_users_age_is_kept_with_the_day_it_holds(text: str, fact: tuple[str, str, str]) -> None:
    facts = [(c.type, c.content, c.valid_from) for c in said(text).fact_candidates if c.subject == "user"]
    assert facts == [fact]
    assert not [c for c in said(text).fact_candidates if c.slot]  # no slot: a later age is a fact of its own


@pytest.mark.parametrize("text", ["I'm 5 minutes away.", "I'm 100% sure.", "If I were 20 again I'd travel.",
                                  "I'll be 40 soon."])
def test_a_number_after_i_am_that_is_no_age_or_an_age_with_no_day_is_no_age(text: str) -> None:
    assert not [c for c in said(text).fact_candidates if "as of" in c.content or "turns" in c.content]


@pytest.mark.parametrize("text, fact", [
    ("I'm turning 30 next month.", ("event", "The user turns 30 in June 2026.")),  # a birthday ahead, in -ing
    ("I'm turning forty-one on 20 June!", ("event", "The user turns forty-one on 2026-06-20.")),
])
def test_an_age_the_user_is_turning_is_read_as_one_to_come(text: str, fact: tuple[str, str]) -> None:
    assert [(c.type, c.content) for c in said(text).fact_candidates if c.subject == "user"] == [fact]


@pytest.mark.parametrize("text", ["I'm 30 weeks pregnant.", "My son is 5.", "I was 12 when we moved to Leeds.",
                                  "I'm not 40, I'm 39."[:11]])
def test_a_number_that_counts_something_else_or_anothers_age_is_not_the_users_age(text: str) -> None:
    assert not [c for c in said(text).fact_candidates if "The user is" in c.content and "as of" in c.content]
