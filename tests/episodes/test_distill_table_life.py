"""The reader table's rows for the user's diet and the projects' deadlines (readers/table_life.py): a diet change said
in passing, in a clause about something else; a deadline said with a weekday. Phrasings written for these tests."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memlake.distill.models import Conversation, Message
from memlake.distill.offline import distill_offline

SAID = datetime(2026, 6, 10, 12, 0, tzinfo=UTC)  # a Wednesday


def slots(text: str) -> set[tuple[str | None, str | None, str]]:
    session = distill_offline(Conversation("a", "c", None, (Message("m1", "user", text, SAID),)))
    return {(c.slot, c.subject, c.value) for c in session.fact_candidates if c.slot}


@pytest.mark.parametrize("text, diet", [
    ("Since switching to vegan last spring I've had way more energy.", "vegan"),
    ("Anyway, being vegetarian now, I skip the barbecue.", "vegetarian"),
    ("Ever since we went pescatarian the shopping is cheaper.", "pescatarian"),
])
def test_a_diet_change_said_in_passing_is_the_users_diet(text: str, diet: str) -> None:
    assert ("diet", "user", diet) in slots(text)


@pytest.mark.parametrize("text", [
    "Since my sister switched to vegan she has had more energy.",  # another's change
    "I'm not vegetarian anymore, being vegetarian was hard.",  # a diet left
    "Since trying vegan for a week I've had more energy.",  # a week's trial
])
def test_a_diet_said_in_passing_of_another_or_for_a_while_is_no_diet(text: str) -> None:
    assert not {s for s in slots(text) if s[0] == "diet"}


@pytest.mark.parametrize("text, project, day", [
    ("Project Heron now launches on Friday.", "Project Heron", "2026-06-12"),
    ("Quick update: we're shipping Project Kestrel on Monday.", "Project Kestrel", "2026-06-15"),
    ("The Project Osprey release is now on Thursday.", "Project Osprey", "2026-06-11"),
])
def test_a_deadline_said_with_a_weekday_is_the_next_such_day(text: str, project: str, day: str) -> None:
    assert {(s, v) for slot, s, v in slots(text) if slot == "project_deadline"} == {(project, day)}


@pytest.mark.parametrize("text", [
    "Actually, the Project Kestrel launch is on October 23, 2026, not October 3, 2026.",
    "The Project Kestrel release is on October 23, 2026, not October 3.",
])
def test_a_day_said_as_not_the_deadline_is_not_read_as_it(text: str) -> None:
    assert {v for slot, _, v in slots(text) if slot == "project_deadline"} == {"2026-10-23"}
