"""The OpenAI-compatible proxy, driven by the unmodified `openai` SDK against `memlake serve` and an echo model:
the agent's memory goes first, only that agent's, streamed or not; the exchange lands for later distillation."""

from __future__ import annotations

import json

import openai
import pytest

from tests.service.conftest import CANARIES, Served


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
    assert "<memory_context>" in stored["turns"][0]["assistant"]  # the echo's answer, whole


def test_an_upstream_error_comes_back_as_an_openai_error(served: Served) -> None:
    with pytest.raises(openai.RateLimitError) as refused:
        sdk(served, served.tokens["alice"], "alice").chat.completions.create(
            model="fail-429", messages=[{"role": "user", "content": "hello"}])
    assert refused.value.status_code == 429 and "upstream says 429" in str(refused.value)


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
