"""`memlake mcp` over stdio, driven by the `mcp` SDK's client: the tools are listed with the memory tools' own
schemas, and every call reads and writes only the agent given on the command line."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from memlake.tools import TOOLS
from memlake_bench.serve import free_port
from tests.conftest import REPO
from tests.service.conftest import CANARIES, Served, stop


def wait_until_listening(port: int, process: subprocess.Popen) -> None:  # type: ignore[type-arg]
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stdout.read().decode()[-2000:]  # type: ignore[union-attr]
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError("memlake mcp did not listen within 90 s")


def run_session(served: Served, agent: str, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[Any], list[Any]]:
    """The tools the server lists, and the result of each call, in one stdio session."""
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "pipelines.cli", "mcp", "--agent", agent, "--home", str(served.home)],
        env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=str(REPO))

    async def session() -> tuple[list[Any], list[Any]]:
        async with Client(server, read_timeout_seconds=120) as client:
            listed = (await client.list_tools()).tools
            return listed, [await client.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(session)


def test_an_mcp_client_lists_and_calls_the_tools_of_one_agent(served: Served) -> None:
    listed, (recalled, context, crossing, stored, facts) = run_session(served, "bob", [
        ("recall", {"query": "passphrase gym locker code", "scope": "all"}),
        ("context", {"query": "What is my passphrase?"}),
        ("recall", {"query": "passphrase", "scope": "facts", "agent_id": "alice"}),
        ("store", {"content": "My favourite fruit is the quince."}),
        ("list", {"limit": 50}),
    ])
    assert [tool.name for tool in listed] == ["recall", "store", "forget", "list", "context"]
    schemas = {tool.name: tool.input_schema for tool in listed}
    assert all(schemas[t["function"]["name"]] == t["function"]["parameters"] for t in TOOLS)

    texts = [result.content[0].text for result in (recalled, context, crossing, stored, facts)]
    for text in texts:  # nothing of another agent, whatever was asked
        assert not [c for agent, pair in CANARIES.items() if agent != "bob" for c in pair if c in text]
    assert not recalled.is_error and CANARIES["bob"][1] in texts[0]
    assert not context.is_error and CANARIES["bob"][1] in json.loads(texts[1])["text"]
    assert crossing.is_error and "the agent is fixed" in texts[2]
    assert not stored.is_error and any("quince" in f["content"] for f in facts.structured_content["facts"])


def test_an_unknown_tool_or_bad_arguments_are_errors_the_model_can_read(served: Served) -> None:
    _, (unknown, bad) = run_session(served, "carol", [("teleport", {}), ("context", {"query": 42})])
    assert unknown.is_error and "no tool 'teleport'" in unknown.content[0].text
    assert bad.is_error and "query" in bad.content[0].text


def test_streamable_http_lets_in_only_a_token_of_its_agent(served: Served) -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "pipelines.cli", "mcp", "--agent", "carol", "--transport", "http", "--port", str(port),
         "--home", str(served.home)], env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_until_listening(port, process)

        async def listed_with(token: str) -> list[str]:
            headers = {"Authorization": f"Bearer {token}"}
            async with httpx2.AsyncClient(headers=headers, timeout=60) as http, \
                    Client(streamable_http_client(url, http_client=http)) as client:
                return [tool.name for tool in (await client.list_tools()).tools]

        assert anyio.run(listed_with, served.tokens["alice+carol"]) == ["recall", "store", "forget", "list", "context"]
        for headers in ({}, {"Authorization": f"Bearer {served.tokens['bob']}"}):
            refused = httpx2.post(url, headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            assert refused.status_code == 401 and "of agent 'carol'" in refused.json()["error"]["message"]
    finally:
        stop(process)
