"""Profile versions assembled from facts: what is current at each version's time and what is past."""

from __future__ import annotations

import polars as pl
import pytest

from memlake.facts.fold import fold
from memlake.facts.profile import CURRENT_DAYS, profile_versions
from memlake.facts.profile_model import facts_listing
from memlake.lake import conform
from memlake.schemas import FACT_EDGES, FACTS
from tests.facts.said_offline import at, said_offline


def fact(fact_id: str, content: str, said: str, kind: str = "fact", **extra: object) -> dict:
    return {
        "fact_id": fact_id, "version": 1, "agent_id": "ann", "type": kind, "subject": "user",
        "slot": extra.get("slot"), "value": "v", "content": content, "confidence": 0.9, "importance": 0.5,
        "tags": [], "valid_from": extra.get("valid_from", at(said)), "valid_until": extra.get("valid_until"),
        "created_at": at(said), "ingested_at": at(said), "source_conversation_ids": ["c"],
        "source_message_ids": ["m"], "source_count": 1, "confirmation_count": 0,
        "last_confirmed_at": extra.get("last_confirmed_at"), "status": "active", "superseded_by": None,
        "source_interface": "extraction", "override_ids": [],
    }


def versions(*facts: dict) -> list[dict]:
    """Every version (threshold 1: one per contribution), each as {section: [fact ids]}."""
    frame = pl.from_arrow(conform(FACTS, list(facts)))
    edges = pl.from_arrow(conform(FACT_EDGES, []))
    out = []
    for row in profile_versions(frame, edges, threshold=1).sort("version").iter_rows(named=True):
        sections: dict[str, list[str]] = {}
        for line in row["lines"]:
            sections.setdefault(line["section"], []).extend(line["fact_ids"])
        out.append(sections)
    return out


def test_an_event_is_a_current_project_for_a_month_then_a_past_event() -> None:
    launch = fact("launch", "Project Heron launched.", "2024-03-14", kind="event")
    soon = fact("name", "The user's name is Ann.", "2024-04-10")  # a version 27 days on
    later = fact("tea", "The user prefers tea.", "2024-05-20")  # ... and 67 days on
    first, second, third = versions(launch, soon, later)
    assert first["current projects"] == ["launch"] and second["current projects"] == ["launch"]
    assert "current projects" not in third and third["past events"] == ["launch"]
    assert "past events" not in first and "past events" not in second


def test_a_plan_stays_current_until_a_month_after_the_day_it_names() -> None:
    marathon = fact("run", "The user plans to run the Lisbon half marathon in October 2024.", "2024-07-22",
                    kind="commitment")
    autumn = fact("a", "The user's name is Ann.", "2024-11-25")  # 25 days after October ends
    winter = fact("b", "The user prefers tea.", "2024-12-05")  # 35 days after
    _, in_autumn, in_winter = versions(marathon, autumn, winter)
    assert in_autumn["current projects"] == ["run"]
    assert in_winter["past events"] == ["run"]


def test_a_confirmation_keeps_a_happening_current() -> None:
    interviewing = fact("job", "The user is interviewing at Northwind Labs.", "2024-06-01", kind="event",
                        last_confirmed_at=at("2024-08-26"))
    later = fact("b", "The user prefers tea.", "2024-09-10")
    _, version = versions(interviewing, later)
    assert version["current projects"] == ["job"]
    assert (at("2024-09-10") - at("2024-06-01")).days > CURRENT_DAYS  # it would be past without the confirmation


def test_a_lasting_fact_is_never_past_and_an_expired_one_leaves_the_profile() -> None:
    name = fact("name", "The user's name is Ann.", "2020-01-01", kind="identity")
    visa = fact("visa", "The user holds a work visa.", "2024-01-01", valid_until=at("2024-06-30"))
    before = fact("a", "The user prefers tea.", "2024-03-01")
    after = fact("b", "The user loves cycling.", "2024-07-01")
    *_, in_march, in_july = versions(name, visa, before, after)
    listed_in_march = {fid for ids in in_march.values() for fid in ids}  # (the visa reads as work, by its meaning)
    listed_in_july = {fid for ids in in_july.values() for fid in ids}
    assert "name" in in_march["identity"] and "visa" in listed_in_march
    assert "name" in in_july["identity"] and "visa" not in listed_in_july
    assert "past events" not in in_july


def test_past_events_read_newest_first_and_the_model_sees_them_marked() -> None:
    kickoff = fact("kickoff", "The team kicked off Project Heron on 2024-02-12.", "2024-02-12", kind="event")
    launch = fact("launch", "Project Heron launched on 2024-03-14.", "2024-03-18", kind="event")
    later = fact("tea", "The user prefers tea.", "2024-06-01")
    frame = pl.from_arrow(conform(FACTS, [kickoff, launch, later]))
    profile = profile_versions(frame, pl.from_arrow(conform(FACT_EDGES, [])), threshold=1).sort("version")
    lines = profile["lines"][-1]
    assert [line["fact_ids"][0] for line in lines if line["section"] == "past events"] == ["launch", "kickoff"]
    assert "## Past events" in profile["text"][-1]
    listing = facts_listing(frame.to_dicts(), lines).splitlines()
    marked = {line.split("|")[0].removeprefix("- id=").strip() for line in listing if "| PAST |" in line}
    assert marked == {"launch", "kickoff"}


def test_a_trip_told_with_its_days_moves_to_past_events_once_it_is_over() -> None:
    """A user trial: "I'm going to Lisbon from August 14 to 21" (said 2025-07-02) was a current plan a year later.
    A second trial: once its days were over the trip left the profile altogether. It is history: under past events,
    said as a plan (its days are over; whether it happened, only a later statement says)."""
    folded = fold([*said_offline("I'm going to Lisbon from August 14 to 21.", "2025-07-02"),
                   *said_offline("I prefer green tea.", "2025-08-15"),
                   *said_offline("I love cycling along the canal.", "2025-08-25"),
                   *said_offline("My favourite band is Wet Leg.", "2026-07-02")])
    profile = profile_versions(folded.facts, folded.edges, threshold=1).sort("version")
    during, just_after, a_year_on = profile["lines"][-3], profile["lines"][-2], profile["lines"][-1]

    def section_of_lisbon(lines: list[dict]) -> list[tuple[str, str]]:  # type: ignore[type-arg]
        return [(line["section"], line["text"]) for line in lines if "Lisbon" in line["text"]]

    assert section_of_lisbon(during) == [
        ("current projects", "The user is going to Lisbon from 2025-08-14 to 2025-08-21.")]
    for after in (just_after, a_year_on):
        assert section_of_lisbon(after) == [
            ("past events", "Planned on 2025-07-02: the user is going to Lisbon from 2025-08-14 to 2025-08-21.")]


def test_a_later_conversation_that_changes_the_profile_makes_a_new_version() -> None:
    """A stranger's trial: the profile's header kept its version number while a new conversation changed what it
    said. A version is what the profile said: new content, new number; a conversation that changes nothing makes no
    version."""
    first = [*said_offline("I live in Leeds and I work at Globex.", "2025-03-04"),
             *said_offline("I prefer green tea.", "2025-03-05")]
    second = [*said_offline("I love cycling along the canal.", "2025-04-10")]
    same_again = [*said_offline("I prefer green tea.", "2025-04-12")]  # a confirmation: no contribution

    def latest(statements: list) -> tuple[int, str]:  # type: ignore[type-arg]
        folded = fold(statements)
        row = profile_versions(folded.facts, folded.edges, threshold=10).sort("version").row(-1, named=True)
        return row["version"], row["text"]

    before, after, again = latest(first), latest(first + second), latest(first + second + same_again)
    assert after[1] != before[1] and after[0] > before[0]
    assert again == after


def test_a_pet_is_listed_with_the_people_not_as_identity() -> None:
    """The trial: "I have a dog named Biscuit, a beagle" was listed under Identity."""
    folded = fold([*said_offline("Yes. By the way, I have a dog named Biscuit, a beagle.", "2025-03-04"),
                   *said_offline("I have a cat called Miso.", "2025-03-05"),
                   # a second trial: "has got" listed the beagle under Identity again
                   *said_offline("I've got a beagle called Pepper, he's three.", "2025-03-06")])
    (latest,) = profile_versions(folded.facts, folded.edges, threshold=1).sort("version").tail(1).iter_rows(named=True)
    sections = {line["section"] for line in latest["lines"] for _ in line["fact_ids"]}
    texts = {line["section"]: line["text"] for line in latest["lines"]}
    assert sections == {"people"}, texts


def test_a_past_plan_of_a_named_person_keeps_the_capital_of_their_name() -> None:
    """A stranger's trial read "Planned on 2026-05-02: tomasz is moving to Swansea this summer."."""
    folded = fold([*said_offline("My brother Tomasz is moving to Swansea this summer.", "2026-05-02"),
                   *said_offline("I prefer green tea.", "2026-10-05")])
    profile = profile_versions(folded.facts, folded.edges, threshold=1).sort("version")
    lines = [line["text"] for line in profile["lines"][-1] if line["section"] == "past events"]
    assert lines == ["Planned on 2026-05-02: Tomasz is moving to Swansea in summer 2026."]


def test_a_pets_birthday_to_come_is_listed_with_the_people() -> None:
    """A stranger's trial: "Biscuit turns five on 2027-03-03" (an event about the user's corgi, said ahead) was
    listed under Current projects."""
    folded = fold([*said_offline("My corgi Biscuit has his birthday on 3 March, he'll be five.", "2026-11-09")])
    (latest,) = profile_versions(folded.facts, folded.edges, threshold=1).sort("version").tail(1).iter_rows(named=True)
    texts = {line["text"]: line["section"] for line in latest["lines"]}
    assert texts and set(texts.values()) == {"people"}, texts


@pytest.mark.parametrize("plan, during, after", [
    ("My brother Tomasz is moving to Swansea this summer.", "2026-08-20", "2026-09-02"),  # the trial's
    ("I'm planning to visit Japan next spring.", "2027-05-20", "2027-06-02"),
    ("We're going to repaint the hall by the end of summer.", "2026-08-25", "2026-09-02"),
])
def test_a_plan_for_a_season_is_past_only_once_the_season_is_over(plan: str, during: str, after: str) -> None:
    folded = fold([*said_offline(plan, "2026-05-02"), *said_offline("I prefer green tea.", during),
                   *said_offline("I like cycling to work.", after)])
    profile = profile_versions(folded.facts, folded.edges, threshold=1).sort("version")
    past = [[line["text"] for line in lines if line["section"] == "past events"] for lines in profile["lines"]]
    assert past[-2] == [] and len(past[-1]) == 1, past


def test_an_unnamed_relatives_news_is_listed_with_the_people() -> None:
    """Said of the user, these were placed by their meaning: the grandmother's birthday under identity, the boss's
    move under work."""
    folded = fold([*said_offline("My grandma turned 90 last week.", "2026-05-02"),
                   *said_offline("My boss is moving to Berlin in the autumn.", "2026-05-03"),
                   *said_offline("My dad plans to retire next year.", "2026-05-04")])
    (latest,) = profile_versions(folded.facts, folded.edges, threshold=1).sort("version").tail(1).iter_rows(named=True)
    assert {line["section"] for line in latest["lines"]} == {"people"}, latest["lines"]
