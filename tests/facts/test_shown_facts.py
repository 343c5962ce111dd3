"""Precision first: what the agent is shown holds only facts confident enough, or backed by the user's word.

A fact's confidence comes from how it was read (`memlake.distill.confidence`): the offline rule family (a slot
reader above a plain sentence), a chat with an assistant (a higher bar) or between people, and how many
conversations said it. The rest are candidates: kept, listed by `facts --candidates` and in history, and shown
once said again or confirmed by the user.
"""

from __future__ import annotations

import polars as pl
import pytest
from typer.testing import CliRunner

from memlake.distill.confidence import (
    ASSISTANT_CHAT_FACTOR,
    SENTENCE_PRIOR,
    SLOT_PRIOR,
    fact_confidence,
    reading_prior,
)
from memlake.distill.offline.assistant_chat import replies_from_an_assistant
from pipelines.cli import app
from tests.facts.helpers import (
    FEES,
    GARDEN,
    OFFLINE,
    contents,
    plain,
    slotted,
)

FEES_CHAT = ("a1", "2024-03-01", "I'm trying to avoid per-mile fees on the rental.", "assistant",
             [plain(FEES, "a1-m1"), slotted("The user lives in Leeds.", "home_city", "Leeds", "a1-m1")])


def test_a_plain_sentence_said_once_in_an_assistant_chat_is_a_candidate_shown_nowhere(home_with) -> None:
    memory = home_with(FEES_CHAT)
    assert contents(memory.facts("ann")) == ["The user lives in Leeds."]  # the slot reader's value is shown
    assert contents(memory.facts("ann", candidates=True)) == [FEES]
    assert FEES in contents(memory.facts("ann", include_history=True))  # history keeps it
    assert "per-mile" not in memory.profile("ann")["text"][0]
    assert "per-mile" not in " ".join(memory.search("per-mile fees on the rental", "ann", scope="facts")["text"])
    block = memory.context("where do I live now? any rental fees?", "ann")
    assert "per-mile" not in block.text and "Leeds" in block.text
    listed = CliRunner().invoke(app, ["facts", "--agent", "ann", "--candidates", "--home", str(memory.settings.home)])
    assert listed.exit_code == 0, listed.output
    assert "per-mile fees" in listed.stdout and "Leeds" not in listed.stdout
    now = CliRunner().invoke(app, ["facts", "--agent", "ann", "--home", str(memory.settings.home)])
    assert "Leeds" in now.stdout and "per-mile" not in now.stdout


def test_said_again_in_another_conversation_a_candidate_is_shown(home_with) -> None:
    again = ("a2", "2024-04-02", "Again: no per-mile fees on the rental for me.", "assistant",
             [plain(FEES, "a2-m1")])
    memory = home_with(FEES_CHAT, again)
    shown = memory.facts("ann")
    assert FEES in contents(shown)
    assert shown.filter(pl.col("content") == FEES)["source_conversation_ids"][0].to_list() == ["a1", "a2"]
    assert memory.facts("ann", candidates=True).height == 0
    assert "per-mile" in memory.profile("ann")["text"][0]
    assert FEES in memory.search("per-mile fees on the rental", "ann", scope="facts")["text"].to_list()


def test_the_same_sentence_twice_in_one_conversation_is_still_said_once(home_with) -> None:
    twice = ("a1", "2024-03-01", "I'm trying to avoid per-mile fees. Really, per-mile fees.", "assistant",
             [plain(FEES, "a1-m1"), plain(FEES, "a1-m2")])
    memory = home_with(twice)
    assert contents(memory.facts("ann", candidates=True)) == [FEES]


def test_an_assistant_chat_needs_more_than_a_chat_between_people(home_with) -> None:
    with_a_friend = ("p1", "2024-03-01", "I grow tomatoes on my balcony.", "Melanie", [plain(GARDEN, "p1-m1")])
    with_the_assistant = ("a1", "2024-03-02", "I'm trying to avoid per-mile fees.", "ChatGPT",
                          [plain(FEES, "a1-m1")])
    memory = home_with(with_a_friend, with_the_assistant)
    assert contents(memory.facts("ann")) == [GARDEN]
    assert contents(memory.facts("ann", candidates=True)) == [FEES]


def test_a_remembered_fact_is_shown_and_a_confirmed_candidate_is_promoted(home_with) -> None:
    memory = home_with(FEES_CHAT)
    memory.remember("ann", "I'm trying to avoid per-mile fees on the rental")
    shown = contents(memory.facts("ann"))
    assert any("per-mile fees" in text for text in shown)
    assert memory.facts("ann", candidates=True).height == 0


def test_a_remembered_fact_is_shown_whatever_its_confidence(home_with) -> None:
    from memlake.facts.overrides import write_override

    memory = home_with(FEES_CHAT)
    write_override(memory.settings, "ann", "add", content="The user keeps bees.", confidence=0.05)
    shown = memory.facts("ann")
    row = shown.filter(pl.col("content") == "The user keeps bees.")
    assert row.height == 1 and row["confidence"][0] == pytest.approx(0.05)
    assert FEES not in contents(shown)  # an extraction far above 0.05 is held back: the user's word is what counts


def test_a_fact_read_s_confidence_is_its_rule_family_times_the_chat_kind_and_grows_with_sources() -> None:
    slot = reading_prior(0.9, distiller=OFFLINE, slot="home_city", subject="user")
    sentence = reading_prior(0.9, distiller=OFFLINE, slot=None, subject="user")
    about_someone = reading_prior(0.9, distiller=OFFLINE, slot=None, subject="Melanie")
    guessed = reading_prior(0.9, distiller=OFFLINE, slot="home_city", subject="user", tags=["inferred"])
    assert slot == SLOT_PRIOR > sentence == SENTENCE_PRIOR > about_someone > guessed
    in_assistant_chat = reading_prior(0.9, distiller=OFFLINE, slot=None, subject="user", assistant_chat=True)
    assert in_assistant_chat == pytest.approx(SENTENCE_PRIOR * ASSISTANT_CHAT_FACTOR)
    assert reading_prior(0.42, distiller="gpt-4o-mini", slot="employer", subject="user") == 0.42  # the model's own
    assert fact_confidence(0.5, 1) == 0.5 < fact_confidence(0.5, 2) == 0.75 < fact_confidence(0.5, 3)


@pytest.mark.parametrize(("replies", "assistant"), [
    ([("assistant", "assistant")], True),
    ([("assistant", "ChatGPT")], True),
    ([("assistant", None)], True),
    ([("assistant", "Melanie")], False),  # LoCoMo: the other side is a person
    ([("assistant", "assistant"), ("assistant", "Jon")], False),
    ([], False),  # a statement told alone is no chat
])
def test_an_assistant_chat_is_one_where_no_reply_comes_from_a_named_person(replies, assistant) -> None:
    assert replies_from_an_assistant(replies, {"Ann"}) is assistant
