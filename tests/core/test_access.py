"""The access log and the access-frequency boost: what an agent used ranks higher later, as of when it was used."""

import json
import shutil
from datetime import UTC, datetime

import dagster as dg
import pytest
from typer.testing import CliRunner

from memlake.api import Memory
from memlake.inputs import log_dir, log_files, read_entries
from memlake.schemas import ACCESS
from tests.conftest import land

OFFSITE = "The team offsite is in Porto."


def msg(conversation: str, content: str) -> dict:
    return {
        "conversation_id": conversation,
        "message_id": f"{conversation}-m0",
        "role": "user",
        "content": content,
        "created_at": "2024-03-01T10:00:00Z",
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Two agents; alice said the same thing in two conversations at the same moment (a tie)."""
    from memlake.settings import load_settings
    from pipelines.runs import run_landing
    from resources import HashEmbedderResource, build_resources

    settings = load_settings(tmp_path_factory.mktemp("access") / "home")
    settings.ensure_dirs()
    rows = [msg("first", OFFSITE), msg("second", OFFSITE), msg("tea", "I drink oolong tea every morning.")]
    land(settings, "alice", "chat.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    land(settings, "bob", "chat.jsonl", json.dumps(msg("bobs", OFFSITE)) + "\n")
    resources = {**build_resources(settings), "embedder": HashEmbedderResource()}
    outcome = run_landing(settings, resources=resources, instance=dg.DagsterInstance.ephemeral())
    assert outcome.success, outcome
    return settings


@pytest.fixture
def home(built, tmp_path):
    """A copy of the built home per test: access entries written by one test never reach another."""
    shutil.copytree(built.home, tmp_path / "home")
    return built.model_copy(update={"home": tmp_path / "home", "embedding_model": "hash"})


# no recency: the two offsite turns tie on everything but what the access log says
OFFSITE_QUERY = {"query": "team offsite Porto", "k": 2, "recency_weight": 0.0}


def entries(settings) -> list[dict]:
    folder = log_dir(settings, ACCESS)
    return read_entries(folder, log_files(folder), ACCESS).to_pylist()


def test_a_memory_used_before_ranks_above_an_equal_one_never_used(home):
    memory = Memory(settings=home)
    before = memory.search(agent_id="alice", **OFFSITE_QUERY)
    assert before["text"][0] == before["text"][1] and before["access"].to_list() == [0.0, 0.0]
    runner_up = before["key"][1]

    assert memory.record_access("alice", [runner_up]) == 1
    after = memory.search(agent_id="alice", **OFFSITE_QUERY)  # the same Memory sees the new entry
    assert after["key"].to_list() == [runner_up, before["key"][0]]
    assert after["access"].to_list() == [1.0, 0.0]
    assert after["score"][0] > before["score"][0]


def test_only_uses_up_to_as_of_count(home):
    memory = Memory(settings=home)
    runner_up = memory.search(agent_id="alice", **OFFSITE_QUERY)["key"][1]
    memory.record_access("alice", [runner_up], at="2024-05-01")

    earlier = memory.search(agent_id="alice", as_of="2024-04-01", **OFFSITE_QUERY)
    later = memory.search(agent_id="alice", as_of=datetime(2024, 6, 1), **OFFSITE_QUERY)
    assert earlier["access"].to_list() == [0.0, 0.0] and earlier["key"][1] == runner_up
    assert later["key"][0] == runner_up and later["access"][0] == 1.0


def test_a_recording_search_logs_exactly_its_hits_and_a_plain_one_nothing(home):
    memory = Memory(settings=home)
    memory.search("oolong tea", "alice", k=3)
    assert entries(home) == []

    found = memory.search("oolong tea", "alice", k=3, record_access=True)
    logged = entries(home)
    assert sorted(e["object_id"] for e in logged) == sorted(found["key"].to_list())
    assert {(e["agent_id"], e["scope"]) for e in logged} == {("alice", "chunks")}
    assert len({e["access_id"] for e in logged}) == 1  # one write, one entry
    assert logged[0]["accessed_at"] > datetime(2026, 1, 1, tzinfo=UTC)  # now, not the search's as_of


def test_one_agents_uses_and_other_scopes_never_lift_a_search(home):
    memory = Memory(settings=home)
    alice = memory.search(agent_id="alice", **OFFSITE_QUERY)
    bob = memory.search(agent_id="bob", **OFFSITE_QUERY)
    with pytest.raises(ValueError, match="not a chunks key of agent 'bob'"):
        memory.record_access("bob", [*alice["key"], *bob["key"]] * 3)  # bob cannot name alice's rows
    with pytest.raises(ValueError, match="not a facts key"):
        memory.record_access("alice", [alice["key"][1]], scope="facts")  # nor a row of another scope
    assert log_files(log_dir(home, ACCESS)) == []  # refused whole: the log is append-only
    assert memory.record_access("bob", bob["key"][0]) == 1  # one key, given as a string, is one key

    again = memory.search(agent_id="alice", **OFFSITE_QUERY)
    assert again["key"].to_list() == alice["key"].to_list()
    assert again["access"].to_list() == [0.0, 0.0]
    assert set(memory.search(agent_id="bob", **OFFSITE_QUERY)["agent_id"]) == {"bob"}


def test_bad_writes_are_refused_and_an_empty_one_writes_nothing(home):
    memory = Memory(settings=home)
    with pytest.raises(ValueError, match="unknown scope"):
        memory.record_access("alice", ["x"], scope="turns")
    with pytest.raises(ValueError, match="invalid agent id"):
        memory.record_access("../alice", ["x"])
    with pytest.raises(ValueError, match=r"not a chunks key of agent 'alice'.*'9', 'x'"):
        memory.record_access("alice", ["x", "9"])  # a made-up key
    assert memory.record_access("alice", []) == 0
    assert log_files(log_dir(home, ACCESS)) == []


def test_cli_search_records_only_when_asked(home, monkeypatch):
    from pipelines.cli import app

    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")
    command = ["search", "oolong tea", "--agent", "alice", "-k", "2", "--home", str(home.home)]
    plain = CliRunner().invoke(app, command)
    assert plain.exit_code == 0 and "recorded" not in plain.output
    assert entries(home) == []
    recorded = CliRunner().invoke(app, [*command, "--record"])
    assert recorded.exit_code == 0, recorded.output
    assert recorded.output.splitlines()[-1] == "recorded 2 use(s) of these chunks for agent alice"
    assert {e["agent_id"] for e in entries(home)} == {"alice"} and len(entries(home)) == 2
