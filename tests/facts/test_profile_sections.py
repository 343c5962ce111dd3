"""The profile's sections for the user's plain statements: what a reader looks for under each, not all "identity".

A stranger's trial listed a sourdough problem, a kitchen's temperature, giving up coffee and working from home three
days a week under Identity: a fact without a slot or a telling type went there whatever it said.
"""

from __future__ import annotations

import pytest

from memlake.facts.profile import profile_lines
from tests.facts.said_offline import at

TRIAL = {
    "coffee": "The user has given up coffee completely now.",
    "home_days": "The user is working from home three days a week.",
    "sourdough": "The user's sourdough keeps coming out dense and gummy with a shiny crust.",
    "kitchen": "The user's kitchen is about 18 degrees.",
    "hydration": "The user uses 80% hydration with supermarket strong white flour.",
    "brother": "The user's brother got promoted in the week of 2026-09-28, Tomasz is now lead pharmacist at Morriston.",
}


def sections_of(contents: dict[str, str]) -> dict[str, str]:
    facts = [{"fact_id": fid, "type": "fact", "subject": "user", "slot": None, "content": content, "tags": ["said"],
              "importance": 0.5, "created_at": at("2026-07-20"), "override_ids": []}
             for fid, content in contents.items()]
    return {line["fact_ids"][0]: line["section"] for line in profile_lines(facts, set())}


def test_the_trials_statements_are_not_all_identity_and_read_where_a_reader_looks() -> None:
    sections = sections_of(TRIAL)
    assert sections["coffee"] == "preferences"
    assert sections["home_days"] == "work"
    assert sections["brother"] == "people"
    assert "identity" not in sections.values(), sections


@pytest.mark.parametrize(("content", "section"), [
    ("The user's commute takes an hour each way.", "work"),
    ("The user has a standing desk at the office.", "work"),
    ("The user hates loud restaurants.", "preferences"),
    ("The user always orders the spiciest dish.", "preferences"),
    ("The user's nephew is turning five.", "people"),
    ("The user's grandmother lives with them.", "people"),
    ("The user's laptop keeps overheating.", "current projects"),
    ("The user's boiler broke down again.", "current projects"),
    ("The user is left-handed.", "identity"),  # a trait, by its structure
    ("The user is an introvert.", "identity"),
    ("The user is from Manchester originally.", "identity"),
])
def test_a_plain_statement_goes_to_the_section_its_meaning_reads_as(content: str, section: str) -> None:
    assert sections_of({"f": content}) == {"f": section}
