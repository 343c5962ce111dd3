"""The core-model path: the real openai client (through instructor) against a local OpenAI-compatible server."""

from datetime import UTC, datetime, timedelta

import dagster as dg
import pytest

from memlake.distill.client import CoreConfig, CoreModelDistiller, DistillError, breaker_for
from memlake.distill.models import Conversation, Message
from memlake.distill.offline import OFFLINE_DISTILLER_VERSION
from memlake.distill.prompt import PROMPT_VERSION
from memlake.lake import Lake
from memlake.schemas import EPISODES, PENDING
from memlake.settings import write_home_setting
from resources import CoreModelResource
from tests.conftest import land
from tests.episodes.test_episodes_assets import jsonl, materialize_episodes, msg
from tests.openai_stub_server import StubServer, default_responder, prompt_messages

SAID = datetime(2023, 5, 8, 10, 0, tzinfo=UTC)  # a Monday in 2023
MOVE = Conversation(
    "alice", "c1", "Moving",
    (Message("m1", "user", "I moved to Lisbon last week!", SAID),
     Message("m2", "assistant", "Congratulations on the move!", SAID + timedelta(minutes=1))),
)


# every test starts with the model's circuit breakers closed, and leaves them so
pytestmark = pytest.mark.usefixtures("fresh_breakers")


@pytest.fixture
def stub():
    with StubServer() as server:
        yield server


def distiller(stub: StubServer, **overrides) -> CoreModelDistiller:
    config = {"base_url": stub.base_url, "model": "stub-model", "backoff_seconds": 0.01,
              "breaker_reset_seconds": 0.5, **overrides}
    return CoreModelDistiller(CoreConfig(**config))


@pytest.mark.parametrize("mode", ["tools", "json", "json_schema"])
def test_a_valid_answer_is_one_request_in_every_mode(stub, mode):
    core = distiller(stub, mode=mode)
    session = core.distill(MOVE)

    assert stub.calls == 1
    request = stub.requests[0]
    assert request["model"] == "stub-model" and request.get("temperature") == 0
    if mode == "tools":
        assert request["tools"][0]["function"]["name"] and "response_format" not in request
    else:
        assert request["response_format"]["type"] == {"json": "json_object", "json_schema": "json_schema"}[mode]
    assert [(c.slot, c.value, c.message_ids) for c in session.fact_candidates] == [("home_city", "Lisbon", ["m1"])]
    assert core.usage.calls == 1 and core.usage.requests == 1
    assert core.usage.prompt_tokens > 0 and core.usage.completion_tokens > 0


def test_the_prompt_carries_the_conversations_own_dates_so_last_week_stays_in_2023(stub):
    session = distiller(stub).distill(MOVE)

    [key_date] = session.key_dates
    assert key_date.date == "2023-05-01" and key_date.message_ids == ["m1"]
    prompt = "\n".join(m["content"] for m in stub.requests[0]["messages"])
    assert "2023-05-08" in prompt
    assert datetime.now(UTC).date().isoformat() not in prompt  # nothing anchors it to today
    assert [line["id"] for line in prompt_messages(stub.requests[0])] == ["m1", "m2"]


def test_malformed_json_is_reasked_once_then_the_valid_answer_is_taken(stub):
    stub.then("malformed")
    core = distiller(stub)
    session = core.distill(MOVE)

    assert stub.calls == 2
    assert session.summary
    reask = stub.requests[1]["messages"]
    assert len(reask) > len(stub.requests[0]["messages"])  # the validation error went back to the model
    assert core.usage.calls == 1 and core.usage.requests == 2


def test_a_client_error_is_not_retried(stub):
    stub.then(400)
    with pytest.raises(DistillError, match="HTTP 400"):
        distiller(stub).distill(MOVE)
    assert stub.calls == 1


def test_server_errors_are_retried_with_backoff_1_2_4_by_default(stub):
    stub.default = 503
    waits: list[float] = []
    config = CoreConfig(base_url=stub.base_url, model="m-backoff", max_tries=4)
    assert (config.timeout_seconds, config.max_tries, config.backoff_seconds) == (60.0, 4, 1.0)
    assert (config.breaker_fail_max, config.breaker_reset_seconds) == (5, 60.0)
    core = CoreModelDistiller(config, sleep=waits.append)
    with pytest.raises(DistillError, match="HTTP 503"):
        core.distill(MOVE)
    assert waits == [1.0, 2.0, 4.0]
    assert stub.calls == 4
    assert core._openai.max_retries == 0 and core._openai.timeout == 60.0
    assert CoreConfig(base_url="x", model="y").max_tries == 3


def test_candidates_that_cite_no_user_message_are_dropped(stub):
    def responder(request):
        answer = default_responder(request)
        answer["fact_candidates"] = [
            {"type": "preference", "subject": "user", "value": "tea", "content": "The user likes tea.",
             "message_ids": ["m2"]},  # the assistant's message
            {"type": "fact", "subject": "user", "value": "x", "content": "Invented.", "message_ids": ["nope"]},
            {"type": "fact", "subject": "user", "slot": "home_city", "value": "Lisbon",
             "content": "The user lives in Lisbon.", "message_ids": ["m1", "m2"]},
        ]
        return answer

    stub.responder = responder
    session = distiller(stub).distill(MOVE)
    assert [(c.value, c.message_ids) for c in session.fact_candidates] == [("Lisbon", ["m1"])]


def test_a_long_conversation_is_split_to_fit_and_merged_into_one_result(stub):
    messages = tuple(
        Message(f"m{i}", "user" if i % 2 == 0 else "assistant",
                ("I moved to Porto last week. " if i == 0 else "") + f"Message {i}: " + "word " * 60,
                SAID + timedelta(minutes=i))
        for i in range(40)
    )
    conversation = Conversation("alice", "long", "Long", messages)
    core = distiller(stub, context_tokens=4000)
    session = core.distill(conversation)

    parts = stub.calls
    assert parts >= 3 and core.usage.calls == parts
    ids = [line["id"] for request in stub.requests for line in prompt_messages(request)]
    assert ids == [m.message_id for m in messages]  # every message sent once, in order
    assert "part 1 of" in stub.requests[0]["messages"][1]["content"]
    assert [c.value for c in session.fact_candidates] == ["Porto"]
    assert session.summary.count("The user talked about") <= 3


def test_resource_settings_and_modes(settings, monkeypatch):
    home = str(settings.home)
    assert CoreModelResource(home=home).distiller().name == OFFLINE_DISTILLER_VERSION  # type: ignore[union-attr]
    monkeypatch.setenv("MEMLAKE_OFFLINE_DISTILLER", "false")
    assert CoreModelResource(home=home).distiller() is None
    monkeypatch.setenv("MEMLAKE_CORE_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("MEMLAKE_CORE_MODE", "xml")
    with pytest.raises(ValueError, match="mode"):
        CoreModelResource(home=home).distiller()
    monkeypatch.setenv("MEMLAKE_CORE_MODE", "tools")
    monkeypatch.setenv("MEMLAKE_CORE_MODEL", "m")
    core = CoreModelResource(home=home).distiller()
    assert core.name == "m" and core.prompt_version == PROMPT_VERSION  # type: ignore[union-attr]


# --- through the episodes asset ---------------------------------------------------------------

CONVERSATIONS = [
    msg("c1", 0, "user", "I moved to Lisbon last week!", "2024-03-01T10:00:00Z"),
    msg("c1", 1, "assistant", "Welcome to Lisbon.", "2024-03-01T10:01:00Z"),
    msg("c2", 0, "user", "I prefer oolong tea.", "2024-03-02T09:00:00Z"),
    msg("c3", 0, "user", "My sister Leela turns 30 next month.", "2024-03-03T18:00:00Z"),
]


def model(settings, stub: StubServer, **overrides) -> CoreModelResource:
    """The core model of `settings`' home pointed at the stub: its `core_*` settings written to the home."""
    for key, value in {"base_url": stub.base_url, "model": "stub-model", "backoff_seconds": 0.01,
                       "breaker_reset_seconds": 0.5, **overrides}.items():
        write_home_setting(settings.home, f"core_{key}", str(value))
    return CoreModelResource(home=str(settings.home))


def test_a_rerun_makes_no_call_and_a_changed_conversation_exactly_one(settings, stub):
    instance = dg.DagsterInstance.ephemeral()
    land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATIONS))

    _, meta = materialize_episodes(settings, model(settings, stub), instance)
    assert stub.calls == 3 and meta["model_calls"] == 3 and meta["distilled"] == 3
    assert meta["distiller"] == "stub-model" and meta["prompt_version"] == PROMPT_VERSION
    assert meta["token_usage"]["total_tokens"] > 0 and meta["breaker_state"] == "closed"
    episodes = Lake(settings.lake_dir).read(EPISODES).sort("conversation_id")
    assert episodes["distiller"].unique().to_list() == ["stub-model"]
    assert episodes["prompt_version"].unique().to_list() == [PROMPT_VERSION]

    _, meta = materialize_episodes(settings, model(settings, stub), instance)
    assert stub.calls == 3  # counted at the server: nothing was sent
    assert meta["model_calls"] == 0 and meta["cache_hits"] == 3

    land(settings, "alice", "more.jsonl", jsonl(*CONVERSATIONS[2:3],
                                                 msg("c2", 1, "user", "Green tea is fine too.",
                                                     "2024-03-02T09:05:00Z")))
    _, meta = materialize_episodes(settings, model(settings, stub), instance)
    assert stub.calls == 4  # exactly one more
    assert meta["model_calls"] == 1 and meta["cache_hits"] == 2
    c2 = Lake(settings.lake_dir).read(EPISODES).sort("conversation_id").row(1, named=True)
    assert c2["conversation_id"] == "c2" and c2["message_ids"] == ["c2-m0", "c2-m1"]


def test_an_outage_opens_the_breaker_keeps_conversations_pending_and_they_complete_after(settings, stub):
    instance = dg.DagsterInstance.ephemeral()
    land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATIONS))
    stub.default = 500
    # the default cool-down; the test moves the clock, not sleeps
    core = model(settings, stub, breaker_reset_seconds=60.0)
    breaker = breaker_for(core.config())

    result, meta = materialize_episodes(settings, core, instance)

    # c1: 3 tries fail; c2: 2 more fail and the 5th consecutive failure opens the breaker; c3: no request.
    assert stub.calls == 5
    assert meta["breaker_state"] == "open" and meta["failed"] == 1 and meta["pending_left"] == 3
    lake = Lake(settings.lake_dir)
    assert lake.read(EPISODES).height == 0
    pending = {r["conversation_id"]: r for r in lake.read(PENDING).iter_rows(named=True)}
    assert pending["c1"]["reason"] == "core model failed: HTTP 500 from the core model"
    assert pending["c1"]["attempts"] == 1
    assert pending["c2"]["reason"].startswith("circuit breaker open")
    assert pending["c3"]["reason"].startswith("circuit breaker open") and pending["c3"]["attempts"] == 0
    assert all(e.passed for e in result.get_asset_check_evaluations())  # nothing lost

    _, meta = materialize_episodes(settings, core, instance)  # still cooling down: no request at all
    assert stub.calls == 5 and meta["pending_left"] == 3 and meta["model_calls"] == 0

    stub.default = "valid"
    breaker._state_storage.opened_at = datetime.now(UTC) - timedelta(seconds=61)  # the 60 s cool-down is over
    _, meta = materialize_episodes(settings, core, instance)

    # the first call is the one half-open probe; it succeeds, the breaker closes, the rest follow
    assert stub.calls == 8 and meta["distilled"] == 3 and meta["pending_left"] == 0
    assert meta["breaker_state"] == "closed" and breaker.current_state == "closed"
    assert sorted(lake.read(EPISODES)["conversation_id"].to_list()) == ["c1", "c2", "c3"]
    assert lake.read(PENDING).height == 0


def test_the_api_key_reaches_the_endpoint_through_an_env_var(settings, stub, monkeypatch):
    from resources import build_resources

    monkeypatch.setenv("MEMLAKE_CORE_API_KEY", "sk-test-123")
    monkeypatch.setenv("MEMLAKE_CORE_BASE_URL", stub.base_url)
    monkeypatch.setenv("MEMLAKE_CORE_MODEL", "stub-model")
    from memlake.settings import load_settings

    resources = build_resources(load_settings(settings.home))
    core = resources["core_model"]
    assert isinstance(core, CoreModelResource) and isinstance(core.api_key, dg.EnvVar)  # type: ignore[unreachable]
    land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATIONS[:2]))
    materialize_episodes(settings, core, dg.DagsterInstance.ephemeral())
    assert stub.headers[0]["authorization"] == "Bearer sk-test-123"
