"""Other people and pets in what the user says: each is the subject of what is said of them, with their changes.

From a stranger's trial export (agent `rowan`): a brother's promotion became a fact about the user, his move was
no plan of his, a partner's job lost the month she starts, and the tortoise was a person with no facts of its own.
Each test carries the trial's sentence and phrasings of other shapes.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memlake.distill.models import KIN_OR_PET, Conversation, DistilledSession, Message


def said(*texts: str, day: str = "2026-05-02") -> DistilledSession:
    """The offline distiller's session of one conversation in which the user said `texts`, one message each."""
    from memlake.distill.offline import distill_offline

    at = datetime.fromisoformat(day).replace(tzinfo=UTC)
    messages = tuple(Message(f"m{i}", "user", text, at) for i, text in enumerate(texts))
    return distill_offline(Conversation("rowan", "c1", None, messages))


@pytest.mark.parametrize("text, day, person, title, since", [
    # the trial: the brother is named only after the comma, the title said without "a"
    ("My brother got promoted last week, Tomasz is now lead pharmacist at Morriston. He's been there since June.",
     "2026-10-05", "Tomasz", "lead pharmacist", "2026-09-28"),
    ("Big week for my sister, Ana is now head of marketing at Initech.", "2026-03-04", "Ana", "head of marketing",
     "2026-03-04"),
    ("My cousin had a promotion in January, Leo is now a senior nurse at St Mary's.", "2026-03-04", "Leo",
     "senior nurse", "2026-01-01"),
])
def test_a_new_title_said_of_a_named_person_is_theirs_from_when_it_began(
        text: str, day: str, person: str, title: str, since: str) -> None:
    candidates = said(text, day=day).fact_candidates
    titles = [(c.subject, c.value, c.valid_from) for c in candidates if c.slot == "job_title"]
    assert titles == [(person, title, since)]
    assert not [c.content for c in candidates if c.subject == "user"]  # nothing about the user


@pytest.mark.parametrize("text, person, plan", [
    ("Oh and news from the family, Tomasz is moving to Swansea this summer. He's taken a job at Morriston Hospital.",
     "Tomasz", "Tomasz is moving to Swansea in summer 2026."),
    ("My sister Ana plans to study law in Leeds.", "Ana", "Ana plans to study law in Leeds."),
    ("Ana's going to move to York in June.", "Ana", "Ana's going to move to York in June 2026."),
    ("Tom's moving to Berlin next month, he's so excited.", "Tom", "Tom's moving to Berlin in June 2026."),
    ("Ana is going to start at Initech in May.", "Ana", "Ana is going to start at Initech in May 2026."),
])
def test_a_plan_told_of_a_named_person_is_their_commitment(text: str, person: str, plan: str) -> None:
    plans = [(c.subject, c.content) for c in said(text).fact_candidates if c.type == "commitment"]
    assert plans == [(person, plan)]


@pytest.mark.parametrize("text", ["My sister Ana is going to hate this.", "My brother Tom is going to be late.",
                                  "Acme is moving to a new office.", "Acme is going to start a new product line."])
def test_a_reaction_to_come_is_no_plan(text: str) -> None:
    assert not [c for c in said(text).fact_candidates if c.type == "commitment"]


@pytest.mark.parametrize("text, day, person, start, month", [
    ("Also Imogen has just landed a new job as head of geography at Kingswood School, she starts in September.",
     "2026-07-20", "Imogen", "2026-09-01", "September 2026"),
    ("My partner Sam got a job at Globex, he starts on 3 March.", "2026-02-10", "Sam", "2026-03-03", "2026-03-03"),
])
def test_a_job_a_person_starts_later_holds_from_the_start_said(
        text: str, day: str, person: str, start: str, month: str) -> None:
    session = said(text, day=day)
    jobs = [c for c in session.fact_candidates if c.slot in ("employer", "job_title")]
    assert jobs and {(c.subject, c.valid_from) for c in jobs} == {(person, start)}
    assert all(month in c.content for c in jobs)
    assert [r.valid_from for r in session.relations if r.source == person and r.relation == "works_at"] == [start]


@pytest.mark.parametrize("text, day, pet, kind, dated", [
    ("Also my tortoise Biscuit has his birthday on 4 June, he'll be twelve. And my brother Tomasz lives in Cardiff.",
     "2026-03-10", "Biscuit", "tortoise", "Biscuit turns twelve on 2026-06-04."),
    ("Our dog Pepper's birthday is 3 August, she'll be 5.", "2026-05-02", "Pepper", "dog",
     "Pepper turns 5 on 2026-08-03."),
])
def test_a_pet_with_a_birthday_and_an_age_to_come_has_facts_of_its_own(
        text: str, day: str, pet: str, kind: str, dated: str) -> None:
    session = said(text, day=day)
    about = {c.content: c for c in session.fact_candidates if c.subject == pet}
    assert f"{pet} is the user's {kind}." in about and KIN_OR_PET in about[f"{pet} is the user's {kind}."].tags
    assert any("birthday is on" in content for content in about)
    assert dated in about  # an age goes stale: said with the day it is reached
    assert not [c for c in session.fact_candidates if c.subject == "user" and pet in c.content]
    # the relation that names the pet, which the graph types it by; the episode does not call it a person
    assert [(r.source, r.relation, r.target) for r in session.relations if r.target == pet] == [
        ("user", "has_pet", pet)]
    assert {e.type for e in session.entities if e.name == pet} == {"other"}


@pytest.mark.parametrize("text, pet, kind, age", [
    # a third trial's: the ownership was kept as said, and lost once "he's three" was read
    ("I've got a beagle called Biscuit, he's three.", "Biscuit", "beagle", "Biscuit is three as of 2026-05-02."),
    ("We adopted a cockatiel named Kiwi, she's two.", "Kiwi", "cockatiel", "Kiwi is two as of 2026-05-02."),
    ("My axolotl Pip is 3 now.", "Pip", "axolotl", "Pip is 3 as of 2026-05-02."),
])
def test_a_pet_of_any_kind_is_known_by_its_word_and_keeps_its_kind(text: str, pet: str, kind: str, age: str) -> None:
    """Any animal's word, not a list of pets: the packaged model's nearest prototypes say a beagle is an animal."""
    session = said(text)
    assert {c.content for c in session.fact_candidates if c.subject == pet} == {f"{pet} is the user's {kind}.", age}
    assert ("user", "has_pet", pet) in [(r.source, r.relation, r.target) for r in session.relations]


@pytest.mark.parametrize("text", ["My car Betsy is 12 now.", "My brother Tomasz is 34 now.", "My band Echo is 3 now."])
def test_a_thing_or_a_person_named_after_my_is_no_pet(text: str) -> None:
    assert not [r for r in said(text).relations if r.relation == "has_pet"]


@pytest.mark.parametrize("texts, pet, age", [
    (("We celebrated Biscuit's birthday last month with a plate of strawberries, he's twelve now.",), "Biscuit",
     "Biscuit is twelve as of 2026-07-20."),
    (("My niece Lily came over.", "Lily is 7 now and reads everything."), "Lily", "Lily is 7 as of 2026-07-20."),
])
def test_an_age_said_now_is_a_fact_with_the_day_said(texts: tuple[str, ...], pet: str, age: str) -> None:
    contents = [c.content for c in said(*texts, day="2026-07-20").fact_candidates if c.subject == pet]
    assert age in contents
