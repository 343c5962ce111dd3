"""The OpenAI-compatible proxy, driven by the unmodified `openai` SDK against `memlake serve` and an echo model:
the agent's memory goes first, only that agent's, streamed or not; the exchange lands for later distillation."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import anyio
import httpx2
import openai
import pytest
import uvicorn
from fastapi import FastAPI
from starlette.testclient import TestClient
from starlette.types import Receive, Scope, Send

from memlake.api import Memory
from memlake.settings import Settings
from service.app import create_app
from service.config import ServiceSettings
from service.proxy import Exchange
from tests.service.conftest import CANARIES, Served
from tests.service.echo_upstream import EchoUpstream


def sdk(served: Served, token: str, agent: str | None, store: bool = False) -> openai.OpenAI:
    headers = {"X-Memlake-Store": "true" if store else "false"}
    if agent is not None:
        headers["X-Memlake-Agent-Id"] = agent
    return openai.OpenAI(base_url=f"{served.url}/v1", api_key=token, default_headers=headers, max_retries=0)


def others(agent: str) -> list[str]:
    return [canary for other, pair in CANARIES.items() if other != agent for canary in pair]


def test_the_sdk_gets_an_answer_with_the_agents_memory_put_first(served: Served) -> None:
    client = sdk(served, served.tokens["alice+carol"], "carol")
    answer = client.chat.completions.create(
        model="memlake-echo", messages=[{"role": "user", "content": "What is my passphrase?"}])
    sent = json.loads(answer.choices[0].message.content or "")
    assert sent[0]["role"] == "system" and "<memory_context>" in sent[0]["content"]
    assert CANARIES["carol"][1] in sent[0]["content"]
    assert not [c for c in others("carol") if c in answer.choices[0].message.content]  # type: ignore[operator]
    assert sent[1:] == [{"role": "user", "content": "What is my passphrase?"}]
    # the upstream got its own key and the mapped model, never the caller's token
    assert served.upstream.requests[-1]["model"] == "echo"
    assert served.upstream.headers[-1]["authorization"] == "Bearer upstream-secret"


def test_a_stream_comes_through_chunk_by_chunk_with_the_memory_in_it(served: Served) -> None:
    client = sdk(served, served.tokens["bob"], None)  # the token's only agent
    stream = client.chat.completions.create(
        model="echo", stream=True, messages=[{"role": "user", "content": "What is my passphrase?"}])
    pieces = [chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices]
    assert len(pieces) > 3
    sent = json.loads("".join(pieces))
    assert sent[0]["role"] == "system" and CANARIES["bob"][1] in sent[0]["content"]
    assert not [c for c in others("bob") if c in "".join(pieces)]


@pytest.mark.parametrize("stream", [False, True])
def test_the_exchange_lands_in_the_agents_folder_unless_opted_out(served: Served, stream: bool) -> None:
    landing = served.home / "landing" / "alice"
    before = set(landing.glob("ingest-*.json"))
    question = f"Remember that my bike is green ({'streamed' if stream else 'plain'})."
    for store in (False, True):
        answer = sdk(served, served.tokens["alice"], "alice", store=store).chat.completions.create(
            model="echo", stream=stream, messages=[{"role": "user", "content": question}])
        if stream:
            list(answer)  # type: ignore[call-overload]
    landed = set(landing.glob("ingest-*.json")) - before
    assert len(landed) == 1  # the opted-out one left nothing
    stored = json.loads(landed.pop().read_text())
    assert stored["agent_id"] == "alice" and stored["turns"][0]["user"] == question
    sent = served.upstream.requests[-1]["messages"]
    assert sent[0]["role"] == "system" and "<memory_context>" in sent[0]["content"]
    # the echo's answer, without the block it repeated: memory is not stored again as conversation
    assert question in stored["turns"][0]["assistant"] and "memory_context" not in stored["turns"][0]["assistant"]


def test_an_upstream_error_comes_back_as_an_openai_error(served: Served) -> None:
    with pytest.raises(openai.RateLimitError) as refused:
        sdk(served, served.tokens["alice"], "alice").chat.completions.create(
            model="fail-429", messages=[{"role": "user", "content": "hello"}])
    assert refused.value.status_code == 429 and "upstream says 429" in str(refused.value)


def test_an_upstream_failure_is_a_bad_gateway_so_a_500_is_only_ever_memlakes_own(served: Served) -> None:
    """An upstream's 500 came back as a 500, which reads as memlake's own failure; its message is kept."""
    client = sdk(served, served.tokens["alice"], "alice")
    with pytest.raises(openai.InternalServerError) as refused:
        client.chat.completions.create(model="fail-500", messages=[{"role": "user", "content": "hello"}])
    assert refused.value.status_code == 502 and "upstream says 500" in str(refused.value)
    with pytest.raises(openai.InternalServerError) as refused:
        client.chat.completions.create(model="fail-504", messages=[{"role": "user", "content": "hello"}])
    assert refused.value.status_code == 504  # a gateway status of the upstream's own passes on as it is


def test_models_pass_through(served: Served) -> None:
    assert [model.id for model in sdk(served, served.tokens["alice"], "alice").models.list()] == ["echo"]


def test_another_agents_memory_is_refused_to_the_sdk(served: Served) -> None:
    with pytest.raises(openai.PermissionDeniedError) as refused:
        sdk(served, served.tokens["bob"], "alice").chat.completions.create(
            model="echo", messages=[{"role": "user", "content": "What is my passphrase?"}])
    assert "may not use agent 'alice'" in str(refused.value)


def test_no_token_no_answer(served: Served) -> None:
    with pytest.raises(openai.AuthenticationError):
        sdk(served, "mlk_not-a-token", "alice").chat.completions.create(
            model="echo", messages=[{"role": "user", "content": "hello"}])


def proxy_app(settings: Settings, upstream_base_url: str | None, checked: bool = True) -> FastAPI:
    """A service over a home with one agent (erin), forwarding to `upstream_base_url` (None: none); unchecked,
    the address is taken as given, as a config built in code without its checks would."""
    memory = Memory(settings=settings.model_copy(update={"embedding_model": "hash"}))
    memory.remember("erin", "I live in Porto.")
    config = ServiceSettings(upstream_base_url=upstream_base_url) if checked else \
        ServiceSettings.model_construct(upstream_base_url=upstream_base_url)
    return create_app(memory, config, warm=False)


def proxy_alone(settings: Settings, upstream_base_url: str | None, checked: bool = True) -> TestClient:
    """`proxy_app` in process."""
    return TestClient(proxy_app(settings, upstream_base_url, checked), headers={"X-Memlake-Agent-Id": "erin"})


def chat_request(model: str = "echo", stream: bool = False) -> dict[str, Any]:
    return {"model": model, "stream": stream, "messages": [{"role": "user", "content": "Where do I live?"}]}


def test_without_an_upstream_the_models_are_refused_as_a_chat_is(settings: Settings) -> None:
    """`client.models.list()` of a fresh `memlake serve` got a 500 (an AttributeError) instead of the 503 a chat
    gets."""
    with proxy_alone(settings, None) as client:
        chat = client.post("/v1/chat/completions", json=chat_request())
        listed = client.get("/v1/models")
    assert chat.status_code == listed.status_code == 503
    assert listed.json() == chat.json()
    assert listed.json()["error"]["type"] == "upstream_not_configured"
    assert "MEMLAKE_UPSTREAM_BASE_URL" in listed.json()["error"]["message"]


@pytest.mark.parametrize("answer", ["not-json", "no-data"])
def test_an_upstream_model_list_of_the_wrong_shape_is_an_upstream_error(settings: Settings, answer: str) -> None:
    with EchoUpstream() as upstream, proxy_alone(settings, f"{upstream.base_url}/{answer}") as client:
        listed = client.get("/v1/models")
    assert listed.status_code == 502, listed.text
    assert listed.json()["error"]["type"] == "upstream_error"
    assert "model list" in listed.json()["error"]["message"]


def test_a_completion_without_choices_is_an_upstream_error(settings: Settings) -> None:
    with EchoUpstream() as upstream, proxy_alone(settings, upstream.base_url) as client:
        answer = client.post("/v1/chat/completions", json=chat_request("no-choices"))
    assert answer.status_code == 502, answer.text
    assert answer.json()["error"]["type"] == "upstream_error" and "choices" in answer.json()["error"]["message"]


@pytest.mark.parametrize("stream", [False, True])
def test_an_answer_whose_content_is_not_text_comes_through_and_stores_nothing(settings: Settings,
                                                                              stream: bool) -> None:
    with EchoUpstream() as upstream, proxy_alone(settings, upstream.base_url) as client:
        answer = client.post("/v1/chat/completions", json=chat_request("odd-content", stream))
    assert answer.status_code == 200, answer.text
    assert "parts, not a string" in answer.text  # passed on as the upstream gave it
    assert not list((settings.landing_dir / "erin").glob("ingest-*.json"))  # no text: nothing to distil


@pytest.mark.parametrize("url", ["http://[::1/v1", "http://127.0.0.1:99999/v1"])
def test_an_upstream_address_that_cannot_be_reached_is_an_upstream_error(settings: Settings, url: str) -> None:
    """`memlake serve` refuses these at start; a config built without that check still gets a 502 per request, not
    the 500 a port above 65535 gave (an OverflowError inside an ExceptionGroup, outside httpx2's errors)."""
    with proxy_alone(settings, url, checked=False) as client:
        answers = [client.get("/v1/models"), client.post("/v1/chat/completions", json=chat_request()),
                   client.post("/v1/chat/completions", json=chat_request(stream=True))]
    for answer in answers:
        assert answer.status_code == 502, answer.text
        assert answer.json()["error"]["type"] == "upstream_error"


def test_the_schema_lists_the_upstreams_refusals(settings: Settings) -> None:
    with proxy_alone(settings, None) as client:
        paths = client.get("/openapi.json").json()["paths"]
    for route in (paths["/v1/models"]["get"], paths["/v1/chat/completions"]["post"]):
        assert {"502", "503"} <= set(route["responses"])


@contextmanager
def listening(app: FastAPI, paths: list[str]) -> Iterator[str]:
    """`app` served on a free loopback port in a thread (its URL), noting the path of every request that reaches
    it in `paths`."""

    async def noted(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            paths.append(scope["path"])
        await app(scope, receive, send)

    server = uvicorn.Server(uvicorn.Config(noted, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        assert thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)


def test_the_sdk_does_not_retry_a_service_that_has_no_upstream(settings: Settings) -> None:
    """The openai SDK retries a 5xx twice by default (with backoff) unless the answer says `x-should-retry:
    false`: no upstream configured is not transient, so one request, and the reason, reach the caller."""
    paths: list[str] = []
    with listening(proxy_app(settings, None), paths) as url:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="none", default_headers={"X-Memlake-Agent-Id": "erin"})
        with pytest.raises(openai.InternalServerError) as refused:
            client.chat.completions.create(model="echo", messages=[{"role": "user", "content": "hello"}])
        with pytest.raises(openai.InternalServerError):
            client.models.list()
    assert refused.value.status_code == 503 and "MEMLAKE_UPSTREAM_BASE_URL" in str(refused.value)
    assert paths == ["/v1/chat/completions", "/v1/models"]


HI = b'"messages": [{"role": "user", "content": "hi"}]'
UNSENDABLE_BODIES = {
    "NaN": b'{"model": "echo", "temperature": NaN, ' + HI + b"}",
    "Infinity": b'{"model": "echo", "max_tokens": -Infinity, ' + HI + b"}",
    "a lone surrogate": b'{"model": "echo", "messages": [{"role": "user", "content": "\\ud800 hi"}]}',
    "nested 100,000 deep": b'{"model": "echo", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b", " + HI + b"}",
    "stream not a boolean": b'{"model": "echo", "stream": "yes", ' + HI + b"}",
}


@pytest.mark.parametrize("what", list(UNSENDABLE_BODIES))
def test_a_chat_request_that_is_not_plain_json_is_refused_before_the_upstream(settings: Settings, what: str) -> None:
    """A user trial's bodies: NaN, Infinity or a lone surrogate were taken for the upstream's failure (502; before,
    a 400 with Python's message), deep nesting was a 500 (RecursionError), a string `stream` streamed."""
    with EchoUpstream() as upstream, proxy_alone(settings, upstream.base_url) as client:
        answer = client.post("/v1/chat/completions", content=UNSENDABLE_BODIES[what],
                             headers={"Content-Type": "application/json"})
        assert answer.status_code == 400, answer.text
        assert answer.json()["error"]["type"] == "invalid_request_error"
        assert upstream.requests == []


def test_the_upstreams_advice_on_retrying_reaches_the_sdk(settings: Settings) -> None:
    """An upstream's `x-should-retry: false` (or Retry-After) was dropped: the SDK retried its 5xx twice more."""
    paths: list[str] = []
    with EchoUpstream() as upstream, listening(proxy_app(settings, upstream.base_url), paths) as url:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="none", default_headers={"X-Memlake-Agent-Id": "erin",
                                                                                      "X-Memlake-Store": "false"})
        with pytest.raises(openai.InternalServerError) as refused:
            client.chat.completions.create(model="fail-503-no-retry", messages=[{"role": "user", "content": "hi"}])
        assert refused.value.status_code == 503 and "upstream says 503" in str(refused.value)
        assert len(upstream.requests) == 1 and paths == ["/v1/chat/completions"]


def streamed_events(url: str, drop_after: int | None) -> list[str]:
    """A streamed chat of erin's through the proxy at `url`, read event by event: the `data:` lines read before
    the client closed the connection after `drop_after` of them (None: read to the end)."""
    events: list[str] = []
    with httpx2.Client(base_url=url, headers={"X-Memlake-Agent-Id": "erin"}, timeout=30) as client, \
            client.stream("POST", "/v1/chat/completions", json=chat_request("slow", stream=True)) as answer:
        for line in answer.iter_lines():
            if line.startswith("data:"):
                events.append(line)
            if drop_after is not None and len(events) >= drop_after:
                break  # leaving the block closes the connection part-way
    return events


def test_a_stream_the_client_dropped_part_way_stores_nothing(settings: Settings) -> None:
    """Over a real socket, with an upstream still generating: a client that went away part-way (after one event,
    two, half of them, all but one piece of text, or all the text but not the [DONE]) leaves nothing in memory,
    every time; one that read to the end has its exchange stored. (Starlette stops the stream when the client
    goes; this guards that path. The ordering the probe's 5 in 10 came from is the ASGI test below.)"""
    landing = settings.landing_dir / "erin"
    paths: list[str] = []
    with EchoUpstream() as upstream, listening(proxy_app(settings, upstream.base_url), paths) as url:
        whole = streamed_events(url, None)
        assert upstream.streams_ended.acquire(timeout=30)
        assert whole[-1] == "data: [DONE]" and len(list(landing.glob("ingest-*.json"))) == 1  # a whole one lands
        text_events = len(whole) - 1
        for drop_after in (1, 2, text_events // 2, text_events - 1, text_events):
            assert len(streamed_events(url, drop_after)) == drop_after
            assert upstream.streams_ended.acquire(timeout=30)  # the upstream finished, or lost its reader
            time.sleep(0.3)  # what the proxy does once its upstream has ended
            assert len(list(landing.glob("ingest-*.json"))) == 1, f"stored after a drop at {drop_after}"


def landed(settings: Settings) -> int:
    return len(list((settings.landing_dir / "erin").glob("ingest-*.json")))


async def stream_to_a_client_that_drops(app: FastAPI, settings: Settings, drop_after: int) -> list[tuple[bytes, int]]:
    """erin's streamed chat of the `burst` model (its whole answer at once) driven through the ASGI app by a client
    that goes away once it has received `drop_after` pieces of the body (0: once it has the response's headers),
    as uvicorn reports it: the next `receive` says `http.disconnect` and what is sent after goes nowhere. The
    pieces it received, each with the number of exchanges landed when it was sent."""
    body = json.dumps(chat_request("burst", stream=True)).encode()
    gone, asked, received = anyio.Event(), False, []

    async def receive() -> dict[str, Any]:
        nonlocal asked
        if not asked:
            asked = True
            return {"type": "http.request", "body": body, "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if gone.is_set():
            return
        if message["type"] == "http.response.body" and message.get("body"):
            received.append((message["body"], landed(settings)))
        if len(received) >= drop_after:
            gone.set()

    scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
             "method": "POST", "scheme": "http", "path": "/v1/chat/completions", "raw_path": b"/v1/chat/completions",
             "query_string": b"", "root_path": "", "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 80),
             "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                         (b"x-memlake-agent-id", b"erin")]}
    async with app.router.lifespan_context(app):
        await app(scope, receive, send)  # type: ignore[arg-type]
    return received


def test_a_stream_lands_only_once_the_client_was_sent_all_its_text(settings: Settings) -> None:
    """An upstream that sends its whole answer at once (text and [DONE] in one piece): the exchange was stored
    before the client was sent any of it, so a client gone by then still left a complete exchange in memory. Now
    the text goes to the client first, the exchange lands, then the [DONE]; a client gone before its text was
    handed over, or as it was, stores nothing, every time."""
    with EchoUpstream() as upstream:
        app = proxy_app(settings, upstream.base_url)
        text, done = anyio.run(stream_to_a_client_that_drops, app, settings, 10**6)
        assert b"delta" in text[0] and b"[DONE]" not in text[0] and text[1] == 0  # nothing stored before
        assert done[0] == b"data: [DONE]\n\n" and done[1] == 1 == landed(settings)  # then it landed, once
        for drop_after in (0, 1) * 3:
            received = anyio.run(stream_to_a_client_that_drops, app, settings, drop_after)
            assert len(received) == drop_after and landed(settings) == 1, f"stored after a drop at {drop_after}"


def test_what_is_stored_of_a_request_is_the_users_last_message_and_the_answers_own_text(settings: Settings) -> None:
    """A request with the client's own system prompt, earlier turns and the last user message in parts: the stored
    user turn is that last message only, and the stored answer (the echo of everything the upstream was sent)
    keeps the request's text but none of the injected block."""
    messages = [{"role": "system", "content": "You are a terse travel agent."},
                {"role": "user", "content": "I want a trip."}, {"role": "assistant", "content": "Where to?"},
                {"role": "user", "content": [{"type": "text", "text": "Somewhere near where I live."}]}]
    with EchoUpstream() as upstream, proxy_alone(settings, upstream.base_url) as client:
        answer = client.post("/v1/chat/completions", json={"model": "echo", "messages": messages})
        block = upstream.requests[-1]["messages"][0]["content"]
    assert answer.status_code == 200 and "The user lives in Porto." in block
    [landed] = (settings.landing_dir / "erin").glob("ingest-*.json")
    stored = json.loads(landed.read_text())
    assert stored["origin"] == "proxy" and stored["turns"] == [{"user": "Somewhere near where I live.",
                                                                "assistant": stored["turns"][0]["assistant"]}]
    assert "terse travel agent" in stored["turns"][0]["assistant"]  # the echo's own text is kept
    assert "Porto" not in stored["turns"][0]["assistant"] and "memory_context" not in stored["turns"][0]["assistant"]


def test_an_answer_that_is_only_the_block_lands_the_users_message_alone(settings: Settings) -> None:
    """The user's message is theirs whatever the model answered: an answer copied whole from the block is not
    stored, the question is."""
    memory = Memory(settings=settings.model_copy(update={"embedding_model": "hash"}))
    memory.remember("erin", "I live in Porto.")
    block = memory.context("Where do I live?", "erin").text
    exchange = Exchange(SimpleNamespace(memory=memory), "erin", "Where do I live?", block, store=True)  # type: ignore[arg-type]
    exchange.read_completion({"choices": [{"message": {"content": json.dumps(block)}}]})
    assert exchange.save() is not None
    [landed] = (settings.landing_dir / "erin").glob("ingest-*.json")
    assert json.loads(landed.read_text())["turns"] == [{"user": "Where do I live?", "assistant": None}]
