"""The REST API of `memlake serve`: each endpoint reads or writes the asked agent's memory through `Memory`, and a
mistake in a request is a 4xx that says what is wrong."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile

import pyarrow.parquet as pq
import pytest
from starlette.testclient import TestClient

from memlake.api import Memory
from service.app import create_app
from tests.service.conftest import CANARIES, Served
from tests.transcripts.helpers import jsonl, msg


def error_of(response) -> str:  # type: ignore[no-untyped-def]
    body = response.json()
    assert set(body) == {"error"} and body["error"]["message"], body
    return str(body["error"]["message"])


def test_health_and_the_callers_agents(served: Served) -> None:
    assert served.client().get("/healthz").json() == {"status": "ok", "tokens": True}
    agents = served.client(served.tokens["alice+carol"]).get("/agents").json()["agents"]
    assert [a["agent_id"] for a in agents] == ["alice", "carol"] and all(a["has_turns"] for a in agents)


def test_search_context_and_reads_of_the_agent(served: Served) -> None:
    alice = served.client(served.tokens["alice"])
    found = alice.get("/v1/memory/search", params={"q": "gym locker code"}).json()
    assert found["agent_id"] == "alice" and found["count"] > 0 and found["mode"] == "hybrid"
    assert any(CANARIES["alice"][0] in row["text"] for row in found["rows"])
    assert all(row["conversation_id"] and row["message_ids"] for row in found["rows"])
    block = alice.post("/v1/memory/context", json={"query": "What is my passphrase?"}).json()
    assert CANARIES["alice"][1] in block["text"] and block["token_count"] <= block["budget"]
    assert block["provenance"] and block["gate"]["section"]
    facts = alice.get("/v1/memory/facts").json()
    assert any(CANARIES["alice"][1] in row["content"] for row in facts["rows"])
    fact_id = next(row["fact_id"] for row in facts["rows"] if CANARIES["alice"][1] in row["content"])
    assert alice.get(f"/v1/memory/history/{fact_id}").json()["count"] >= 1
    assert alice.get("/v1/memory/episodes").status_code == 200
    assert alice.get("/v1/memory/profile").status_code == 200
    json.dumps(found), json.dumps(facts)


def test_remember_reject_and_forget_a_fact(served: Served) -> None:
    alice = served.client(served.tokens["alice"])
    made = alice.post("/v1/memory/remember", json={"content": "My favourite colour is teal."}).json()
    fact_id = made["rows"][0]["fact_id"]
    assert any(r["fact_id"] == fact_id for r in alice.get("/v1/memory/facts").json()["rows"])
    gone = alice.post("/v1/memory/forget", json={"fact_id": fact_id, "reason": "test"}).json()
    assert gone["count"] >= 1
    assert not any(r["fact_id"] == fact_id for r in alice.get("/v1/memory/facts").json()["rows"])
    refused = alice.post("/v1/memory/reject", json={"fact_id": "f_no_such_fact"})
    # no such fact is not found (memlake.errors.NotFound), as a fact's history says; it was a 400 as every ValueError
    assert refused.status_code == 404 and "has no fact 'f_no_such_fact'" in error_of(refused)


def test_the_memory_tools_for_a_function_calling_agent(served: Served) -> None:
    alice = served.client(served.tokens["alice"])
    assert [t["function"]["name"] for t in alice.get("/v1/memory/tools").json()["tools"]] == [
        "recall", "store", "forget", "list"]
    recalled = alice.post("/v1/memory/tools", json={
        "name": "recall", "arguments": json.dumps({"query": "passphrase", "scope": "all"})}).json()
    assert recalled["ok"] is True and recalled["results"]
    crossing = alice.post("/v1/memory/tools", json={
        "name": "recall", "arguments": {"query": "passphrase", "scope": "all", "agent_id": "bob"}}).json()
    assert crossing["ok"] is False and "the agent is fixed" in crossing["error"]["message"]


def test_ingest_lands_a_file_the_parser_reads_and_says_it_waits(served: Served) -> None:
    alice = served.client(served.tokens["alice"])
    accepted = alice.post("/memory/ingest", json={
        "agent_id": "alice", "conversation_id": "api-1", "session_date": "2024-04-01T09:00:00Z",
        "turns": [{"user": "I adopted a cat named Miso.", "assistant": "Congratulations!"}]})
    assert accepted.status_code == 202, accepted.text
    body = accepted.json()
    landed = served.home / "landing" / body["file"]
    assert json.loads(landed.read_text())["turns"][0]["user"] == "I adopted a cat named Miso."
    assert not [p for p in landed.parent.iterdir() if p.name.startswith(".")]  # no temp file left
    status = alice.get(f"/memory/ingest/{body['ingest_id']}").json()
    assert status["state"] == "waiting" and status["searchable"] is False
    assert served.client(served.tokens["bob"]).get(
        f"/memory/ingest/{body['ingest_id']}", params={"agent_id": "alice"}).status_code == 403
    assert served.client(served.tokens["bob"]).get(f"/memory/ingest/{body['ingest_id']}").status_code == 404


@pytest.mark.parametrize(("method", "path", "kwargs", "status", "message"), [
    ("post", "/memory/ingest", {"json": {"agent_id": "alice", "conversation_id": "c", "turns": []}}, 422,
     "turns"),
    ("post", "/memory/ingest", {"json": {"agent_id": "alice", "conversation_id": "c", "turns": [{"user": " "}]}},
     400, "no turn with text"),
    ("post", "/memory/ingest", {"json": {"agent_id": "alice", "conversation_id": "c", "turns": [{"user": "x"}],
                                         "session_date": "last tuesday"}}, 422, "session_date"),
    ("get", "/v1/memory/search", {"params": {"q": "tea", "scope": "everything"}}, 422, "scope"),
    ("get", "/v1/memory/search", {"params": {"q": "tea", "as_of": "someday"}}, 422, "as_of"),
    ("get", "/v1/memory/search", {"params": {"q": "tea", "since": "2024-05-01", "until": "2024-04-01"}}, 400,
     "is not before until"),
    ("get", "/v1/memory/facts", {"params": {"type": "rumour"}}, 400, "unknown fact type"),
    ("post", "/v1/memory/context", {"json": {"query": "tea", "budget": 3}}, 422, "budget"),
    ("post", "/v1/memory/context", {"content": b"{not json", "headers": {"content-type": "application/json"}},
     422, "JSON"),
    ("post", "/v1/memory/remember", {"json": {"content": "x", "agent_id": "alice", "surprise": 1}}, 422,
     "surprise"),
    ("post", "/v1/chat/completions", {"json": {"model": "echo", "messages": "hello"}}, 400, "messages"),
    ("post", "/v1/memory/context", {"json": {"query": "tea"}, "headers": {"X-Memlake-Agent-Id": "bob"}}, 403,
     "may not use agent 'bob'"),
    ("post", "/v1/memory/context", {"json": {"query": "tea", "agent_id": "carol"},
                                    "headers": {"X-Memlake-Agent-Id": "alice"}}, 400, "two agents"),
])
def test_a_bad_request_is_a_4xx_that_says_why(served: Served, method: str, path: str, kwargs: dict, status: int,
                                              message: str) -> None:
    token = served.tokens["alice" if status != 400 or "two agents" not in message else "alice+carol"]
    response = getattr(served.client(token), method)(path, **kwargs)
    assert response.status_code == status, response.text
    assert message.lower() in error_of(response).lower()


def test_which_agent_must_be_said_when_the_token_has_several(served: Served) -> None:
    response = served.client(served.tokens["alice+carol"]).get("/v1/memory/facts")
    assert response.status_code == 400 and "which agent" in error_of(response)


def test_no_or_a_wrong_token_is_refused(served: Served) -> None:
    for client in (served.client(), served.client("mlk_wrong"), served.client(served.tokens["alice"] + "x")):
        response = client.get("/v1/memory/facts", params={"agent_id": "alice"})
        assert response.status_code == 401 and "bearer token" in error_of(response)


def test_a_body_over_the_bound_is_refused_before_it_is_read(served: Served) -> None:
    huge = {"agent_id": "alice", "conversation_id": "big", "turns": [{"user": "x" * 1_100_000}]}
    response = served.client(served.tokens["alice"]).post("/memory/ingest", json=huge)
    assert response.status_code == 413 and "over" in error_of(response)


def test_the_openapi_schema_is_served(served: Served) -> None:
    schema = served.client().get("/openapi.json").json()
    assert {"/v1/memory/search", "/v1/memory/context", "/memory/ingest", "/v1/chat/completions"} <= set(
        schema["paths"])


def test_ingest_answers_under_v1_as_every_memory_route_does_and_the_old_route_stays(settings) -> None:
    """Every memory route was under /v1 but /memory/ingest: the README's own `openai` client (base_url .../v1)
    got a 404 there. /v1/memory/ingest now answers as /memory/ingest does, which stays for older callers."""
    from openai import OpenAI

    memory = Memory(settings=settings.model_copy(update={"embedding_model": "hash"}))
    conversation = {"agent_id": "dora", "conversation_id": "c1", "session_date": "2024-04-01",
                    "turns": [{"user": "My sister lives in Lisbon.", "assistant": "Nice city."}]}
    with TestClient(create_app(memory, warm=False)) as client:
        client.base_url = client.base_url.join("/v1")  # as the openai SDK joins its paths
        sdk = OpenAI(base_url=str(client.base_url), api_key="-", http_client=client)
        landed = sdk.post("/memory/ingest", cast_to=object, body=conversation)
        assert landed["state"] == "waiting" and landed["agent_id"] == "dora"
        state = sdk.get(f"/memory/ingest/{landed['ingest_id']}", cast_to=object, options={"params": {
            "agent_id": "dora"}})
        assert state["state"] == "waiting"
        client.base_url = client.base_url.join("/")
        old = client.post("/memory/ingest", json={**conversation, "conversation_id": "c2"})
        assert old.status_code == 202 and old.json()["state"] == "waiting"
        v1_bad = client.post("/v1/memory/ingest", json={**conversation, "turns": []})
        old_bad = client.post("/memory/ingest", json={**conversation, "turns": []})
        assert v1_bad.status_code == old_bad.status_code == 422 and v1_bad.json() == old_bad.json()
        paths = client.get("/openapi.json").json()["paths"]
    assert {"/v1/memory/ingest", "/v1/memory/ingest/{ingest_id}", "/memory/ingest"} <= set(paths)
    assert len(list((settings.landing_dir / "dora").iterdir())) == 2


def test_an_ingest_is_read_by_the_next_run_then_searchable_or_quarantined_with_the_reason(
        settings, run_pipeline) -> None:
    memory = Memory(settings=settings.model_copy(update={"embedding_model": "hash"}))
    with TestClient(create_app(memory, warm=False)) as client:  # no tokens in this home: every agent
        good = client.post("/memory/ingest", json={
            "agent_id": "dora", "conversation_id": "c1", "session_date": "2024-04-01",
            "turns": [{"user": "My sister lives in Lisbon.", "assistant": "Nice city."}]}).json()
        undated = client.post("/memory/ingest", json={  # no session_date: held when the request came
            "agent_id": "dora", "conversation_id": "c3", "turns": [{"user": "I play the cello.", "assistant": "Nice."}]
        }).json()
        broken = settings.landing_dir / "dora" / "ingest-20240401T000000-0123456789ab.json"
        broken.write_text('{"agent_id": "dora", "conversation_id": "c2", "turns": "not a list"}')
        assert run_pipeline().success
        status = client.get(f"/memory/ingest/{good['ingest_id']}", params={"agent_id": "dora"}).json()
        assert status["state"] == "ingested" and status["searchable"] is True
        assert status["conversation_ids"]
        assert client.get(f"/memory/ingest/{undated['ingest_id']}", params={"agent_id": "dora"}).json()[
            "state"] == "ingested"
        refused = client.get("/memory/ingest/20240401T000000-0123456789ab", params={"agent_id": "dora"}).json()
        assert refused["state"] == "quarantined" and "turns" in refused["reason"]
        found = client.get("/v1/memory/search", params={"q": "sister Lisbon", "agent_id": "dora"}).json()
        assert any("Lisbon" in row["text"] for row in found["rows"])


def test_without_tokens_every_agent_is_open_on_loopback(settings) -> None:
    land = settings.landing_dir / "erin"
    land.mkdir(parents=True)
    (land / "chat.jsonl").write_text(jsonl(msg("c", 0, "user", "hello")))
    memory = Memory(settings=settings.model_copy(update={"embedding_model": "hash"}))
    with TestClient(create_app(memory, warm=False)) as client:
        assert client.get("/healthz").json()["tokens"] is False
        assert client.get("/v1/memory/facts", params={"agent_id": "erin"}).status_code == 200


def test_a_read_of_an_agent_with_no_memory_is_a_404_naming_it_not_an_empty_answer(settings) -> None:
    """A mistyped agent id got 200 with no hits: the caller could not tell a typo from an empty answer."""
    memory = Memory(settings=settings.model_copy(update={"embedding_model": "hash"}))
    memory.remember("erin", "I live in Porto.")
    with TestClient(create_app(memory, warm=False)) as client:
        reads = [("get", "/v1/memory/search", {"params": {"q": "Porto", "agent_id": "eirn"}}),
                 ("get", "/v1/memory/facts", {"params": {"agent_id": "eirn"}}),
                 ("get", "/v1/memory/episodes", {"params": {"agent_id": "eirn"}}),
                 ("get", "/v1/memory/profile", {"params": {"agent_id": "eirn"}}),
                 ("get", "/v1/memory/history/f_1", {"params": {"agent_id": "eirn"}}),
                 ("post", "/v1/memory/context", {"json": {"query": "Where do I live?", "agent_id": "eirn"}})]
        for method, path, kwargs in reads:
            refused = getattr(client, method)(path, **kwargs)
            assert refused.status_code == 404, (path, refused.text)
            assert "agent 'eirn' has no memory here" in error_of(refused)
        # the agent that exists: no hits is an empty answer, not an error
        empty = client.get("/v1/memory/episodes", params={"agent_id": "erin"})
        assert empty.status_code == 200 and empty.json()["count"] == 0
        # a write creates memory for a new agent
        made = client.post("/v1/memory/remember", json={"content": "I play the cello.", "agent_id": "gina"})
        assert made.status_code == 200
        assert client.get("/v1/memory/facts", params={"agent_id": "gina"}).json()["count"] == 1


def test_an_export_is_the_agents_memory_as_one_archive_and_only_its_own(settings) -> None:
    memory = Memory(settings=settings.model_copy(update={"embedding_model": "hash"}))
    memory.remember("erin", "I live in Porto.")
    memory.remember("gina", "I play the cello.")
    with TestClient(create_app(memory, warm=False)) as client:
        response = client.get("/v1/memory/export", params={"agent_id": "erin"})
        assert response.status_code == 200, response.text
        assert response.headers["content-type"] == "application/gzip"
        assert 'filename="erin.tar.gz"' in response.headers["content-disposition"]
        with tarfile.open(fileobj=io.BytesIO(response.content)) as packed:
            manifest = json.load(packed.extractfile("manifest.json"))  # type: ignore[arg-type]
            remembered = pq.read_table(packed.extractfile("inputs/overrides.parquet"))  # type: ignore[arg-type]
        assert manifest["agent_id"] == "erin" and manifest["tables"]["inputs/overrides"]["rows"] == 1
        assert remembered.column("content").to_pylist() == ["The user lives in Porto."]
        as_zip = client.get("/v1/memory/export", params={"agent_id": "gina", "format": "zip"})
        assert as_zip.headers["content-type"] == "application/zip"
        assert json.loads(zipfile.ZipFile(io.BytesIO(as_zip.content)).read("manifest.json"))["agent_id"] == "gina"
        assert client.get("/v1/memory/export", params={"agent_id": "erin", "format": "rar"}).status_code == 422
        unknown = client.get("/v1/memory/export", params={"agent_id": "eirn"})
        assert unknown.status_code == 404 and "agent 'eirn' has no memory here" in error_of(unknown)


def test_the_history_of_a_fact_the_agent_does_not_have_is_a_404_naming_both(settings) -> None:
    """An unknown fact id got 200 with no versions while the CLI said the fact does not exist: a mistyped id
    looked like a fact without history."""
    memory = Memory(settings=settings.model_copy(update={"embedding_model": "hash"}))
    erins = memory.remember("erin", "I live in Porto.")["fact_id"][0]
    ginas = memory.remember("gina", "I play the cello.")["fact_id"][0]
    with TestClient(create_app(memory, warm=False)) as client:
        assert client.get(f"/v1/memory/history/{erins}", params={"agent_id": "erin"}).json()["count"] == 1
        for fact_id in ("f_no_such_fact", ginas):  # another agent's fact reads as an unknown one
            refused = client.get(f"/v1/memory/history/{fact_id}", params={"agent_id": "erin"})
            assert refused.status_code == 404, refused.text
            assert f"agent 'erin' has no fact {fact_id!r}" in error_of(refused)
        schema = client.get("/openapi.json").json()
    refusal = schema["paths"]["/v1/memory/history/{fact_id}"]["get"]["responses"]["404"]
    assert "fact" in refusal["description"]
    assert refusal["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorResponse")


@pytest.mark.parametrize("session_date", ["9999-12-31T23:59:59Z", "0001-01-01", "2014-12-31", "2099-01-01"])
def test_an_ingest_the_next_run_would_quarantine_for_its_date_is_refused_now(settings, session_date) -> None:
    """A user trial's ingests dated 9999-12-31 and 0001-01-01 got 202 "waiting" and were quarantined by the next
    run: the date range the run holds (partition_start_date to today) is checked before anything lands."""
    memory = Memory(settings=settings.model_copy(update={"embedding_model": "hash"}))
    with TestClient(create_app(memory, warm=False)) as client:
        refused = client.post("/memory/ingest", json={
            "agent_id": "dora", "conversation_id": "c1", "session_date": session_date,
            "turns": [{"user": "My sister lives in Lisbon.", "assistant": "Nice city."}]})
    assert refused.status_code == 400, refused.text
    assert f"is outside {settings.partition_start_date}.." in error_of(refused)
    assert not (settings.landing_dir / "dora").exists() or not list((settings.landing_dir / "dora").iterdir())


def test_an_ingest_takes_its_agent_from_the_header_as_every_route_does(settings) -> None:
    """`agent_id` was required in the body even with the X-Memlake-Agent-Id header (a 422), unlike every other
    route; both name one agent, or the request is refused."""
    memory = Memory(settings=settings.model_copy(update={"embedding_model": "hash"}))
    conversation = {"conversation_id": "c1", "session_date": "2024-04-01",
                    "turns": [{"user": "My sister lives in Lisbon.", "assistant": "Nice city."}]}
    with TestClient(create_app(memory, warm=False)) as client:
        accepted = client.post("/memory/ingest", json=conversation, headers={"X-Memlake-Agent-Id": "dora"})
        two = client.post("/memory/ingest", json={**conversation, "agent_id": "erin"},
                          headers={"X-Memlake-Agent-Id": "dora"})
        none = client.post("/memory/ingest", json=conversation)
    assert accepted.status_code == 202, accepted.text
    assert accepted.json()["agent_id"] == "dora" and accepted.json()["file"].startswith("dora/")
    landed = json.loads((settings.landing_dir / accepted.json()["file"]).read_text())
    assert landed["agent_id"] == "dora"
    assert two.status_code == 400 and "names two agents" in error_of(two)
    assert none.status_code == 400 and "which agent" in error_of(none)


def test_a_post_route_takes_its_agent_from_the_query_as_the_readme_says(settings) -> None:
    """`POST /v1/memory/context?agent_id=dora` answered 400 "which agent?" (a stranger's trial): the README says every
    memory route takes `agent_id` in the query or the body; both (or the header) name one agent, or it is refused."""
    memory = Memory(settings=settings.model_copy(update={"embedding_model": "hash"}))
    conversation = {"conversation_id": "c1", "session_date": "2024-04-01",
                    "turns": [{"user": "My sister lives in Lisbon.", "assistant": "Nice city."}]}
    with TestClient(create_app(memory, warm=False)) as client:
        landed = client.post("/memory/ingest?agent_id=dora", json=conversation)
        remembered = client.post("/v1/memory/remember?agent_id=dora", json={"content": "I live in Porto."})
        context = client.post("/v1/memory/context?agent_id=dora", json={"query": "where do I live?"})
        two = client.post("/v1/memory/context?agent_id=erin", json={"query": "where?", "agent_id": "dora"})
    assert landed.status_code == 202 and landed.json()["agent_id"] == "dora", landed.text
    assert remembered.status_code == 200, remembered.text
    assert context.status_code == 200 and "Porto" in context.json()["text"], context.text
    assert two.status_code == 400 and "names two agents" in error_of(two)


@pytest.mark.parametrize(("body", "headers"), [
    (b'{"query": "tea",', {"Content-Type": "application/json"}),  # cut short
    (b'{"query": "tea"}', {"Content-Type": "text/plain"}),
    (b'{"query": "tea"}', {}),
])
def test_a_body_that_is_not_read_as_json_is_named_as_such(settings, body, headers) -> None:
    """A user trial's bodies: cut-short JSON said "1: JSON decode error", and a JSON body sent without its content
    type said "body: Input should be a valid dictionary or object to extract fields from"."""
    memory = Memory(settings=settings.model_copy(update={"embedding_model": "hash"}))
    with TestClient(create_app(memory, warm=False), headers={"X-Memlake-Agent-Id": "dora"}) as client:
        refused = client.post("/v1/memory/context", content=body, headers=headers)
    assert refused.status_code == 422, refused.text
    message = error_of(refused)
    assert message.startswith("the body is not a JSON object") and "Content-Type: application/json" in message, message


@pytest.mark.parametrize("conversation_id", ["a\x00b", "line\nbreak", "tab\there"])
def test_an_ingest_whose_conversation_id_holds_a_control_character_is_refused(settings, conversation_id) -> None:
    """A user trial's ingest with a NUL in its conversation id got 202 and was ingested, and then every status
    question about it was a 400 ("NUL in a filter value"): refused before it lands."""
    memory = Memory(settings=settings.model_copy(update={"embedding_model": "hash"}))
    with TestClient(create_app(memory, warm=False), headers={"X-Memlake-Agent-Id": "dora"}) as client:
        refused = client.post("/memory/ingest", json={
            "conversation_id": conversation_id, "session_date": "2024-04-01",
            "turns": [{"user": "My sister lives in Lisbon.", "assistant": "Nice city."}]})
    assert refused.status_code == 422, refused.text
    assert "conversation_id" in error_of(refused) and "control character" in error_of(refused)
    assert not (settings.landing_dir / "dora").exists() or not list((settings.landing_dir / "dora").iterdir())


def test_a_health_check_by_head_is_answered(settings) -> None:
    """Load balancers and uptime checks often ask HEAD /healthz: it was a 405."""
    memory = Memory(settings=settings.model_copy(update={"embedding_model": "hash"}))
    with TestClient(create_app(memory, warm=False)) as client:
        head, get = client.head("/healthz"), client.get("/healthz")
    assert head.status_code == get.status_code == 200 and head.content == b""
