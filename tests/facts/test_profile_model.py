"""Profiles written by the core model: the real openai client (through instructor) against the local stub server."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from memlake.api import Memory
from memlake.facts.profile import profile_versions
from memlake.facts.profile_model import PROFILE_CACHE, PROFILE_PROMPT_VERSION
from memlake.lake import Lake
from memlake.schemas import FACT_EDGES, FACTS, PROFILES
from memlake.settings import load_settings
from tests.facts.test_facts_assets import materialize, small_lake  # noqa: F401 - the fixture
from tests.openai_stub_server import StubServer

_FACT = re.compile(r"^- id=(?P<id>\S+) \| (?P<kind>OVERRIDE|extracted) \| type=(?P<type>[^|]+) \|"
                   r" subject=(?P<subject>[^|]+) \| slot=(?P<slot>[^|]+) \| value=(?P<value>[^|]+) \|"
                   r" valid_from=(?P<valid_from>[^|]+) \| content: (?P<content>.*)$", re.M)


def listed(request: dict[str, Any]) -> list[dict[str, str]]:
    text = "\n".join(str(m.get("content") or "") for m in request["messages"] if m["role"] == "user")
    return [m.groupdict() for m in _FACT.finditer(text)]


def responder(skip_overrides: bool = False, extra: list[dict[str, Any]] | None = None):
    """A model that follows the prompt: one line per listed fact, by slot (optionally leaving overrides out)."""

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, list[dict[str, Any]]] = {s: [] for s in ("identity", "work", "places", "preferences",
                                                                  "people", "current_projects")}
        for fact in listed(request):
            if skip_overrides and fact["kind"] == "OVERRIDE":
                continue
            section = {"home_city": "places", "name": "identity"}.get(fact["slot"].strip(), "preferences")
            out[section].append({"text": f"Model: {fact['content']}", "fact_ids": [fact["id"]]})
        for line in extra or []:
            out["identity"].append(line)
        return out

    return answer


# every test starts with the model's circuit breakers closed, and leaves them so
pytestmark = pytest.mark.usefixtures("fresh_breakers")


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch):
    with StubServer(responder()) as server:
        for name, value in {"MEMLAKE_CORE_BASE_URL": server.base_url, "MEMLAKE_CORE_MODEL": "stub-model",
                            "MEMLAKE_CORE_BACKOFF_SECONDS": "0.01",
                            "MEMLAKE_CORE_BREAKER_RESET_SECONDS": "0.5"}.items():
            monkeypatch.setenv(name, value)
        yield server


def tables(home: Path) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    lake = Lake(load_settings(home).lake_dir)
    return lake.read(FACTS), lake.read(FACT_EDGES), lake.read(PROFILES)


def profile_metadata(result) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    [event] = [e for e in result.get_asset_materialization_events()
               if e.asset_key.to_user_string() == "profile/profiles"]
    return {k: v.value for k, v in event.event_specific_data.materialization.metadata.items()}


def test_a_valid_answer_becomes_the_profile_written_by_the_model(small_lake: Path, stub: StubServer) -> None:  # noqa: F811
    result = materialize(small_lake)
    assert result.success
    facts, _edges, profiles = tables(small_lake)

    # two versions, one call: only the newest is worth the model's time (an import of many conversations makes a
    # version for each that changed the profile); the older keeps its assembled lines
    assert profiles.height == 2 and stub.calls == 1
    assert profiles.sort("version")["writer"].to_list() == ["assembled", "stub-model"]
    latest = profiles.sort("version").row(-1, named=True)
    active = set(facts.filter(pl.col("status") == "active")["fact_id"].to_list())
    assert {i for line in latest["lines"] for i in line["fact_ids"]} == active
    assert all(line["text"].startswith("Model: ") for line in latest["lines"])
    assert "Model: The user moved to Lisbon." in latest["text"] and "Berlin" not in latest["text"]
    # The prompt lists the facts with their ids, slots, values and dates; the key of the cache is versioned.
    [lisbon] = [f for f in listed(stub.requests[-1]) if f["slot"] == "home_city"]
    assert lisbon["value"].strip() == "Lisbon" and lisbon["valid_from"].strip() == "2024-06-03"
    meta = profile_metadata(result)
    assert meta["profile_model"]["model_calls"] == 1 and meta["profile_model"]["fallbacks"] == 0
    assert meta["profile_model"]["prompt_version"] == PROFILE_PROMPT_VERSION
    assert meta["by_writer"] == {"assembled": 1, "stub-model": 1}


def test_a_line_citing_an_unknown_or_no_fact_id_is_dropped(small_lake: Path, stub: StubServer) -> None:  # noqa: F811
    materialize(small_lake)  # facts first, so a real id is known
    facts, _edges, _profiles = tables(small_lake)
    real = facts.filter(pl.col("status") == "active")["fact_id"][0]
    stub.responder = responder(extra=[
        {"text": "The user is an astronaut.", "fact_ids": ["f_invented"]},
        {"text": "Half true.", "fact_ids": [real, "f_invented"]},
        {"text": "Cites nothing.", "fact_ids": []},
    ])
    Lake(load_settings(small_lake).lake_dir).write(PROFILE_CACHE, [])  # forget the answers of the first run
    result = materialize(small_lake)

    assert result.success
    _facts, _edges, profiles = tables(small_lake)
    latest = profiles.sort("version").row(-1, named=True)
    assert latest["writer"] == "stub-model"
    texts = [line["text"] for line in latest["lines"]]
    assert "The user is an astronaut." not in texts and "Half true." not in texts and "Cites nothing." not in texts
    assert any(t.startswith("Model: ") for t in texts)
    known = set(facts["fact_id"].to_list())
    assert all(line["fact_ids"] and set(line["fact_ids"]) <= known for line in latest["lines"])
    dropped = profile_metadata(result)["profile_model"]["dropped_or_added_lines"]
    assert dropped["unknown fact id"] == 2 and dropped["no fact id"] == 1  # 3 bad lines in the one written


def test_an_override_the_model_left_out_is_still_in_the_profile(small_lake: Path, stub: StubServer) -> None:  # noqa: F811
    memory = Memory(settings=load_settings(small_lake))
    made = memory.remember("ann", "My name is Ann.", type="identity", slot="name", value="Ann")
    override_id = made["fact_id"][0]
    stub.responder = responder(skip_overrides=True)
    result = materialize(small_lake)

    assert result.success
    _facts, _edges, profiles = tables(small_lake)
    latest = profiles.sort("version").row(-1, named=True)
    assert latest["writer"] == "stub-model"
    [line] = [line for line in latest["lines"] if override_id in line["fact_ids"]]
    assert line["is_override"] and line["text"] == "My name is Ann."  # the assembled line
    assert all(f["kind"] == "OVERRIDE" for f in listed(stub.requests[-1])[:1])  # overrides listed first
    first_of_section = next(x for x in latest["lines"] if x["section"] == line["section"])
    assert first_of_section["fact_ids"] == [override_id]  # overrides first in their section
    assert any(t["text"].startswith("Model: ") for t in latest["lines"])
    assert profile_metadata(result)["profile_model"]["dropped_or_added_lines"]["overrides_added"] >= 1


def test_server_errors_fall_back_to_the_assembled_profile_and_the_run_succeeds(small_lake: Path,  # noqa: F811
                                                                                stub: StubServer) -> None:
    stub.default = 500
    result = materialize(small_lake)

    assert result.success
    facts, edges, profiles = tables(small_lake)
    assert profiles["writer"].unique().to_list() == ["assembled"]
    assembled = profile_versions(facts, edges, load_settings(small_lake).profile_regenerate_threshold)
    assert profiles.equals(assembled)  # nothing lost: exactly the profile without a model
    meta = profile_metadata(result)
    assert meta["profile_model"]["fallbacks"] == 1 and meta["profile_model"]["model_calls"] == 0
    assert "HTTP 500" in meta["fallback_note"]
    calls = stub.calls
    assert 0 < calls <= 5  # retries, then the breaker opens (5 consecutive failures)
    assert Lake(load_settings(small_lake).lake_dir).read(PROFILE_CACHE).height == 0  # failures are not cached

    # The endpoint is back (after the breaker's cool-down): the next run writes with the model.
    stub.default = "valid"
    import time

    time.sleep(0.6)
    result = materialize(small_lake)
    assert result.success
    assert tables(small_lake)[2].sort("version")["writer"].to_list() == ["assembled", "stub-model"]


def test_a_rerun_over_unchanged_facts_makes_no_call(small_lake: Path, stub: StubServer) -> None:  # noqa: F811
    materialize(small_lake)
    first = tables(small_lake)[2]
    assert stub.calls == 1

    result = materialize(small_lake)
    assert stub.calls == 1  # counted at the server: nothing was sent
    assert tables(small_lake)[2].equals(first)
    meta = profile_metadata(result)["profile_model"]
    assert meta["model_calls"] == 0 and meta["cache_hits"] == 1

    # A new fact changes the newest version only: exactly one more call.
    Memory(settings=load_settings(small_lake)).remember("ann", "I like green tea.", type="preference",
                                                        value="green tea")
    materialize(small_lake)
    profiles = tables(small_lake)[2]
    assert stub.calls == 2
    # the version that was the newest keeps the model's lines from the cache; the new newest is written
    assert profiles.sort("version")["writer"].to_list() == ["assembled", "stub-model", "stub-model"]


def test_without_an_endpoint_the_profile_is_assembled_as_before(small_lake: Path,  # noqa: F811
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMLAKE_CORE_BASE_URL", raising=False)
    result = materialize(small_lake)
    facts, edges, profiles = tables(small_lake)
    assert profiles.equals(profile_versions(facts, edges, load_settings(small_lake).profile_regenerate_threshold))
    assert profile_metadata(result)["writer"] == "assembled from active facts (no core model call)"
    assert not Lake(load_settings(small_lake).lake_dir).files(PROFILE_CACHE)
