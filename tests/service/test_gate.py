"""One token gate for `memlake serve` and `memlake mcp --transport http`, read again at every request: a revoked
token is refused at once, a home that gets its first token closes at once, and `memlake token list` says what the
gate does. A request naming two agents is refused, and forgetting a whole agent needs its id typed again."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from starlette.testclient import TestClient

from memlake.api import Memory
from memlake_bench.serve import free_port
from service.app import create_app
from tests.conftest import REPO
from tests.service.conftest import stop
from tests.service.test_commands import typed
from tests.service.test_mcp import wait_until_listening

ENV = {**os.environ, "PYTHONPATH": str(REPO), "MEMLAKE_EMBEDDING_MODEL": "hash"}


def memlake(home: Path, *args: str) -> str:
    """`memlake ARGS --home HOME` as a user types it, in its own process: what it printed on stdout."""
    done = subprocess.run([sys.executable, "-m", "pipelines.cli", *args, "--home", str(home)], env=ENV,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def small_home(settings: Any, facts: dict[str, str]) -> Memory:
    """A home whose agents each have one remembered fact (no pipeline run needed to list them)."""
    memory = Memory(settings=settings.model_copy(update={"embedding_model": "hash"}))
    for agent, content in facts.items():
        memory.remember(agent, content)
    return memory


@pytest.fixture
def mcp_of_ann(settings: Any) -> Iterator[tuple[str, Path]]:
    """`memlake mcp --agent ann --transport http` on a home where ann remembered one fact: the /mcp URL, the home."""
    small_home(settings, {"ann": "My bike lock code is BIKELOCK5521."})
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "pipelines.cli", "mcp", "--agent", "ann", "--transport", "http", "--port", str(port),
         "--home", str(settings.home)], env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_until_listening(port, process)
        yield f"http://127.0.0.1:{port}/mcp", settings.home
    finally:
        stop(process)


def mcp_call(url: str, token: str | None, name: str, arguments: dict[str, Any]) -> Any:
    """One tool call in an MCP session of the SDK's streamable HTTP client: the tool's structured result."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}

    async def session() -> Any:
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http, \
                Client(streamable_http_client(url, http_client=http)) as client:
            return (await client.call_tool(name, arguments)).structured_content

    return anyio.run(session)


def refused(url: str, token: str | None, name: str, arguments: dict[str, Any]) -> httpx2.Response:
    """A plain JSON-RPC tool call, as any HTTP client sends it: the gate answers before any session is opened."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx2.post(url, headers={**headers, "Accept": "application/json, text/event-stream"}, timeout=60,
                       json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                             "params": {"name": name, "arguments": arguments}})


def contents(facts: Any) -> list[str]:
    return [fact["content"] for fact in facts["facts"]]


def test_mcp_http_refuses_a_token_revoked_while_it_runs_for_reads_and_writes(mcp_of_ann) -> None:
    url, home = mcp_of_ann
    kept = memlake(home, "token", "add", "--agent", "ann").strip()
    gone = memlake(home, "token", "add", "--agent", "ann", "--note", "laptop").strip()
    gone_id = next(line.split()[0] for line in memlake(home, "token", "list").splitlines() if "laptop" in line)
    assert any("BIKELOCK5521" in c for c in contents(mcp_call(url, gone, "list", {"limit": 10})))

    memlake(home, "token", "revoke", gone_id)
    for name, arguments in (("list", {"limit": 10}), ("store", {"content": "My locker is number 12."})):
        answer = refused(url, gone, name, arguments)
        assert answer.status_code == 401, (name, answer.text[:300])
        assert "bearer token of agent 'ann'" in answer.json()["error"]["message"]
    with pytest.raises(Exception):  # noqa: B017 - the SDK's client fails as it will: the point is it gets nothing
        mcp_call(url, gone, "store", {"content": "My locker is number 12."})
    still = contents(mcp_call(url, kept, "list", {"limit": 10}))  # the other token of ann still gets in
    assert any("BIKELOCK5521" in c for c in still) and not any("locker" in c for c in still)


def test_mcp_http_started_with_no_tokens_closes_when_the_first_token_is_added(mcp_of_ann) -> None:
    url, home = mcp_of_ann
    assert any("BIKELOCK5521" in c for c in contents(mcp_call(url, None, "list", {"limit": 10})))

    token = memlake(home, "token", "add", "--agent", "ann").strip()
    for name, arguments in (("list", {"limit": 10}), ("store", {"content": "My locker is number 12."})):
        answer = refused(url, None, name, arguments)
        assert answer.status_code == 401, (name, answer.text[:300])
    facts = contents(mcp_call(url, token, "list", {"limit": 10}))
    assert any("BIKELOCK5521" in c for c in facts) and not any("locker" in c for c in facts)


def test_token_list_says_what_the_gate_does_before_the_first_and_after_the_last_token(settings, monkeypatch,
                                                                                      capsys) -> None:
    home = str(settings.home)
    memory = small_home(settings, {"ann": "I drink rooibos."})
    with TestClient(create_app(memory, warm=False)) as client:
        _, _, err = typed(monkeypatch, capsys, "token", "list", "--home", home)
        assert client.get("/agents").status_code == 200
        assert "every agent is open" in err and "loopback" in err

        _, secret, _ = typed(monkeypatch, capsys, "token", "add", "--agent", "ann", "--home", home)
        _, listed, _ = typed(monkeypatch, capsys, "token", "list", "--home", home)
        typed(monkeypatch, capsys, "token", "revoke", listed.split()[0], "--home", home)
        code, out, err = typed(monkeypatch, capsys, "token", "list", "--home", home)
        for token in (None, secret.strip()):
            auth = {"Authorization": f"Bearer {token}"} if token else {}
            assert client.get("/agents", headers=auth).status_code == 401
    said = (out + err).replace(home, "<home>")  # a temporary folder's name may hold any word ("popen-gw0")
    assert code == 0 and "is open" not in said, said
    assert "no token left" in said and "is refused" in said and "memlake token add" in said


@pytest.fixture
def two_agents(settings: Any) -> Iterator[tuple[TestClient, Memory]]:
    memory = small_home(settings, {"ann": "I drink rooibos.", "bob": "I drink mate."})
    with TestClient(create_app(memory, warm=False)) as client:
        yield client, memory


@pytest.mark.parametrize("confirm", [None, "yes", "bob", "ANN", " ann", "forget all"])
def test_forgetting_a_whole_agent_without_its_id_typed_again_is_a_400_and_forgets_nothing(two_agents,
                                                                                        confirm) -> None:
    client, memory = two_agents
    body: dict[str, Any] = {"agent_id": "ann", "everything": True}
    if confirm is not None:
        body["confirm"] = confirm
    answer = client.post("/v1/memory/forget", json=body)
    assert answer.status_code == 400, answer.text
    assert '"confirm": "ann"' in answer.json()["error"]["message"]
    assert memory.facts("ann").height == 1


def test_forgetting_a_whole_agent_with_its_id_typed_again_forgets_its_facts_only(two_agents) -> None:
    client, memory = two_agents
    answer = client.post("/v1/memory/forget", json={"agent_id": "ann", "everything": True, "confirm": "ann"})
    assert answer.status_code == 200 and answer.json()["count"] == 1
    assert memory.facts("ann").height == 0 and memory.facts("bob").height == 1


def test_a_confirmation_without_everything_is_a_400(two_agents) -> None:
    client, memory = two_agents
    fact_id = memory.facts("ann")["fact_id"][0]
    answer = client.post("/v1/memory/forget", json={"agent_id": "ann", "fact_id": fact_id, "confirm": "ann"})
    assert answer.status_code == 400 and "everything" in answer.json()["error"]["message"]
    assert memory.facts("ann").height == 1


TWO_AGENTS = [("X-Memlake-Agent-Id", "ann"), ("X-Memlake-Agent-Id", "bob")]


@pytest.mark.parametrize(("method", "path", "body"), [
    ("GET", "/v1/memory/facts", None),
    ("GET", "/v1/memory/search?q=drink", None),
    ("POST", "/v1/memory/context", {"query": "what do I drink?"}),
    ("POST", "/v1/memory/remember", {"content": "I drink water."}),
    ("POST", "/v1/memory/forget", {"everything": True, "confirm": "ann"}),
    ("POST", "/v1/memory/tools", {"name": "store", "arguments": {"content": "I drink water."}}),
    ("POST", "/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
])
def test_two_agent_headers_naming_different_agents_are_a_400_and_touch_nothing(two_agents, method, path,
                                                                              body) -> None:
    client, memory = two_agents
    for headers in (TWO_AGENTS, list(reversed(TWO_AGENTS))):
        answer = client.request(method, path, headers=headers, json=body)
        assert answer.status_code == 400, answer.text
        assert "'ann'" in answer.json()["error"]["message"] and "'bob'" in answer.json()["error"]["message"]
    assert memory.facts("ann").height == 1 and memory.facts("bob").height == 1


def test_the_same_agent_header_twice_is_one_agent(two_agents) -> None:
    client, _ = two_agents
    answer = client.get("/v1/memory/facts", headers=[("X-Memlake-Agent-Id", "ann"), ("X-Memlake-Agent-Id", "ann")])
    assert answer.status_code == 200 and answer.json()["agent_id"] == "ann"


@pytest.mark.parametrize("path", ["/v1/memory/facts", "/memory/ingest/20240101T000000-0123456789ab"])
def test_two_agent_ids_in_the_query_are_a_400(two_agents, path) -> None:
    client, _ = two_agents
    for order in (("ann", "bob"), ("bob", "ann")):
        answer = client.get(path, params=[("agent_id", order[0]), ("agent_id", order[1])])
        assert answer.status_code == 400 and "'bob'" in answer.json()["error"]["message"], answer.text


def test_a_tokens_file_damaged_while_the_servers_run_refuses_every_request_in_both_and_says_why(settings) -> None:
    from service.mcp_server import http_app
    from service.tokens import TokenStore, tokens_path

    memory = small_home(settings, {"ann": "I drink rooibos."})
    secret = TokenStore(settings.home).add(["ann"])[0]
    with TestClient(create_app(memory, warm=False)) as serve:
        mcp = TestClient(http_app(memory, "ann", "127.0.0.1"))
        auth = {"Authorization": f"Bearer {secret}"}
        assert serve.get("/agents", headers=auth).status_code == 200
        tokens_path(settings.home).write_text('{"tokens": [{"token_id": "cut sh')
        for answer in (serve.get("/agents", headers=auth), serve.get("/agents"),
                       mcp.post("/mcp", headers=auth, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})):
            assert answer.status_code == 503, answer.text
            assert "tokens file" in answer.json()["error"]["message"] and "refused" in answer.json()["error"]["message"]

