"""The context block shows what the question needs: facts it names or shares a word with, current values first,
a replaced value never as current, and less than the budget when less is relevant."""

from __future__ import annotations

import polars as pl
import pytest

from memlake.context.gate import decide
from memlake.context.plans import Ask, matched_facts
from tests.facts.helpers import GARDEN, plain, slotted

CELLO = "The user plays the cello in a string quartet."
MARATHON = "The user is training for the Edinburgh marathon."
FRIEND_CHAT = ("p1", "2024-03-01", "I live in Leeds, I grow tomatoes, I play the cello, I'm training for a marathon.",
               "Melanie", [slotted("The user lives in Leeds.", "home_city", "Leeds", "p1-m1"),
                           plain(GARDEN, "p1-m1"), plain(CELLO, "p1-m1"), plain(MARATHON, "p1-m1")])
MOVE_CHAT = ("p2", "2024-06-10", "We moved to York last week!", "Melanie",
             [slotted("The user moved to York.", "home_city", "York", "p2-m1")])


def fact_lines(block) -> list[dict]:  # type: ignore[no-untyped-def]
    return [row for row in block.provenance if row["kind"] == "fact"]


def test_a_question_about_one_thing_gets_that_fact_and_no_unrelated_one(home_with) -> None:
    memory = home_with(FRIEND_CHAT, MOVE_CHAT)
    for question in ("where do I live now?", "which city am I living in these days?"):
        block = memory.context(question, "ann")
        texts = [row["text"] for row in fact_lines(block)]
        assert texts and "York" in texts[0], (question, texts)
        assert not any(word in text for text in texts for word in ("tomatoes", "cello", "marathon")), texts
        assert block.token_count < block.budget / 2


class NearestVectorsToo:
    """A `Memory` whose fact search also returns every current fact as a hit found by its vector alone (no word
    shared with the question): what a real embedding does, as there always are nearest vectors."""

    def __init__(self, memory) -> None:  # type: ignore[no-untyped-def]
        self.memory, self.settings = memory, memory.settings

    def search(self, query: str, agent_id: str, **params):  # type: ignore[no-untyped-def]
        hits = self.memory.search(query, agent_id, **params)
        if params.get("scope") != "facts":
            return hits
        nearest = self.memory.facts(agent_id).select("fact_id", pl.lit(None, pl.String).alias("text_match"),
                                                     pl.lit(0.01).alias("score"))
        return pl.concat([hits.select("fact_id", "text_match", "score"), nearest])


def test_facts_found_by_their_vector_alone_are_below_the_floor(home_with) -> None:
    memory = home_with(FRIEND_CHAT, MOVE_CHAT)
    current = memory.facts("ann")
    for question in ("where do I live now?", "how is my cello practice going?"):
        gate = decide(question, "heuristic", current["subject"].unique().to_list(), [])
        lines = matched_facts(Ask(NearestVectorsToo(memory), question, "ann", gate, current, None))
        texts = [line.text for line in lines]
        assert len(texts) == 1, (question, texts)  # the fact it names or shares a word with, no other
        assert ("York" if "live" in question else "cello") in texts[0]


def test_a_question_sharing_a_word_with_a_fact_gets_it_and_not_the_others(home_with) -> None:
    memory = home_with(FRIEND_CHAT, MOVE_CHAT)
    block = memory.context("remind me, how is my cello practice going?", "ann", gate="off")
    texts = [row["text"] for row in fact_lines(block)]
    assert CELLO in texts
    assert not any(word in text for text in texts for word in ("tomatoes", "marathon", "York", "Leeds")), texts


def test_a_replaced_value_is_never_in_the_block_as_current(home_with) -> None:
    memory = home_with(FRIEND_CHAT, MOVE_CHAT)
    for question in ("where do I live now?", "where did I live before?", "tell me about Leeds and York"):
        block = memory.context(question, "ann", gate="off")
        for row in fact_lines(block):
            if "Leeds" in row["text"]:
                assert row["until"] is not None and row["until"].startswith("2024-06"), (question, row)


def test_a_relevance_floor_leaves_out_hits_scoring_far_under_the_best(home_with) -> None:
    from memlake.api import Memory

    memory = home_with(FRIEND_CHAT, MOVE_CHAT)
    current = memory.facts("ann")
    gate = decide("cello tomatoes marathon York", "off", current["subject"].unique().to_list(), [])
    unfloored = Memory(settings=memory.settings.model_copy(update={"context_relevance_floor": 0.0}))
    every = Ask(unfloored, "cello tomatoes marathon York", "ann", gate, current, None).search("facts")
    floored = Memory(settings=memory.settings.model_copy(update={"context_relevance_floor": 1.0}))
    best = Ask(floored, "cello tomatoes marathon York", "ann", gate, current, None).search("facts")
    assert every.height > best.height >= 1
    assert best["score"].min() == pytest.approx(every["score"].max(), rel=1e-6)  # recency moves with the clock


# One user's past chats: one says what the questions below ask about, the others share no word with them.
GARDEN_CHATS = [
    ("boat", "We finally repainted the sailing dinghy, bright yellow this time."),
    ("cook", "Tonight I tried a Sichuan recipe with far too many chillies."),
    ("run", "My knee hurts after the long run along the canal."),
    ("film", "Saw an old Kurosawa film at the cinema club, wonderful print."),
    ("tax", "Filed the quarterly tax return with the accountant this morning."),
    ("bike", "The bicycle chain snapped on the way to work."),
    ("choir", "Choir rehearsal moved to Thursdays because the hall is booked."),
    ("phone", "My phone screen cracked when it fell off the desk."),
    ("piano", "Practising Chopin nocturnes every evening before dinner."),
    ("flat", "The landlord promised to fix the boiler next week."),
    ("wedding", "My sister Priya's wedding is in Lisbon on the 14th of June."),
]


@pytest.fixture
def chats_home(settings, run_pipeline):  # type: ignore[no-untyped-def]
    """A `Memory` of the home's chats at a relevance floor: `chats_home(floor)`."""
    from memlake.api import Memory
    from tests.conftest import land
    from tests.transcripts.helpers import jsonl, msg

    rows = [msg(name, 0, "user", said, f"2024-03-{day:02d}") for day, (name, said) in enumerate(GARDEN_CHATS, 1)]
    land(settings, "ann", "chats.jsonl", jsonl(*rows))
    assert run_pipeline().success
    return lambda floor: Memory(settings=settings.model_copy(
        update={"embedding_model": "hash", "context_relevance_floor": floor}))


def excerpt_ids(block) -> list[str]:  # type: ignore[no-untyped-def]
    return [m for row in block.provenance if row["kind"] == "turn" for m in row["message_ids"]]


QUESTIONS = ("when is Priya's wedding?", "where is my sister getting married, the wedding in June?",
             "remind me about the wedding in Lisbon")


def test_with_a_relevance_floor_a_narrow_question_gets_the_turn_it_needs_and_a_short_block(chats_home) -> None:
    floored = chats_home(0.4)  # the floor chosen on LoCoMo 0-4 (not the default: docs/decisions.md, 2026-11-28)
    for question in QUESTIONS:
        block = floored.context(question, "ann", as_of="2024-04-01")
        turns = excerpt_ids(block)
        assert "wedding-m0" in turns, (question, turns)
        assert set(turns) <= {"wedding-m0"}, (question, turns)  # none of the ten unrelated chats
        assert block.token_count < block.budget / 4, (question, block.token_count)
        # what the floor left out: with none, the nearest unrelated turns fill the block
        assert len(excerpt_ids(chats_home(0.0).context(question, "ann", as_of="2024-04-01"))) > 5


# A friend the user talks about, told twice (a fact about someone else is shown once said again), with several
# facts: a question about one of them names her, not all of them.
def nadia_chat(conversation: str, day: str) -> tuple:
    facts = [{**plain(content, f"{conversation}-m1", subject="Nadia"), "slot": slot, "value": value}
             for content, slot, value in (
                 ("Nadia lives in Porto.", "home_city", "Porto"),
                 ("Nadia plays the violin in an orchestra.", None, None),
                 ("Nadia adopted a greyhound called Biscuit.", None, None),
                 ("Nadia is allergic to peanuts.", None, None),
                 ("Nadia is training to be a paramedic.", None, None))]
    return (conversation, day, "Nadia lives in Porto, plays violin, has a greyhound, is allergic to peanuts and is "
            "training as a paramedic.", "Melanie", facts)


@pytest.mark.parametrize("question, wanted", [
    ("what instrument does Nadia play?", "violin"),
    ("where does Nadia live these days?", "Porto"),
    ("is Nadia allergic to anything?", "peanuts"),
    ("what's the name of Nadia's greyhound?", "Biscuit"),
])
def test_a_question_naming_someone_gets_the_facts_about_what_it_asks_not_all_of_theirs(home_with, question,
                                                                                       wanted) -> None:
    memory = home_with(nadia_chat("n1", "2024-04-02"), nadia_chat("n2", "2024-04-20"), FRIEND_CHAT)
    block = memory.context(question, "ann")
    texts = [row["text"] for row in fact_lines(block)]
    assert block.gate.section == "facts" and texts and wanted in texts[0], (question, texts)
    assert len(texts) == 1, (question, texts)  # none of her other four facts, none of the user's
