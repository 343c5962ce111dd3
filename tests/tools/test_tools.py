"""The memory tools: their OpenAI schemas, and the dispatcher that runs them for one agent over `Memory`."""

from __future__ import annotations

import json

import jsonschema
import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from memlake.api import Memory
from memlake.tools import TOOLS, BadArguments, MemoryTools, check_arguments
from tests.conftest import land_samples
from tests.search.helpers import build_home, hash_memory

SCHEMAS = {tool["function"]["name"]: tool["function"]["parameters"] for tool in TOOLS}

# Calls a model may send: each must fit its schema and be run by the dispatcher (every property given, as strict
# mode sends them).
GOOD = [
    ("recall", {"query": "where does the user live", "scope": "facts", "limit": 5, "since": None, "until": None}),
    ("recall", {"query": "tea", "scope": "all", "limit": None, "since": "2024-01-01", "until": "2024-12-31"}),
    ("recall", {"query": "tea", "scope": "transcript", "limit": 3.0, "since": None, "until": None}),
    ("store", {"content": "The user is vegan.", "type": "preference", "subject": None, "slot": "diet",
               "value": "vegan", "tags": ["food"], "importance": 0.9, "replaces": None}),
    ("store", {"content": "I moved to Paris.", "type": None, "subject": None, "slot": None, "value": None,
               "tags": None, "importance": None, "replaces": None}),
    ("forget", {"fact_id": None, "query": "vegan", "confirm": None, "fact_ids": None, "reason": None}),
    ("list", {"type": "preference", "tag": "food", "since": "2020-01-01", "until": None, "include_history": True,
              "limit": 50}),
]

# Calls the schema refuses; the dispatcher must refuse each too, with a message.
BAD = [
    ("recall", {"scope": "facts"}, "needs the argument 'query'"),
    ("recall", {"query": "tea", "scope": "everything"}, "scope: expected one of"),
    ("recall", {"query": 42, "scope": "facts"}, "query: expected string"),
    ("recall", {"query": "tea", "scope": "facts", "limit": 500}, "limit: at most 50"),
    ("recall", {"query": "tea", "scope": "facts", "limit": 2.5}, "limit: expected integer"),
    ("recall", {"query": "tea", "scope": "facts", "limit": True}, "limit: expected integer"),
    ("recall", {"query": "tea", "scope": "facts", "agent_id": "bob"}, "the agent is fixed"),
    ("store", {"content": "x", "type": "rumour"}, "type: expected one of"),
    ("store", {"content": "x", "tags": ["ok", 3]}, "tags: a list of strings"),
    ("store", {"content": "x", "importance": 2}, "importance: at most 1"),
    ("forget", {"fact_id": "f_1", "confirm": "yes"}, "confirm: expected boolean"),
    ("list", {"include_history": 1}, "include_history: expected boolean"),
]


def test_every_tool_is_an_openai_function_with_a_strict_valid_json_schema() -> None:
    assert [tool["function"]["name"] for tool in TOOLS] == ["recall", "store", "forget", "list"]
    for tool in TOOLS:
        assert tool["type"] == "function" and tool["function"]["strict"] is True
        assert tool["function"]["description"]
        parameters = tool["function"]["parameters"]
        jsonschema.Draft202012Validator.check_schema(parameters)
        # strict mode: every property listed as required, nothing else allowed
        assert parameters["required"] == list(parameters["properties"])
        assert parameters["additionalProperties"] is False
        json.dumps(tool)  # sent to the model as JSON


@pytest.mark.parametrize(("name", "arguments"), GOOD, ids=[f"{n}-{i}" for i, (n, _) in enumerate(GOOD)])
def test_a_call_the_schema_accepts_is_run(settings, name: str, arguments: dict) -> None:
    jsonschema.validate(arguments, SCHEMAS[name])
    result = MemoryTools(hash_memory(settings), "ann").call(name, json.dumps(arguments))
    assert result["ok"] is True, result
    json.dumps(result)


@pytest.mark.parametrize(("name", "arguments", "message"), BAD, ids=[m for _, _, m in BAD])
def test_a_call_the_schema_refuses_is_refused_with_a_message(settings, name: str, arguments: dict,
                                                              message: str) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(arguments, SCHEMAS[name])
    result = MemoryTools(hash_memory(settings), "ann").call(name, arguments)
    assert result["ok"] is False and result["error"]["kind"] == "bad_arguments"
    assert message in result["error"]["message"]


# Any JSON value an argument might hold, the schema's own enum values included so that valid calls come up too.
JSON_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-100, 100), st.floats(-2, 200, allow_nan=False),
    st.integers(-2, 60).map(float),
    st.sampled_from(["facts", "all", "preference", "tea", "2024-01-01", ""]), st.text(max_size=5),
    st.lists(st.one_of(st.text(max_size=3), st.integers()), max_size=3),
)


@hypothesis_settings(max_examples=300, deadline=None)
@given(call=st.sampled_from(GOOD), data=st.data())
def test_the_dispatcher_accepts_exactly_what_the_schema_accepts(call: tuple[str, dict], data: st.DataObject) -> None:
    name, arguments = call[0], dict(call[1])  # a good call with some arguments changed to any JSON value
    for key in data.draw(st.lists(st.sampled_from(list(arguments)), max_size=2), label="changed"):
        arguments[key] = data.draw(JSON_VALUES, label=key)
    if data.draw(st.booleans(), label="an extra argument"):
        arguments["agent_id"] = "bob"
    try:
        check_arguments(name, arguments)
        accepted = True
    except BadArguments:
        accepted = False
    assert accepted == jsonschema.Draft202012Validator(SCHEMAS[name]).is_valid(arguments)


@pytest.mark.parametrize(
    ("name", "arguments", "kind", "message"),
    [
        ("recall", '{"query": "tea", "scope":', "bad_arguments", "not valid JSON"),
        ("recall", "[1, 2]", "bad_arguments", "a JSON object, got list"),
        ("store", '{"content": "x", "importance": NaN}', "bad_arguments", "NaN is not a JSON number"),
        # a user trial's: Python's parser recursed per level, and the call was an "internal" failure
        ("recall", '{"query": ' + "[" * 100_000 + "]" * 100_000 + "}", "bad_arguments", "nested too deeply"),
        ("store", {"content": "x", "importance": float("nan")}, "bad_arguments", "importance: expected number"),
        ("remember", {"content": "x"}, "unknown_tool", "the tools are recall, store, forget, list"),
        ("recall", {"query": "  ", "scope": "facts"}, "refused/bad_request", "needs words"),
        ("list", {"since": "last tuesday"}, "refused/bad_request", "last tuesday"),
        ("forget", {}, "bad_arguments", "exactly one of fact_id and query"),
        ("forget", {"fact_id": "f_1", "query": "tea"}, "bad_arguments", "exactly one of fact_id and query"),
        ("forget", {"query": "tea", "confirm": True}, "bad_arguments", "needs the fact_ids"),
        ("forget", {"fact_id": "f_nope"}, "refused/not_found", "has no fact 'f_nope'"),
    ],
)
def test_bad_input_is_an_error_result_not_an_exception(settings, name, arguments, kind, message) -> None:
    result = MemoryTools(hash_memory(settings), "ann").call(name, arguments)
    kind, _, refusal = kind.partition("/")  # what memlake refused says its type (memlake.errors) as `refusal`
    error = {"kind": kind, "message": result["error"]["message"], **({"refusal": refusal} if refusal else {})}
    assert result == {"ok": False, "tool": name, "error": error}
    assert message in result["error"]["message"]


def test_a_failure_inside_memory_is_an_error_result_without_a_traceback(settings, monkeypatch) -> None:
    memory = hash_memory(settings)

    def broken(*args, **kwargs):
        raise OSError("disk gone at /secret/path")

    monkeypatch.setattr(memory, "search", broken)
    result = MemoryTools(memory, "ann").call("recall", {"query": "tea", "scope": "facts"})
    assert result["ok"] is False and result["error"]["kind"] == "internal"
    assert "Traceback" not in result["error"]["message"] and "/secret/path" not in result["error"]["message"]


def test_store_recall_list_then_forget_by_query_with_a_preview_then_confirm(settings) -> None:
    tools = MemoryTools(hash_memory(settings), "ann")
    stored = tools.call("store", {"content": "I moved to Paris.", "tags": ["home"]})["stored"]
    tools.call("store", {"content": "I like oolong tea.", "type": "preference"})
    paris = stored[0]["fact_id"]

    hits = tools.call("recall", {"query": "Paris", "scope": "facts"})["results"]
    assert hits[0]["fact_id"] == paris and hits[0]["source"] == "fact" and "Paris" in hits[0]["text"]
    assert {"conversation_id", "message_ids", "created_at"} <= set(hits[0])
    listed = tools.call("list", {"tag": "home"})
    assert listed["total"] == 1 and listed["facts"][0]["fact_id"] == paris

    preview = tools.call("forget", {"query": "Paris"})
    assert preview["preview"] is True and preview["fact_ids"] == [paris]
    assert [(f["fact_id"], f["version"]) for f in preview["would_forget"]] == [(paris, 1)]
    assert {f["fact_id"] for f in tools.call("list", {})["facts"]} >= {paris}, "a preview forgets nothing"

    done = tools.call("forget", {"query": "Paris", "confirm": True, "fact_ids": [paris]})
    assert [(f["fact_id"], f["version"]) for f in done["forgotten"]] == [(paris, 1)]
    remaining = tools.call("list", {})["facts"]
    assert [f["content"] for f in remaining] == ["I like oolong tea."]
    assert all(hit["fact_id"] != paris for hit in tools.call("recall", {"query": "Paris", "scope": "facts"})["results"])


def test_the_preview_shows_every_version_that_a_confirm_then_forgets(settings) -> None:
    tools = MemoryTools(hash_memory(settings), "ann")
    tools.call("store", {"content": "I moved to Paris."})
    tools.call("store", {"content": "I moved to Berlin."})  # the same slot: Paris is kept as history

    preview = tools.call("forget", {"query": "Berlin"})
    shown = {(f["fact_id"], f["version"], f["value"]) for f in preview["would_forget"]}
    assert {value for _, _, value in shown} == {"Paris", "Berlin"}
    done = tools.call("forget", {"query": "Berlin", "confirm": True, "fact_ids": preview["fact_ids"]})
    assert {(f["fact_id"], f["version"], f["value"]) for f in done["forgotten"]} == shown
    assert tools.call("list", {"include_history": True})["total"] == 0


def test_a_confirm_with_other_ids_than_the_query_matches_forgets_nothing(settings) -> None:
    tools = MemoryTools(hash_memory(settings), "ann")
    paris = tools.call("store", {"content": "I moved to Paris."})["stored"][0]["fact_id"]
    tea = tools.call("store", {"content": "I like oolong tea.", "type": "preference"})["stored"][0]["fact_id"]

    result = tools.call("forget", {"query": "Paris", "confirm": True, "fact_ids": [paris, tea]})
    assert result["ok"] is False and "nothing was forgotten" in result["error"]["message"]
    assert {f["fact_id"] for f in tools.call("list", {})["facts"]} == {paris, tea}


def test_every_call_stays_with_the_tools_agent(settings) -> None:
    memory = hash_memory(settings)
    bob = MemoryTools(memory, "bob")
    secret = bob.call("store", {"content": "Bob's launch code is ZEBRA-991."})["stored"][0]["fact_id"]
    alice = MemoryTools(memory, "alice")
    alice.call("store", {"content": "I like oolong tea.", "type": "preference"})

    recalled = alice.call("recall", {"query": "ZEBRA", "scope": "all"})["results"]
    assert all("ZEBRA" not in hit["text"] for hit in recalled)
    assert [f["content"] for f in alice.call("list", {})["facts"]] == ["I like oolong tea."]
    assert alice.call("forget", {"query": "ZEBRA launch code"})["fact_ids"] == []
    refused = alice.call("forget", {"fact_id": secret})
    assert refused["ok"] is False and "has no fact" in refused["error"]["message"]
    assert alice.call("list", {"agent_id": "bob"})["ok"] is False
    assert [f["fact_id"] for f in bob.call("list", {})["facts"]] == [secret], "bob's fact is still there"


def test_tools_for_an_invalid_agent_id_are_refused_at_construction(settings) -> None:
    with pytest.raises(ValueError, match="invalid agent id"):
        MemoryTools(Memory(settings=settings), "../bob")


@pytest.fixture(scope="module")
def chats(tmp_path_factory):
    """A home of alice's and bob's chats, run through the pipeline (read only)."""
    return build_home(tmp_path_factory)


def test_recall_of_the_transcript_gives_turns_with_their_provenance(chats) -> None:
    tools = MemoryTools(hash_memory(chats), "alice")
    hits = tools.call("recall", {"query": "oolong tea", "scope": "transcript", "limit": 3})["results"]
    assert hits and hits[0]["source"] == "transcript" and "oolong" in hits[0]["text"]
    assert hits[0]["conversation_id"] == "tea" and hits[0]["message_ids"] and hits[0]["created_at"].startswith("2024")
    assert all("ZEBRA" not in hit["text"] for hit in hits)


def test_recall_of_all_merges_the_scopes_up_to_the_limit(chats) -> None:
    tools = MemoryTools(hash_memory(chats), "alice")
    hits = tools.call("recall", {"query": "oolong tea", "scope": "all", "limit": 4})["results"]
    assert 0 < len(hits) <= 4
    assert {"episode", "transcript"} <= {hit["source"] for hit in hits}, "each scope has its turn"
    assert all(hit["conversation_id"] != "secret" for hit in hits)


def test_recall_of_all_ranks_a_fresh_override_by_relevance_not_first(tmp_path_factory) -> None:
    home = build_home(tmp_path_factory)
    memory = hash_memory(home)
    memory.remember("alice", "My favourite colour is green.")
    tools = MemoryTools(memory, "alice")

    unrelated = tools.call("recall", {"query": "oolong tea", "scope": "all", "limit": 5})["results"]
    assert "oolong" in unrelated[0]["text"].lower(), unrelated[0]
    assert all("colour" not in hit["text"] for hit in unrelated[:2])

    related = tools.call("recall", {"query": "what is my favourite colour", "scope": "all", "limit": 5})["results"]
    assert "colour is green" in related[0]["text"]


def test_recall_of_the_graph_gives_the_entities_and_relations_named_with_their_sources(settings, run_pipeline) -> None:
    land_samples(settings)
    assert run_pipeline().success
    tools = MemoryTools(Memory(settings=settings), "demo")
    found = tools.call("recall", {"query": "Leela", "scope": "graph", "limit": 5})
    assert found["scope"] == "graph" and found["results"]
    assert {"source", "text", "kind", "conversation_id", "message_ids"} <= set(found["results"][0])
    assert any(hit["text"].startswith("Leela") and hit["message_ids"] for hit in found["results"])
    refused = tools.call("recall", {"query": "Leela", "scope": "graph", "since": "2024-01-01"})
    assert not refused["ok"] and "since" in refused["error"]["message"]
