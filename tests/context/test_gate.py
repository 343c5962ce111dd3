"""The relevance gate picks one section for a question and says what fired."""

import pytest

from memlake.context.gate import decide


@pytest.mark.parametrize(("question", "section", "fired"), [
    ("What were my exact words about the move?", "transcript", "exact words"),
    ("Quote it verbatim please", "transcript", "verbatim"),
    ("What did we discussed about bikes?", "episodes", "we discussed"),
    ("Remember when we planned the Porto trip?", "episodes", "remember when"),
    ("What did we discuss about the marathon?", "episodes", "we discuss"),
    ("Have we talked about my bike before?", "episodes", "we talked"),
    ("That one, was it cheaper?", "episodes", "that"),
    ("What's my name?", "identity", "what's my name"),
    ("Who am I?", "identity", "who am i"),
    ("What does Leela like?", "facts", "Leela"),
    ("Do you remember the database choice", "facts", "remember"),
    ("Where do I live now?", "facts", "i"),
    ("Hello there, nice weather", "none", None),
    ("When did Caroline go to the support group?", "excerpts", "Caroline"),
    ("What is Caroline's identity?", "excerpts", "Caroline"),
    ("Where does Leela’s brother live?", "facts", "Leela"),
    ("What did we decide about Project Heron", "excerpts", "Project Heron"),
    ("Do I still live in Berlin?", "facts", "i"),
    ("Is Leela still in Berlin?", "facts", "Leela"),
])
def test_the_heuristic_gate_picks_the_section_and_says_why(question, section, fired):
    decision = decide(question, known_subjects=["user", "Leela"], known_names=["Project Heron", "Caroline", "Berlin"])
    assert (decision.section, decision.fired) == (section, fired)
    assert decision.reason


@pytest.mark.parametrize(("question", "wants_history"), [
    ("Where did I live before?", True), ("Has my employer changed?", True), ("Where do I live now?", False)])
def test_the_gate_says_when_a_question_asks_about_the_past(question, wants_history):
    assert decide(question).wants_history is wants_history


def test_the_gate_off_always_gives_facts_and_an_unknown_mode_is_an_error():
    assert decide("Hello there", mode="off").section == "facts"
    with pytest.raises(ValueError, match="unknown gate mode 'llm'"):
        decide("Hello there", mode="llm")


def test_a_remembered_value_is_a_fact_the_question_names():
    """After `remember "I moved to Bristol"` the home city is an override: the question still names a fact, so
    the block keeps its facts section instead of giving way to old excerpts."""
    import polars as pl

    from memlake.context.lines import named_fact_ids

    current = pl.DataFrame({"fact_id": ["f_home", "f_pet"], "subject": ["user", "user"],
                            "slot": ["home_city", None], "source_interface": ["override", "extraction"]})
    assert named_fact_ids(current, decide("Which city is home for me these days?")) == ["f_home"]


@pytest.mark.parametrize(("question", "slots"), [
    ("What's my dog called?", ()),  # a user trial: the gate said "asks about the user's name"
    ("What is my dog's name?", ()),
    ("Where does my sister live?", ("sibling",)),  # her home, not the user's
    ("What's my brother's job?", ()),  # his, not the user's
    ("What am I called?", ("name",)),
    ("Where do my partner and I live?", ("home_city", "partner")),
    ("What's my current job?", ("employer", "job_title")),
])
def test_a_slot_cue_is_the_users_only_when_no_one_else_is_named_before_it(question, slots):
    assert decide(question).slots == slots
