"""Slot readers of the offline distiller on changes told in everyday shapes (issue 23): lowercase chat, the
passive, the organisation as subject, "we", a filler before the verb. Phrasings written for these tests."""

from datetime import UTC, datetime

import pytest

from memlake.distill.models import Conversation, Message
from memlake.distill.offline import distill_offline

SAID = datetime(2023, 5, 8, 10, 0, tzinfo=UTC)  # a Monday


def slots(text: str) -> list[tuple[str | None, str]]:
    session = distill_offline(Conversation("a", "c", None, (Message("m1", "user", text, SAID),)))
    return [(c.slot, c.value) for c in session.fact_candidates if c.slot]


@pytest.mark.parametrize(
    ("text", "slot", "value"),
    [
        ("just moved to porto, still unpacking", "home_city", "Porto"),
        ("i live in san sebastian now", "home_city", "San Sebastian"),
        ("i work for hooli now", "employer", "Hooli"),
        ("i'm a product manager now", "job_title", "product manager"),
        ("i go by sasha these days", "name", "Sasha"),
        ("ugh long day. i started at northwind labs on monday", "employer", "Northwind Labs"),
    ],
)
def test_a_message_typed_all_in_lowercase_is_read_as_if_typed_with_capitals(text, slot, value):
    assert (slot, value) in slots(text)


@pytest.mark.parametrize("text", ["i work from home now", "i live in hope lol", "i moved to a new flat",
                                  "i'm in love with this song"])
def test_lowercase_words_after_a_preposition_are_not_names(text):
    assert slots(text) == []


@pytest.mark.parametrize(
    ("text", "slot", "value"),
    [
        # the organisation or the company as the subject, the user as object: the user is the one who changed
        ("Northwind Labs hired me in March.", "employer", "Northwind Labs"),
        ("Pied Piper has taken me on as a contractor.", "employer", "Pied Piper"),
        ("I got transferred to Copenhagen over the winter.", "home_city", "Copenhagen"),
        ("My husband and I were relocated to Athens by his firm.", "home_city", "Athens"),
    ],
)
def test_a_change_told_with_the_user_as_object_is_the_users_change(text, slot, value):
    assert (slot, value) in slots(text)


@pytest.mark.parametrize("text", ["I got transferred to Copenhagen for a week of training.",
                                  "Northwind Labs hired me a new assistant."])
def test_an_errand_or_a_favour_done_to_the_user_changes_no_slot(text):
    assert [s for s, _ in slots(text) if s in ("home_city", "employer")] == []


def test_a_start_told_with_today_starts_that_day():
    assert ("employer", "Northwind Labs") in slots("I started at Northwind Labs today.")


def test_a_stand_staffed_today_is_still_no_employer():
    assert slots("I'm working at the Hooli stand today.") == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("We went pescatarian in March.", "pescatarian"),
        ("We eat vegan these days.", "vegan"),
        ("I'm doing keto these days.", "keto"),
        ("I'm on paleo now.", "paleo"),
        ("I've switched to eating vegetarian.", "vegetarian"),
        ("I've been eating a vegan diet for three months.", "vegan"),
    ],
)
def test_a_diet_told_by_the_household_or_as_a_plan_followed_is_the_users(text, value):
    assert ("diet", value) in slots(text)


@pytest.mark.parametrize("text", ["I went vegan for a month.", "I'm doing keto for the week.",
                                  "We ate vegan at the wedding."])
def test_a_diet_for_a_stretch_or_a_meal_is_no_diet(text):
    assert [s for s, _ in slots(text) if s == "diet"] == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Me and Ines are dating now.", "Ines"),
        ("I'm going out with Chen.", "Chen"),
        ("Alex and I have been seeing each other since May.", "Alex"),
        ("I got together with Tomasz last spring.", "Tomasz"),
    ],
)
def test_a_partner_told_as_going_out_together_is_the_partner(text, value):
    assert ("partner", value) in slots(text)


@pytest.mark.parametrize("text", ["I got together with Tomasz for coffee.", "I'm going out with Chen tonight.",
                                  "Me and Ines are going to the market."])
def test_company_for_an_outing_is_no_partner(text):
    assert [s for s, _ in slots(text) if s == "partner"] == []


@pytest.mark.parametrize(
    ("text", "slot", "value"),
    [
        ("I have a new job as a security analyst.", "job_title", "security analyst"),
        ("Happily living in Porto these days.", "home_city", "Porto"),
        ("I've been in Dublin since January.", "home_city", "Dublin"),
        ("We bought a house in Warsaw.", "home_city", "Warsaw"),
    ],
)
def test_other_everyday_shapes_of_a_slot(text, slot, value):
    assert (slot, value) in slots(text)


def test_a_stay_since_a_weekday_is_no_home():
    assert [s for s, _ in slots("I've been in Dublin since Monday.") if s == "home_city"] == []


@pytest.mark.parametrize(
    ("text", "slot", "value"),
    [
        ("hey! moved to lisbon last week", "home_city", "Lisbon"),
        ("Relocated to Porto in March, loving it.", "home_city", "Porto"),
        ("Switched to pescatarian after the holidays.", "diet", "pescatarian"),
    ],
)
def test_a_past_with_its_i_left_out_before_to_is_read_as_said(text, slot, value):
    assert (slot, value) in slots(text)


@pytest.mark.parametrize("text", ["Excited to see Lisbon again!", "Supposed to fly to Lisbon on Friday.",
                                  "Used to live in Porto."])
def test_an_adjective_or_a_habit_before_to_is_no_move(text):
    assert [s for s, _ in slots(text) if s == "home_city"] == []


@pytest.mark.parametrize(
    ("text", "slot", "value"),
    [
        ("We're officially Warsaw residents now.", "home_city", "Warsaw"),
        ("We've been living in Oslo since the start of the year.", "home_city", "Oslo"),
        ("We relocated the whole family to Porto.", "home_city", "Porto"),
        ("I got an apartment in Porto last month.", "home_city", "Porto"),
        ("Yeah, Porto is where I live now.", "home_city", "Porto"),
        ("I was recruited by Hooli in March.", "employer", "Hooli"),
        ("I'm an employee of Hooli now.", "employer", "Hooli"),
        ("I got bumped up to tech lead.", "job_title", "tech lead"),
        ("I switched over to vegan.", "diet", "vegan"),
        ("I've started keto.", "diet", "keto"),
        ("I've been on keto for a month.", "diet", "keto"),
        ("My new boyfriend Sam is great.", "partner", "Sam"),
        ("I'm marrying Sam next month.", "partner", "Sam"),
        ("My partner now is Sam.", "partner", "Sam"),
        ("I'm seeing Sam these days.", "partner", "Sam"),
    ],
)
def test_more_everyday_shapes_of_a_slot(text, slot, value):
    assert (slot, value) in slots(text)


@pytest.mark.parametrize("text", ["I'm going out with Sam for drinks.", "I'm seeing Sam tomorrow.",
                                  "I started keto recipes for my brother.", "I got an apartment in Porto for the week.",
                                  "We relocated the meeting to Porto."])
def test_an_outing_a_recipe_a_rental_or_a_meeting_is_no_slot(text):
    assert slots(text) == []


@pytest.mark.parametrize(
    "text",
    ["Heads up: Project Falcon moves to June 3, 2023.", "Project Falcon has a new date: June 3, 2023.",
     "Project Falcon is now targeting June 3, 2023."],
)
def test_a_deadline_moved_in_the_present_or_after_a_colon(text):
    assert ("project_deadline", "2023-06-03") in slots(text)


def facts_of(text: str) -> list[tuple[str, str | None, str]]:
    session = distill_offline(Conversation("a", "c", None, (Message("m1", "user", text, SAID),)))
    return [(c.subject, c.slot, c.value) for c in session.fact_candidates]


def test_a_named_relatives_move_is_their_home_not_the_users():
    got = facts_of("My cousin Priya recently moved to Lyon.")
    assert [f for f in got if f[1] == "home_city"] == [("Priya", "home_city", "Lyon")]


def test_a_relatives_stay_is_no_home():
    assert [f for f in facts_of("My cousin Priya moved to Lyon for a few weeks.") if f[1] == "home_city"] == []


def test_a_relocation_planned_is_a_plan_to_move():
    assert ("user", None, "move to Lyon") in facts_of("We're relocating to Lyon in the autumn.")


@pytest.mark.parametrize("text", ["I've got an older brother called Tariq.", "I have a twin sister, Mina."])
def test_a_sibling_the_user_says_they_have_is_their_sibling(text):
    assert [f for f in facts_of(text) if f[1] == "sibling"] == [("user", "sibling", text.split()[-1].strip("."))]


@pytest.mark.parametrize(
    ("text", "slot", "value"),
    [
        ("I've been a Prague resident for ages.", "home_city", "Prague"),
        ("The move to Prague went smoothly.", "home_city", "Prague"),
        ("I'm based out of Prague now.", "home_city", "Prague"),
        ("Globex is my new employer.", "employer", "Globex"),
        ("I officially started at Globex this week.", "employer", "Globex"),
        ("After the layoffs I found a job at Globex.", "employer", "Globex"),
        ("I work in marketing at Globex now.", "employer", "Globex"),
        ("I left my old job for Globex.", "employer", "Globex"),
        ("I was appointed engineering manager in April.", "job_title", "engineering manager"),
        ("Vegan since last year.", "diet", "vegan"),
        ("I went from vegetarian to vegan.", "diet", "vegan"),
        ("We're a vegan household now.", "diet", "vegan"),
        ("I have a boyfriend now, his name is Tomasz.", "partner", "Tomasz"),
        ("I'm dating someone named Tomasz.", "partner", "Tomasz"),
        ("Project Falcon slides to June 3, 2023.", "project_deadline", "2023-06-03"),
    ],
)
def test_still_more_everyday_shapes_of_a_slot(text, slot, value):
    assert (slot, value) in slots(text)


@pytest.mark.parametrize("text", ["The move to Prague is next month.", "I'm working at the Globex booth this week.",
                                  "I started at Globex for a two-week trial.", "I left my old job for a break.",
                                  "Vegan pizza is the best."])
def test_a_move_to_come_a_booth_a_trial_a_break_or_a_dish_is_no_change(text):
    assert [s for s, _ in slots(text) if s in ("home_city", "employer", "diet")] == []


@pytest.mark.parametrize("text", ["We've been in Oslo for years.", "I've been in Oslo for ages now."])
def test_a_city_lived_in_for_years_uncounted_is_home(text):
    assert ("home_city", "Oslo") in slots(text)


@pytest.mark.parametrize(
    ("text", "slot", "value"),
    [
        ("I moved from Oslo to Porto in June.", "home_city", "Porto"),
        ("I switched from vegetarian to vegan last year.", "diet", "vegan"),
        ("I moved from backend engineer into engineering manager.", "job_title", "engineering manager"),
        ("We pushed Project Falcon from June 3, 2023 to June 17, 2023.", "project_deadline", "2023-06-17"),
        ("Project Falcon slipped from June 3, 2023 to June 17, 2023.", "project_deadline", "2023-06-17"),
        ("Hooli poached me from Initech.", "employer", "Hooli"),
    ],
)
def test_a_change_from_the_old_value_to_the_new_gives_the_new(text, slot, value):
    assert [v for s, v in slots(text) if s == slot] == [value]


@pytest.mark.parametrize(
    ("text", "slot", "value"),
    [
        ("I went from backend engineer to engineering manager.", "job_title", "engineering manager"),
        ("My role went from designer to tech lead.", "job_title", "tech lead"),
        ("I went from vegan to keto.", "diet", "keto"),
    ],
)
def test_went_from_the_old_to_the_new_is_a_change(text, slot, value):
    assert [v for s, v in slots(text) if s == slot] == [value]


def test_going_from_one_city_to_another_is_a_journey_not_a_move():
    assert slots("I went from Oslo to Porto by train.") == []


@pytest.mark.parametrize("text", ["Project Falcon is no longer June 3, 2023; it's June 17, 2023.",
                                  "Project Falcon was June 3, 2023 but now it's June 17, 2023."])
def test_it_names_the_project_the_sentence_named(text):
    assert [v for s, v in slots(text) if s == "project_deadline"][-1:] == ["2023-06-17"]


def test_it_with_no_project_in_the_sentence_is_no_deadline():
    assert slots("It's June 17, 2023 now.") == []


def test_a_break_up_with_the_old_partner_does_not_end_the_new_one():
    got = [v for s, v in slots("Alex and I broke up. I'm with Noor now, Alex and I divorced.") if s == "partner"]
    assert got == ["Noor"]


def test_a_break_up_told_after_the_new_partner_with_a_two_word_verb():
    got = [v for s, v in slots("Alex and I broke up. I'm with Noor now, Alex and I just broke up.") if s == "partner"]
    assert got == ["Noor"]


def test_a_break_up_with_the_partner_named_ends_them():
    assert [s for s, _ in slots("Alex and I broke up. I'm with Noor now, but Noor and I split up.") if s] == []


@pytest.mark.parametrize("text", ["call me maybe lol", "ok call me later", "text me asap pls"])
def test_a_lowercase_word_that_is_no_name_after_call_me_is_no_name(text):
    assert slots(text) == []


def test_it_being_a_day_today_is_no_deadline():
    assert slots("Project Falcon is great and it is June 17, 2023 today.") == []


@pytest.mark.parametrize(
    ("text", "slot", "value"),
    [
        ("We now reside in Bergen.", "home_city", "Bergen"),
        ("I've been residing in Bergen since 2021.", "home_city", "Bergen"),
        ("I now hold the title of tech lead.", "job_title", "tech lead"),
        ("Noor proposed and I said yes!", "partner", "Noor"),
        ("I tied the knot with Noor in June.", "partner", "Noor"),
        ("My name changed to Kate.", "name", "Kate"),
        ("Project Falcon's deadline got extended to June 17, 2023.", "project_deadline", "2023-06-17"),
    ],
)
def test_a_slot_said_with_a_synonym_of_its_verb(text, slot, value):
    assert (slot, value) in slots(text)


@pytest.mark.parametrize("text", ["Noor proposed a toast.", "Noor proposed we meet at noon."])
def test_a_proposal_of_something_else_is_no_engagement(text):
    assert slots(text) == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # the user and one person as a couple, said of the two together
        ("We've been a couple since Easter, Maria and I.", "Maria"),
        ("Chen asked me out last month and now we're together.", "Chen"),
        ("Say hello to my new girlfriend: Noor.", "Noor"),
        ("I'm seeing Jonas.", "Jonas"),
    ],
)
def test_a_couple_said_of_the_two_together_is_the_partner(text, value):
    assert ("partner", value) in slots(text)


@pytest.mark.parametrize("text", ["Sam asked me out for coffee.", "I'm seeing Jonas on Friday.",
                                  "We're together at the cafe, Sam and I, if you need us?",
                                  "We've been friends since school, Maria and I.",
                                  "My sister and Tom have been together since June."])
def test_company_a_meeting_or_someone_elses_couple_is_no_partner(text):
    assert [v for s, v in slots(text) if s == "partner"] == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # an organisation the user is at or with, in a sentence that says it is about work
        ("I'm at Hooli now, in the platform team.", "Hooli"),
        ("I'm with Initech these days, my commute is awful.", "Initech"),
        ("Yesterday was day one at Northwind Labs.", "Northwind Labs"),
        ("New employer: Vandelay Imports.", "Vandelay Imports"),
        ("I switched to Hooli after three years at Initech.", "Hooli"),
        ("I moved over to Acme Robotics.", "Acme Robotics"),
        ("I just signed with Globex, starting in June.", "Globex"),
    ],
)
def test_an_organisation_in_a_sentence_about_work_is_the_employer(text, value):
    got = slots(text)
    assert ("employer", value) in got and "home_city" not in [s for s, _ in got]


@pytest.mark.parametrize("text", ["I'm with Sam now, it's lovely.", "I'm at Heathrow now, my flight is late.",
                                  "I'm with Jonas now, he's on the data team.",
                                  "I switched to Python after years of Java.", "Yesterday was day one at Yosemite."])
def test_a_person_a_place_or_a_tool_is_no_employer(text):
    assert [v for s, v in slots(text) if s == "employer"] == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # a diet said as what the user now goes, eats, does, tries or is put on, in other words than the patterns'
        ("Trying pescatarian these days and it suits me.", "pescatarian"),
        ("The nutritionist put me on a paleo diet.", "paleo"),
        ("Since the new year I've been eating plant-based.", "plant-based"),
        ("i do keto these days", "keto"),
        ("I quit vegetarian and went vegan.", "vegan"),
    ],
)
def test_a_diet_taken_up_in_other_words_is_the_users(text, value):
    assert [v for s, v in slots(text) if s == "diet"] == [value]


@pytest.mark.parametrize("text", ["My sister went vegan last year.", "I might go keto.", "I stopped eating vegan.",
                                  "I cook vegan for my sister.", "Would you ever try paleo?",
                                  "I helped Sam go vegan."])
def test_someone_elses_diet_a_wish_or_a_diet_left_is_no_diet(text):
    assert [v for s, v in slots(text) if s == "diet"] == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # the "I" left out, or the user as the one given the job
        ("Working as a data engineer these days.", "data engineer"),
        ("Officially a staff engineer as of Monday!", "staff engineer"),
        # (not "the team lead role": the small parser reads that "lead" as a verb)
        ("My boss has given me the engineering manager role.", "engineering manager"),
        ("They gave me the tech lead job last week.", "tech lead"),
    ],
)
def test_a_title_told_with_the_i_left_out_or_given_to_the_user(text, value):
    assert ("job_title", value) in slots(text)


@pytest.mark.parametrize("text", ["They offered me the designer role but I said no.",
                                  "Working as a waiter for the summer.", "My sister is working as a nurse.",
                                  "Officially a grandmother!"])
def test_an_offer_a_summer_job_or_someone_elses_title_is_no_title(text):
    assert [v for s, v in slots(text) if s == "job_title"] == []
