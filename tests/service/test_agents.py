"""Which agents have memory: an agent whose only memory is a remembered fact is listed by `Memory.agents`,
`memlake agents` and `GET /agents` (it was left out: only agents with turns were)."""

from __future__ import annotations

from starlette.testclient import TestClient

from memlake.api import Memory
from service.app import create_app
from tests.conftest import land
from tests.service.test_commands import typed
from tests.transcripts.helpers import CONVERSATION, jsonl


def test_an_agent_with_only_remembered_facts_is_listed_everywhere(settings, run_pipeline, monkeypatch,
                                                                    capsys) -> None:
    land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATION))
    assert run_pipeline().success
    memory = Memory(settings=settings.model_copy(update={"embedding_model": "none"}))
    assert memory.agents() == ["alice"]
    memory.remember("zoe", "I am allergic to cats")  # no chat at all: a fact told through the API

    assert memory.agents() == ["alice", "zoe"]  # seen at once by a Memory kept open (the service's)
    code, out, _ = typed(monkeypatch, capsys, "agents", "--home", str(settings.home))
    assert code == 0 and out.split() == ["alice", "zoe"]
    with TestClient(create_app(memory, warm=False)) as client:
        listed = client.get("/agents").json()["agents"]
    assert listed == [{"agent_id": "alice", "has_turns": True}, {"agent_id": "zoe", "has_turns": False}]


def test_an_agent_whose_facts_a_run_folded_stays_listed(settings, run_pipeline) -> None:
    memory = Memory(settings=settings.model_copy(update={"embedding_model": "none"}))
    memory.remember("zoe", "I live in Porto")
    assert run_pipeline().success  # the remembered fact folded into facts/facts
    assert Memory(settings=settings).agents() == ["zoe"]
    memory.forget("zoe", everything=True)
    assert "zoe" in Memory(settings=settings).agents()  # it still has memory here: the forget log says so


def test_the_agents_are_listed_under_v1_as_the_readmes_client_asks(settings) -> None:
    """The README's `openai` client has base_url .../v1: `GET /agents` was the one read it could not reach (404)."""
    from openai import OpenAI

    memory = Memory(settings=settings.model_copy(update={"embedding_model": "none"}))
    memory.remember("zoe", "I am allergic to cats")
    with TestClient(create_app(memory, warm=False)) as client:
        client.base_url = client.base_url.join("/v1")  # as the openai SDK joins its paths
        sdk = OpenAI(base_url=str(client.base_url), api_key="-", http_client=client)
        listed = sdk.get("/agents", cast_to=object)
    assert listed == {"agents": [{"agent_id": "zoe", "has_turns": False}]}
