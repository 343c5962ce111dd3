"""What memory says is current leads a search and the context block for a question about now (issue 37): after a
move told indirectly, a diet change and a reversed taste, the turn that says what holds now ranks above the turns
that said what it replaced, and the block leads with the value in force. A question about the past is searched as
it was. Phrasings of the questions are our own; the home is `changes_home.CHATS`."""

from __future__ import annotations

import pytest

from tests.context import changes_home

# (questions about now, the turn that says what holds now, the turns that said what it replaced)
CHANGES = [
    (("where do I live now?", "where do I live", "Which city am I living in these days?"),
     "keys-m0", ("settling-m0", "commute-m0")),
    (("what do I eat?", "what's my diet like at the moment?", "what kind of food do I eat these days?"),
     "documentary-m0", ("steak-m0",)),
    (("do I like horror films?", "how do I feel about horror films?"), "marathon-m0", ("films-m0",)),
]


@pytest.fixture
def memory(settings, fast_resources, run_pipeline):  # type: ignore[no-untyped-def]
    return changes_home.build(settings, fast_resources, run_pipeline)


def ranks(hits) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """Each message's first rank in a search's hits."""
    found: dict[str, int] = {}
    for rank, ids in zip(hits["rank"].to_list(), hits["message_ids"].to_list(), strict=True):
        for message in ids:
            found.setdefault(message, rank)
    return found


def test_a_turn_that_says_what_holds_now_outranks_the_turns_it_replaced(memory) -> None:
    for questions, now, before in CHANGES:
        for question in questions:
            found = ranks(memory.search(question, changes_home.AGENT, k=10, as_of="2024-07-01"))
            assert now in found, (question, found)
            assert all(found[now] < found.get(old, 99) for old in before), (question, found)


def test_a_question_about_the_past_is_searched_as_it_was(memory) -> None:
    # the turns that said the old home and the old diet are what these ask about: nothing gives way
    for question, old in (("where did I live before I moved?", ("settling-m0", "commute-m0")),
                          ("what did I use to eat on Fridays?", ("steak-m0",))):
        hits = memory.search(question, changes_home.AGENT, k=10, as_of="2024-07-01")
        assert hits["standing"].to_list() == [1.0] * hits.height, question
        assert min(ranks(hits).get(turn, 99) for turn in old) == 1, (question, ranks(hits))


def test_before_the_change_the_old_value_is_current_and_nothing_gives_way(memory) -> None:
    hits = memory.search("where do I live now?", changes_home.AGENT, k=10, as_of="2024-04-01")
    assert "keys-m0" not in ranks(hits)  # said later
    assert hits["standing"].to_list() == [1.0] * hits.height
    assert min(ranks(hits).get(turn, 99) for turn in ("settling-m0", "commute-m0")) == 1


def memory_lines(block) -> list[dict]:  # type: ignore[no-untyped-def]
    return [row for row in block.provenance if row["section"] != "overrides"]


@pytest.mark.parametrize("question, current, replaced", [
    ("where do I live now?", "Bristol", "Leeds"),
    ("which city do I live in?", "Bristol", "Leeds"),
    ("what do I eat?", "vegetarian", "meat"),
    ("am I a vegetarian these days?", "vegetarian", "meat"),
])
def test_the_block_leads_with_the_value_in_force_and_no_replaced_one_above_it(memory, question: str, current: str,
                                                                            replaced: str) -> None:
    block = memory.context(question, changes_home.AGENT, as_of="2024-07-01")
    lines = memory_lines(block)
    assert lines and current.lower() in lines[0]["text"].lower(), (question, [x["text"] for x in lines])
    first_current = next(at for at, line in enumerate(lines) if current.lower() in line["text"].lower())
    first_replaced = next((at for at, line in enumerate(lines) if replaced.lower() in line["text"].lower()), 99)
    assert first_current < first_replaced, (question, [x["text"] for x in lines])
    assert all(line["until"] is not None for line in lines if line["kind"] == "fact"
               and replaced.lower() in line["text"].lower()), "a replaced value shown as current"
    # and among the excerpts of past turns, the one that told the change comes before those it replaced
    turns = [line["text"].lower() for line in lines if line["kind"] == "turn"]
    told = [at for at, text in enumerate(turns) if current.lower() in text or CHANGE_TOLD[current] in text]
    said_before = [at for at, text in enumerate(turns) if replaced.lower() in text]
    assert told and all(told[0] < at for at in said_before), (question, turns)


# what the turn telling each change says (the move is told without the word "live")
CHANGE_TOLD = {"Bristol": "keys to our flat", "vegetarian": "gone vegetarian"}
