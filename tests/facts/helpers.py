"""What the tests of `tests/facts` and `tests/context` share: a home of agent `ann` built from chats whose facts the
offline distiller is said to have read (episodes written straight into the lake), with facts, profiles and the fact
index materialized (the hashing embedder)."""

from __future__ import annotations

import dagster as dg
import polars as pl
import pytest

from assets import facts as fact_assets
from assets import search as search_assets
from memlake.api import Memory
from memlake.lake import Lake
from memlake.schemas import EPISODES, TURNS
from tests.facts.test_facts_assets import at, turn

OFFLINE = "memlake-offline-20"
FEES = "The user is trying to avoid per-mile fees on the rental."
GARDEN = "The user grows tomatoes on the balcony."


def plain(content: str, message_id: str, subject: str = "user") -> dict:
    return {"type": "fact", "subject": subject, "slot": None, "value": None, "content": content, "confidence": 0.9,
            "importance": 0.6, "tags": [], "valid_from": None, "valid_until": None, "message_ids": [message_id]}


def slotted(content: str, slot: str, value: str, message_id: str) -> dict:
    return {**plain(content, message_id), "slot": slot, "value": value}


def chat(lake: Lake, conversation: str, day: str, said: str, reply_by: str, candidates: list[dict]) -> None:
    """One conversation of `ann`: the user says `said`, `reply_by` answers (an assistant, or a person by name);
    the offline distiller read `candidates` from the user's message."""
    when = f"{day}T09:00:00"
    turns = [turn(conversation, f"{conversation}-m1", "user", said, when, "2025-01-01T00:00:00"),
             turn(conversation, f"{conversation}-m2", "assistant", "I see.", f"{day}T09:01:00", "2025-01-01T00:00:00")]
    turns[1]["speaker"] = reply_by
    turns[0]["speaker"] = "Ann"
    lake.write_partition(TURNS, day, turns)
    lake.write_partition(EPISODES, day, [{
        "agent_id": "ann", "conversation_id": conversation, "title": conversation,
        "conversation_started_at": at(when), "conversation_ended_at": at(f"{day}T09:01:00"), "summary": "s",
        "fact_candidates": candidates, "message_ids": [], "distiller": OFFLINE,
        "ingested_at": at("2025-01-01T00:00:00"),
    }])


@pytest.fixture
def home_with(settings, fast_resources):  # type: ignore[no-untyped-def]
    """A home of `ann` with these chats, its facts, profiles and fact index built (the hashing embedder)."""

    def build(*chats: tuple[str, str, str, str, list[dict]]) -> Memory:
        lake = Lake(settings.lake_dir)
        for conversation, day, said, reply_by, candidates in chats:
            chat(lake, conversation, day, said, reply_by, candidates)
        built = dg.materialize([fact_assets.facts, fact_assets.profiles, search_assets.fact_index],
                               resources=fast_resources, instance=dg.DagsterInstance.ephemeral())
        assert built.success
        return Memory(settings=settings)

    return build


def contents(frame: pl.DataFrame) -> list[str]:
    return frame["content"].to_list()


