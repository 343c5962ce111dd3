"""The table of dependency patterns (readers/table.py): what it reads in any clause, what it leaves to no one, and
that only a sentence some pattern could match is parsed. Phrasings written for these tests."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memlake.distill.models import Conversation, Message
from memlake.distill.offline import distill_offline
from memlake.distill.offline.readers.table import may_anchor
from memlake.nlp import language_model

SAID = datetime(2026, 6, 10, 12, 0, tzinfo=UTC)  # a Wednesday


def read(text: str):  # type: ignore[no-untyped-def]
    return distill_offline(Conversation("a", "c", None, (Message("m1", "user", text, SAID),))).fact_candidates


def slots(text: str) -> set[tuple[str | None, str]]:
    return {(c.slot, c.value) for c in read(text) if c.slot}


@pytest.mark.parametrize("text, expected", [
    ("The new job is great and we relocated back to Galway in the spring.", {("home_city", "Galway")}),
    ("Honestly since I moved over to Bristol the commute has been easier.", {("home_city", "Bristol")}),
    ("We've just moved into a tiny cottage in Whitby, still no internet.", {("home_city", "Whitby")}),
    ("Last month I joined Pied Piper as a backend engineer.",
     {("employer", "Pied Piper"), ("job_title", "backend engineer")}),
])
def test_a_slot_is_read_in_whichever_clause_the_sentence_puts_it(text: str, expected: set[tuple[str, str]]) -> None:
    assert expected <= slots(text)


@pytest.mark.parametrize("text", [
    "I never moved to Leeds in the end.",  # denied
    "I'll move to Leeds once the lease ends.",  # a plan, not a move made
    "My brother moved to Leeds and loves it.",  # someone else's move
    "If we moved to Leeds we'd be nearer my parents.",  # a wish
    "We moved to the Netherlands in May.",  # a country
    "I lived in Rome for two years after school.",  # a home that was
    "We relocated the whole office to Leeds.",  # moving something else
    "I joined the choir as a tenor.",  # no job
])
def test_what_is_not_the_users_current_home_or_job_gives_no_slot(text: str) -> None:
    assert not {slot for slot, _ in slots(text)} & {"home_city", "employer", "job_title"}


@pytest.mark.parametrize("text, liked, thing", [
    ("I've slowly come round to coriander.", True, "coriander"),
    ("I have grown to love opera.", True, "opera"),
    ("I really can't stand reality shows.", False, "reality shows"),
])
def test_a_taste_come_to_or_given_up_is_a_preference(text: str, liked: bool, thing: str) -> None:
    tastes = [c for c in read(text) if c.type == "preference" and thing in c.value]
    assert len(tastes) == 1, [c.content for c in read(text)]
    assert ("dislike" not in tastes[0].tags) is liked


def test_a_sentence_no_pattern_could_match_is_not_parsed() -> None:
    before = language_model.parses_cached()
    read("haha that sounds like so much fun, tell me more about the dogs at the shelter!")
    read("we should totally catch up soon, it has been ages")
    assert language_model.parses_cached() == before



@pytest.mark.parametrize("text", [
    "The choir has made me feel welcome and given me a reason to sing.",  # a start verb, "as" or "make", no role
    "Becoming a regular at the climbing wall took me a whole year.",
    "My cousins and my aunt came over for a long lunch on the terrace.",  # kin words, but no one named
    "I spent the weekend with my friends, which was lovely.",
])
def test_a_sentence_with_no_role_or_no_name_a_row_needs_is_not_parsed(text: str) -> None:
    """The table's word check refuses it, so the table does not parse it (a fact another reader finds in it is
    still parsed once for its confidence: memlake.distill.confidence.offline_prior)."""
    assert not may_anchor(text)


@pytest.mark.parametrize("text, slot, value", [
    ("Actually, I work for Initech, not Globex.", "employer", "Initech"),
    ("Actually, I work as a pharmacist, not a nurse.", "job_title", "pharmacist"),
])
def test_a_correction_of_where_or_as_what_the_user_works_is_read_by_the_table(text: str, slot: str,
                                                                                value: str) -> None:
    """(The regexes that read "I work at/as ..." went; the work rows read the corrected clause.)"""
    corrections = [c for c in read(text) if c.type == "correction"]
    assert [(c.slot, c.value) for c in corrections] == [(slot, value)]


@pytest.mark.parametrize("text, city", [
    ("Big news, we finally made the move to Prague!", "Prague"),
    ("We finally made the move to Melbourne over the long weekend.", "Melbourne"),
    ("I made the big move to Copenhagen in March.", "Copenhagen"),
    ("We finally made the move to Reykjavik.", "Reykjavik"),
    ("The move to Dublin is done, boxes everywhere.", "Dublin"),
    ("Our move to Madrid happened last week.", "Madrid"),
    ("After the big move to Oslo we slept for two days straight.", "Oslo"),
    ("The relocation to Ghent went better than expected.", "Ghent"),
])
def test_a_move_told_with_move_as_a_noun_gives_the_home_city(text: str, city: str) -> None:
    """"made the move to X", "the move to X is done": the noun says the move, whatever the verb, and wherever the
    parse hangs "to X" (on the noun, or on the verb the move is the object of)."""
    assert ("home_city", city) in slots(text), [c.content for c in read(text)]


@pytest.mark.parametrize("text", [
    "We're planning the move to Leeds for next spring.",  # a plan
    "The move to Leeds is next month.",  # ahead
    "My sister's move to Leeds went well.",  # someone else's
    "I'm dreading the move to Leeds.",  # not made
    "We made the move to Kubernetes last quarter.",  # no place
    "We never made the move to Leeds in the end.",  # denied
])
def test_a_move_noun_not_told_as_the_users_move_made_gives_no_home(text: str) -> None:
    assert "home_city" not in {slot for slot, _ in slots(text)}, [c.content for c in read(text)]


@pytest.mark.parametrize("text, wanted", [
    ("I live in Porto and work at Farfetch as a data analyst.",
     {("home_city", "Porto"), ("employer", "Farfetch"), ("job_title", "data analyst")}),
    ("We rent a flat in Ghent and work for Barco.", {("home_city", "Ghent")}),  # "we work": whose job?
    ("I live in Oslo and work for Equinor.", {("home_city", "Oslo"), ("employer", "Equinor")}),
])
def test_a_second_verb_the_small_model_tags_as_a_noun_is_still_read(text: str, wanted: set) -> None:
    """"... and work at X": after "and", the small pipeline often tags the second verb a noun; it is still the
    verb of a clause sharing the user as subject (a stranger's export: the old job was never read, so the new one
    ended nothing)."""
    assert slots(text) >= wanted, [c.content for c in read(text)]


@pytest.mark.parametrize("text, value", [
    ("I've left Globex after six years there.", "left Globex"),
    ("So I quit Initech in March and took some time off.", "left Initech"),
    ("I have a second-round interview with Hooli on Friday.", "interview at Hooli"),
    ("These days I'm interviewing with Pied Piper.", "interviewing at Pied Piper"),
])
def test_leaving_or_interviewing_with_an_employer_is_an_event_of_the_users(text: str, value: str) -> None:
    assert value in [c.value for c in read(text) if c.type == "event"]


@pytest.mark.parametrize("text", ["My sister left Globex last year.", "I'll leave Initech once the project ships.",
                                  "I left Paris Hilton a voicemail."])
def test_someone_elses_leaving_or_a_plan_to_leave_is_no_event_of_the_users(text: str) -> None:
    assert not [c for c in read(text) if c.type == "event" and "work" in c.tags]
