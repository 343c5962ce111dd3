"""What went wrong decides the status: the core's typed refusals (`memlake.errors`) are answered with their own
4xx or 503 and their message; anything else the core raises is memlake's bug, a 500 that is logged, never the
caller's 400 (it was: `service/app.py` turned any ValueError into a 400). The memory tools and the MCP server
refuse with the same types, and log a bug as one."""

from __future__ import annotations

import logging
import shutil

import pytest
from starlette.testclient import TestClient

from memlake.api import Memory
from memlake.errors import BadRequest, Conflict, NotFound, Unavailable, UnknownAgent
from memlake.tools import MemoryTools
from service.app import create_app
from service.mcp_server import context_call

TYPED = [(BadRequest, 400, "invalid_request_error"), (UnknownAgent, 404, "not_found_error"),
         (NotFound, 404, "not_found_error"), (Conflict, 409, "conflict_error"), (Unavailable, 503, "server_error")]


def memory_of(settings) -> Memory:  # type: ignore[no-untyped-def]
    memory = Memory(settings=settings.model_copy(update={"embedding_model": "hash"}))
    memory.remember("erin", "I live in Porto.")
    return memory


@pytest.mark.parametrize(("error", "status", "kind"), TYPED)
def test_each_refusal_of_the_core_has_its_status_and_its_message(settings, monkeypatch, error, status, kind) -> None:
    memory = memory_of(settings)

    def refuse(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise error(f"the core says no ({error.__name__})")

    monkeypatch.setattr(Memory, "facts", refuse)
    with TestClient(create_app(memory, warm=False)) as client:
        answer = client.get("/v1/memory/facts", params={"agent_id": "erin"})
    assert answer.status_code == status, answer.text
    assert answer.json()["error"] == {"message": f"the core says no ({error.__name__})", "type": kind}


@pytest.mark.parametrize("bug", [ValueError("an invariant broke: 3 rows for one key"), KeyError("slot"),
                                 TypeError("unsupported operand")])
def test_a_bug_in_the_core_is_a_logged_500_not_the_callers_400(settings, monkeypatch, caplog, bug) -> None:
    memory = memory_of(settings)

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise bug

    monkeypatch.setattr(Memory, "facts", broken)
    with caplog.at_level(logging.ERROR, logger="memlake.service"), \
            TestClient(create_app(memory, warm=False), raise_server_exceptions=False) as client:
        answer = client.get("/v1/memory/facts", params={"agent_id": "erin"})
    assert answer.status_code == 500, answer.text
    error = answer.json()["error"]
    assert error["type"] == "server_error" and error["message"].startswith(type(bug).__name__)
    assert "see the service log" in error["message"] and str(bug) not in error["message"]  # short, no internals
    logged = [r for r in caplog.records if r.levelno >= logging.ERROR and "/v1/memory/facts" in r.getMessage()]
    assert logged and logged[0].exc_info is not None and logged[0].exc_info[1] is bug  # the trace is in the log


def test_real_refusals_of_the_core_have_their_statuses(settings) -> None:
    """Not a stub's: a profile version the agent does not have is not found (was a 400); a search whose index is
    gone while the lake holds what it is built from is unavailable until rebuilt (was a 400); a context budget
    below the one bound is the caller's 400, over HTTP as in `Memory`."""
    memory = memory_of(settings)
    with TestClient(create_app(memory, warm=False), headers={"X-Memlake-Agent-Id": "erin"}) as client:
        missing = client.get("/v1/memory/profile", params={"version": 7})
        assert missing.status_code == 404 and "no profile version 7" in missing.json()["error"]["message"]
        assert client.post("/v1/memory/context", json={"query": "Where do I live?", "budget": 10}).status_code == 422
        with pytest.raises(BadRequest, match="budget"):
            memory.context("Where do I live?", "erin", budget=10)
        with pytest.raises(NotFound, match="no profile version 7"):
            memory.profile("erin", 7)


def test_a_search_whose_index_is_gone_is_unavailable_saying_how_to_rebuild_it(settings, run_pipeline) -> None:
    from tests.conftest import land
    from tests.transcripts.helpers import jsonl, msg

    land(settings, "erin", "chat.jsonl", jsonl(msg("c1", 0, "user", "I keep bees in Porto.", "2024-03-01")))
    assert run_pipeline().success
    shutil.rmtree(settings.lancedb_dir)
    memory = Memory(settings=settings.model_copy(update={"embedding_model": "hash"}))
    with TestClient(create_app(memory, warm=False), headers={"X-Memlake-Agent-Id": "erin"}) as client:
        answer = client.get("/v1/memory/search", params={"q": "bees"})
    assert answer.status_code == 503, answer.text
    assert "memlake reindex" in answer.json()["error"]["message"]


def test_the_memory_tools_refuse_with_the_type_and_report_a_bug_as_internal(settings, monkeypatch, caplog) -> None:
    memory = memory_of(settings)
    tools = MemoryTools(memory, "erin")
    refused = tools.call("forget", {"fact_id": "f_nope"})["error"]
    assert refused == {"kind": "refused", "refusal": "not_found", "message": refused["message"]}
    assert "has no fact 'f_nope'" in refused["message"]

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise ValueError("an invariant broke")

    monkeypatch.setattr(Memory, "facts", broken)
    with caplog.at_level(logging.ERROR, logger="memlake.tools"):
        failed = tools.call("list", {})["error"]
    assert failed["kind"] == "internal" and "an invariant broke" not in failed["message"]
    assert any(r.exc_info and "list" in r.getMessage() for r in caplog.records)


def test_the_mcp_context_tool_refuses_with_the_type_and_reports_a_bug_as_internal(
        settings, monkeypatch, caplog) -> None:
    memory = memory_of(settings)
    too_small = context_call(memory, "erin", {"query": "Where do I live?", "budget": 10})
    assert too_small["ok"] is False and too_small["error"]["kind"] == "refused"
    assert too_small["error"]["refusal"] == "bad_request" and "budget" in too_small["error"]["message"]

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise KeyError("section")

    monkeypatch.setattr(Memory, "_build_context", broken)
    with caplog.at_level(logging.ERROR):
        failed = context_call(memory, "erin", {"query": "Where do I live?"})
    assert failed["ok"] is False and failed["error"]["kind"] == "internal"
    assert any(r.exc_info for r in caplog.records)


@pytest.mark.parametrize(("budget", "taken"), [(49, False), (50, True), (100_000, True), (100_001, False),
                                               (0, False), (True, False)])
def test_a_context_budget_has_one_bound_in_memory_http_and_mcp(settings, budget, taken) -> None:
    """The bound was stated three times and disagreed (`Memory` >= 1, HTTP 1..100,000, MCP 50..100,000): a budget
    of 10 was refused by MCP's schema, taken by HTTP, and refused by the block builder as too small."""
    from service.mcp_server import CONTEXT_TOOL

    memory = memory_of(settings)
    question = "Where do I live?"
    schema = CONTEXT_TOOL["parameters"]["properties"]["budget"]  # type: ignore[index]
    assert (schema["minimum"], schema["maximum"]) == (50, 100_000)
    by_mcp = context_call(memory, "erin", {"query": question, "budget": budget})
    with TestClient(create_app(memory, warm=False)) as client:
        by_http = client.post("/v1/memory/context", json={"query": question, "budget": budget, "agent_id": "erin"})
        bounds = client.get("/openapi.json").json()["components"]["schemas"]["ContextRequest"]["properties"]["budget"]
    assert bounds["anyOf"][0]["minimum"] == 50 and bounds["anyOf"][0]["maximum"] == 100_000
    if taken:
        assert memory.context(question, "erin", budget=budget).token_count <= budget
        assert by_http.status_code == 200 and by_mcp["ok"] is True
    else:
        with pytest.raises(BadRequest, match="a context budget must be a whole number from 50 to 100,000"):
            memory.context(question, "erin", budget=budget)
        assert by_http.status_code == 422, by_http.text
        assert by_mcp["ok"] is False and "from 50 to 100,000" in by_mcp["error"]["message"]
