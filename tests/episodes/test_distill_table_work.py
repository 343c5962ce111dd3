"""The reader table's rows for where the user works (readers/table_work.py): a job told with a past time is a job
that was, with its time, never the employer now nor a new job; a job said in an interview rehearsal or of an
application is no employment. Phrasings written for these tests (the class RealMem's judged samples found wrong)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memlake.distill.models import Conversation, FactCandidate, Message
from memlake.distill.offline import distill_offline

SAID = datetime(2026, 6, 10, 12, 0, tzinfo=UTC)


def candidates(text: str) -> list[FactCandidate]:
    return list(distill_offline(Conversation("a", "c", None, (Message("m1", "user", text, SAID),))).fact_candidates)


@pytest.mark.parametrize(("text", "org", "time"), [
    ("Back in 2017 I worked at Initech as a tester.", "Initech", "2017"),
    ("In 2019 I was working for Globex.", "Globex", "2019"),
    ("I was at Hooli until 2021, then I took a break.", "Hooli", "2021"),
])
def test_a_job_told_with_a_past_time_is_a_job_that_was_with_its_time(text: str, org: str, time: str) -> None:
    found = candidates(text)
    assert not [c for c in found if c.slot == "employer"]
    assert [c for c in found if c.type == "event" and f"worked at {org}" in c.content and time in c.content]


def test_the_job_before_one_joined_is_a_job_that_was_and_the_joining_no_news() -> None:
    found = candidates("Before I joined Northwind Labs I was at Globex.")
    assert [(c.value, "new job" in c.content) for c in found if c.slot == "employer"] == [("Northwind Labs", False)]
    assert [c for c in found if c.type == "event" and "worked at Globex" in c.content]


@pytest.mark.parametrize(("text", "org", "since"), [
    ("I joined Gojek in 2018 as an engineer.", "Gojek", "2018-01-01"),
    ("I started at Initech back in 2015.", "Initech", "2015-01-01"),
])
def test_a_start_told_with_a_past_year_holds_from_then_and_is_no_new_job(text: str, org: str, since: str) -> None:
    [employer] = [c for c in candidates(text) if c.slot == "employer"]
    assert (employer.value, employer.valid_from) == (org, since)
    assert "new job" not in employer.content and since[:4] in employer.content


@pytest.mark.parametrize("text", [
    "Mock interview answer: I joined Globex as a marketing manager and doubled our leads.",
    "Let's practise my interview answers. I work at Initech as a product manager.",
    "For the interview role-play: I'm a senior analyst at Barclays.",
    "Practising for the Globex interview: I have been at Globex for two years.",
])
def test_a_job_said_in_an_interview_rehearsal_is_no_employment(text: str) -> None:
    assert not [c for c in candidates(text) if c.slot in ("employer", "job_title")]


@pytest.mark.parametrize("text", [
    "I'm applying to Hooli: picture it, I start a new job with Hooli on Monday.",
    "I'm interviewing with Globex on Friday. My new job is at Globex, I can feel it!",
    "I'm interviewing at Initech next week and I start a new job with Initech soon, manifesting it.",
])
def test_the_job_applied_or_interviewed_for_is_no_employment(text: str) -> None:
    assert not [c for c in candidates(text) if c.slot == "employer"]
