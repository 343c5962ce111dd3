"""Chat rows as an export holds them, and the turns a run built from them: shared by the tests of landing,
turns, search and runs."""

import json

import polars as pl

from memlake.chunks import BARE_CHUNKING
from memlake.lake import Lake
from memlake.schemas import TURNS
from memlake.settings import ChunkingSettings


def cut(**fields: object) -> ChunkingSettings:
    """The bare chunking (a key per turn and one per conversation) with `fields` of the chunking group set."""
    return BARE_CHUNKING.model_copy(update=fields)


def jsonl(*rows: dict) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def msg(conversation: str, index: int, role: str, content: str, day: str = "2024-03-01", **extra) -> dict:
    return {
        "conversation_id": conversation,
        "message_id": f"{conversation}-m{index}",
        "role": role,
        "content": content,
        "created_at": f"{day}T10:{index:02d}:00Z",
        **extra,
    }


CONVERSATION = [
    msg("c1", 0, "user", "I live in Berlin."),
    msg("c1", 1, "assistant", "Berlin is lovely in spring."),
    msg("c2", 0, "user", "Order ORD-58213 has not arrived.", day="2024-03-05"),
]


def turns_of(settings) -> pl.DataFrame:
    return Lake(settings.lake_dir).read(TURNS).sort("conversation_id", "turn_index")
