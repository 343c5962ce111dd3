"""Isolation: whatever token, agent and query a caller sends, through every endpoint, the proxy and the tools, no
response holds the canary of an agent other than the one served, and that one is the token's; a hostile agent id
is a 4xx and touches nothing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx2
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from tests.service.conftest import AGENTS, CANARIES, Served

QUERIES = ["passphrase", "gym locker code", "what is my passphrase", "tea", "where do I live", "oolong Porto",
           "what did we talk about", "code"]


@pytest.fixture(scope="module")
def fact_ids(served: Served) -> dict[str, list[str]]:
    """Every agent's fact ids, read with a token of its own: the history endpoint is asked for all of them."""
    own = {"alice": "alice", "bob": "bob", "carol": "alice+carol", "dave": "fuzz"}
    return {agent: [row["fact_id"] for row in served.client(served.tokens[own[agent]]).get(
        "/v1/memory/facts", params={"agent_id": agent}).json()["rows"]] for agent in AGENTS}


def ask(client: httpx2.Client, endpoint: str, agent: str | None, query: str, fact_id: str) -> httpx2.Response:
    """One request of `endpoint` about `agent` (None: let the token decide), by the query param or body."""
    param = {"agent_id": agent} if agent is not None else {}
    chat = {"model": "echo", "messages": [{"role": "user", "content": query}]}
    no_store = {"X-Memlake-Store": "false", **({"X-Memlake-Agent-Id": agent} if agent else {})}
    requests: dict[str, Any] = {
        "agents": lambda: client.get("/agents"),
        "search-chunks": lambda: client.get("/v1/memory/search", params={"q": query, **param}),
        "search-facts": lambda: client.get("/v1/memory/search", params={"q": query, "scope": "facts", **param}),
        "search-episodes": lambda: client.get("/v1/memory/search", params={"q": query, "scope": "episodes",
                                                                           **param}),
        "context": lambda: client.post("/v1/memory/context", json={"query": query, **param}),
        "context-full": lambda: client.post("/v1/memory/context", json={"query": query, "mode": "full", **param}),
        "facts": lambda: client.get("/v1/memory/facts", params={"include_history": True, **param}),
        "episodes": lambda: client.get("/v1/memory/episodes", params=param),
        "profile": lambda: client.get("/v1/memory/profile", params=param),
        "history": lambda: client.get(f"/v1/memory/history/{fact_id}", params=param),
        "tool-recall": lambda: client.post("/v1/memory/tools", json={
            "name": "recall", "arguments": {"query": query, "scope": "all"}, **param}),
        "tool-list": lambda: client.post("/v1/memory/tools", json={"name": "list", "arguments": {}, **param}),
        "proxy": lambda: client.post("/v1/chat/completions", json=chat, headers=no_store),
        "proxy-stream": lambda: client.post("/v1/chat/completions", json={**chat, "stream": True},
                                            headers=no_store),
    }
    return requests[endpoint]()  # type: ignore[no-any-return]


ENDPOINTS = ["agents", "search-chunks", "search-facts", "search-episodes", "context", "context-full", "facts",
             "episodes", "profile", "history", "tool-recall", "tool-list", "proxy", "proxy-stream"]


@hypothesis_settings(max_examples=70, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(token=st.sampled_from(["alice", "bob", "alice+carol", "fuzz", None, "forged"]),
       agent=st.sampled_from([*AGENTS, None]),
       endpoint=st.sampled_from(ENDPOINTS),
       query=st.one_of(st.sampled_from(QUERIES), st.text("abcdefghijklmnopqrstuvwxyz ?", min_size=1, max_size=30)
                       .filter(str.strip)),
       fact_owner=st.sampled_from(AGENTS), fact_pick=st.integers(0, 10))
def test_no_response_holds_another_agents_canary(served: Served, fact_ids: dict[str, list[str]], token: str | None,
                                                 agent: str | None, endpoint: str, query: str, fact_owner: str,
                                                 fact_pick: int) -> None:
    secret = served.tokens.get(token or "", "mlk_forged" if token == "forged" else None)
    grants = served.grants.get(token or "", ())
    owned = fact_ids[fact_owner]
    with served.client(secret) as client:
        response = ask(client, endpoint, agent, query, owned[fact_pick % len(owned)])
    assert response.status_code < 500, response.text
    served_agent = agent if agent is not None else (grants[0] if len(grants) == 1 else None)
    for owner, canaries in CANARIES.items():
        for canary in canaries:
            if canary in response.text:
                assert response.status_code < 300, (endpoint, response.text[:500])
                if endpoint == "agents":
                    continue  # names, no memory: canaries are not agent names
                assert owner == served_agent and owner in grants, (token, agent, endpoint, owner)
    if response.status_code < 300 and secret is not None and endpoint != "agents":
        assert served_agent in grants  # served at all only for an agent of the token


HOSTILE = ["../x", "..", "*", "'", '"', "alice'--", "a/b", "a\\b", ".hidden", "-rf", "x" * 65, "ünïcødé", "алиса",
           "alice\n", " alice", "alice ", "%2e%2e", "", "a" * 5000, "\u202eecila", "al\x00ice"]


def snapshot(home: Path) -> dict[str, tuple[int, int]]:
    found = {}
    for folder, _, files in os.walk(home):
        for name in files:
            path = Path(folder) / name
            stat = path.stat()
            found[str(path.relative_to(home))] = (stat.st_size, stat.st_mtime_ns)
    return found


@pytest.mark.parametrize("hostile", HOSTILE, ids=[repr(h)[:20] for h in HOSTILE])
def test_a_hostile_agent_id_is_a_4xx_and_touches_nothing(served: Served, hostile: str) -> None:
    before = snapshot(served.home)
    header_safe = hostile.isascii() and hostile.isprintable() and hostile == hostile.strip() and len(hostile) < 200
    with served.client(served.tokens["alice+carol"]) as client:
        responses = [
            client.get("/v1/memory/search", params={"q": "tea", "agent_id": hostile}),
            client.get("/v1/memory/facts", params={"agent_id": hostile}),
            client.post("/v1/memory/context", json={"query": "tea", "agent_id": hostile}),
            client.post("/v1/memory/remember", json={"content": "I like figs.", "agent_id": hostile}),
            client.post("/v1/memory/forget", json={"everything": True, "agent_id": hostile}),
            client.post("/v1/memory/tools", json={"name": "store", "arguments": {"content": "figs"},
                                                  "agent_id": hostile}),
            client.post("/memory/ingest", json={"agent_id": hostile, "conversation_id": "c",
                                                "turns": [{"user": "I like figs."}]}),
            client.get("/memory/ingest/20240101T000000-0123456789ab", params={"agent_id": hostile}),
        ]
        if header_safe and hostile:
            responses.append(client.post("/v1/chat/completions", headers={"X-Memlake-Agent-Id": hostile},
                                         json={"model": "echo", "messages": [{"role": "user", "content": "figs"}]}))
    for response in responses:
        assert 400 <= response.status_code < 500, (response.request.url, response.text[:300])
        assert "error" in response.json()
    assert snapshot(served.home) == before
