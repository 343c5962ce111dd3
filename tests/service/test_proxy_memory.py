"""The proxy's own memory over several rounds: an upstream that echoes everything it is sent (the injected block
included) is proxied, the pipeline runs between rounds, and memory never grows from itself: the lake holds no
text of any block the proxy injected, and a fact forgotten after the first round is never sent upstream again."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import polars as pl
from starlette.testclient import TestClient

from memlake.api import Memory
from memlake.context.escape import PREAMBLE
from memlake.lake import Lake
from memlake.schemas import CHUNKS, EPISODES, PROXY_ORIGIN, TURNS
from memlake.settings import Settings
from service.app import create_app
from service.config import ServiceSettings
from tests.conftest import land
from tests.service.echo_upstream import EchoUpstream
from tests.transcripts.helpers import jsonl, msg

SECRET = "PASSPHRASEERIN0913"  # only ever in a remembered fact: any copy of it in the lake came from a block
QUESTIONS = ["What is my passphrase?", "Where do I live and what do I drink?", "What is my gym locker code?"]
ROUNDS = 3


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.replace("\\n", " ").lower())


def runs_of(text: str, length: int = 8) -> set[tuple[str, ...]]:
    said = words(text)
    return {tuple(said[at:at + length]) for at in range(len(said) - length + 1)}


def ask(client: TestClient, question: str, stream: bool) -> None:
    request = {"model": "echo", "stream": stream, "messages": [{"role": "user", "content": question}]}
    if stream:
        with client.stream("POST", "/v1/chat/completions", json=request) as answer:
            assert answer.status_code == 200 and "data: [DONE]" in answer.read().decode()
    else:
        assert client.post("/v1/chat/completions", json=request).status_code == 200


def lake_texts(settings: Settings) -> dict[str, list[str]]:
    """Every text of erin's turns, chunks and episodes, by table."""
    lake = Lake(settings.lake_dir)
    texts: dict[str, list[str]] = {}
    for table in (TURNS, CHUNKS, EPISODES):
        rows = lake.read(table).filter(pl.col("agent_id") == "erin")
        texts[table.name] = [json.dumps(row, default=str) for row in rows.to_dicts()]
    return texts


def test_rounds_of_echoed_chats_store_no_block_and_never_resend_a_forgotten_fact(
        settings: Settings, run_pipeline: Callable[..., Any]) -> None:
    land(settings, "erin", "chat.jsonl", jsonl(
        msg("erin-gym", 0, "user", "My gym locker code is LOCKER4471, please keep it.", "2024-03-01"),
        msg("erin-gym", 1, "assistant", "Noted, I will remember your locker code.", "2024-03-01"),
        msg("erin-tea", 0, "user", "I drink oolong tea every morning and I live in Porto.", "2024-03-05"),
        msg("erin-tea", 1, "assistant", "Oolong in Porto sounds lovely.", "2024-03-05")))
    assert run_pipeline().success
    memory = Memory(settings=settings.model_copy(update={"embedding_model": "hash", "context_cache_seconds": 0}))
    memory.remember("erin", f"My passphrase is {SECRET}.")
    with EchoUpstream() as upstream:
        app = create_app(memory, ServiceSettings(upstream_base_url=upstream.base_url), warm=False)
        with TestClient(app, headers={"X-Memlake-Agent-Id": "erin"}) as client:
            for round_ in range(ROUNDS):
                before = len(upstream.requests)
                for at, question in enumerate(QUESTIONS):
                    ask(client, question, stream=at % 2 == 1)
                sent = json.dumps(upstream.requests[before:])
                if round_ == 0:
                    assert SECRET in sent  # the block carried the fact, and the echo repeated it
                    forgotten = memory.facts("erin").filter(pl.col("content").str.contains(SECRET))
                    memory.forget("erin", fact_id=forgotten["fact_id"][0])
                else:
                    assert SECRET not in sent, f"a forgotten fact was sent upstream again in round {round_ + 1}"
                assert run_pipeline().success
    blocks = [request["messages"][0]["content"] for request in upstream.requests]
    assert len(blocks) == ROUNDS * len(QUESTIONS) and all("<memory_context>" in block for block in blocks)
    proxied = memory.turns("erin").filter(pl.col("conversation_id").str.starts_with("proxy-")).sort("created_at")
    assert proxied.height == 2 * ROUNDS * len(QUESTIONS)  # every exchange landed: a question and its answer
    assert proxied["origin"].to_list() == [PROXY_ORIGIN] * proxied.height  # marked as the proxy's
    assert memory.turns("erin").filter(pl.col("origin").is_null()).height == 4  # the chat landed by hand is not
    # the proxied answers are the agent's own output: kept in the transcript, never a chunk to be matched
    chunks = Lake(settings.lake_dir).read(CHUNKS).filter(pl.col("conversation_id").str.starts_with("proxy-"))
    assert chunks.height and set(chunks["role"].drop_nulls()) == {"user"}  # turns and their keys: the user's
    assert not [text for text in chunks["text"] if "Assistant" in text]  # nor inside a session's chunk
    for table, texts in lake_texts(settings).items():
        for text in texts:
            assert SECRET not in text and "memory_context" not in text and PREAMBLE[:40] not in text, (table, text)
    answers = proxied.filter(pl.col("role") == "assistant")["content"]
    for answer, block in zip(answers, blocks, strict=True):  # in the order they were asked
        assert not runs_of(answer) & runs_of(block), answer  # no eight words in a row from its block
