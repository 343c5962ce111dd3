"""The lint sweep at a fixed as_of: stale, redundant, orphan episodes, and contradictions judged by the offline
rules and by the core model (the real openai client against the local stub server)."""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest

from memlake.api import Memory
from memlake.distill.client import CoreConfig
from memlake.lake import Lake
from memlake.maintenance.judge import ModelJudge
from memlake.maintenance.sweep import run_sweep
from memlake.schemas import SWEEP_EDGES
from memlake.settings import load_settings
from tests.maintenance.helpers import AS_OF, days_ago, episode, fact, status_rows, write_home
from tests.openai_stub_server import StubServer

PLANTED = [
    fact("job1", "The user works at Google.", slot="employer", value="Google", said_days_ago=20),
    fact("job2", "The user works at Acme Robotics.", said_days_ago=5),
    fact("veg", "The user is vegetarian.", type="preference", slot="diet", value="vegetarian", said_days_ago=30),
    fact("steak", "The user had steak last night, loved it.", type="event", said_days_ago=2),
    fact("born1", "Leela was born on 1994-05-02.", subject="Leela", said_days_ago=10),
    fact("born2", "Leela was born on 1995-05-02.", subject="Leela", said_days_ago=3),
]
UNRELATED = [
    fact("paris", "The user lives in Paris.", slot="home_city", value="Paris", said_days_ago=12),
    fact("jazz", "The user likes jazz.", type="preference", said_days_ago=8),
    fact("hike", "The user loves hiking in the Alps.", type="preference", said_days_ago=6),
    fact("fly", "The user is afraid of flying.", said_days_ago=9),
    fact("planes", "The user loves flying planes.", said_days_ago=4),
]


def flags(lake) -> dict[str, str | None]:  # type: ignore[no-untyped-def]
    return {fact_id: row["flag"] for fact_id, row in status_rows(lake, "lint").items()}


def test_planted_contradictions_are_flagged_by_the_offline_judge_and_unrelated_facts_untouched(settings) -> None:
    lake = write_home(settings, PLANTED + UNRELATED)
    report = run_sweep(settings, "lint", AS_OF)
    found = flags(lake)
    assert {k for k, v in found.items() if v == "conflicting"} == {"job1", "job2", "veg", "steak", "born1", "born2"}
    assert all(found[k] is None for k in ("paris", "jazz", "hike", "fly", "planes"))
    assert report.counts["contradictions"] == 3
    rows = status_rows(lake, "lint")
    assert "diet" in rows["veg"]["reason"] and rows["veg"]["related_fact_ids"] == ["steak"]
    assert "exclusive slot employer" in rows["job2"]["reason"]
    assert {r["status"] for r in rows.values()} == {"active"}  # flag, never a silent overwrite


def test_a_conflicting_fact_reads_with_its_note_and_stays_current(settings) -> None:
    write_home(settings, PLANTED + UNRELATED)
    run_sweep(settings, "lint", AS_OF)
    facts = Memory(settings=settings).facts("ana")
    veg = facts.filter(pl.col("fact_id") == "veg").row(0, named=True)
    assert veg["status"] == "active" and veg["sweep_flag"] == "conflicting"
    assert veg["sweep_note"].startswith('conflicting: with "The user had steak last night, loved it."')
    assert facts.filter(pl.col("fact_id") == "jazz")["sweep_note"].to_list() == [None]


def test_a_judged_contradiction_is_a_contradict_edge_both_sides_history_shows(settings) -> None:
    lake = write_home(settings, PLANTED + UNRELATED)
    run_sweep(settings, "lint", AS_OF)
    edges = lake.read(SWEEP_EDGES).sort("from_fact_id")
    assert edges.select("edge_type", "from_fact_id", "to_fact_id").rows() == [
        ("contradict", "born2", "born1"), ("contradict", "job2", "job1"), ("contradict", "steak", "veg")]
    memory = Memory(settings=settings)
    veg, steak = memory.history("veg", "ana").row(0, named=True), memory.history("steak", "ana").row(0, named=True)
    assert veg["status"] == steak["status"] == "active"  # the default policy flags, never overwrites
    assert veg["conflicts"] == ["with steak v1: The user had steak last night, loved it. "
                                "(offline-rules-v1: diet: a meat-free diet and eating steak)"]
    assert steak["conflicts"] == ["with veg v1: The user is vegetarian. "
                                  "(offline-rules-v1: diet: a meat-free diet and eating steak)"]
    current = memory.facts("ana")
    assert current.filter(pl.col("fact_id") == "jazz")["conflicts"].to_list() == [[]]
    assert current.filter(pl.col("fact_id") == "job1")["conflicts"][0].to_list()[0].startswith("with job2 v1: ")


def test_the_supersede_policy_supersedes_the_older_side(settings, monkeypatch) -> None:
    monkeypatch.setenv("MEMLAKE_CONTRADICTION_POLICY", "supersede")
    superseding = load_settings(settings.home)
    write_home(superseding, PLANTED[:2] + UNRELATED)
    run_sweep(superseding, "lint", AS_OF)
    memory = Memory(settings=superseding)
    current = memory.facts("ana")["fact_id"].to_list()
    assert "job1" not in current and "job2" in current and "paris" in current
    old = memory.history("job1", "ana").row(0, named=True)  # superseded, and history says by what
    assert old["status"] == "superseded" and old["conflicts"][0].startswith("with job2 v1: The user works at Acme")
    assert Lake(superseding.lake_dir).read(SWEEP_EDGES).select("from_fact_id", "to_fact_id").rows() == [
        ("job2", "job1")]


def test_stale_redundant_and_orphans_are_flagged(settings) -> None:
    lake = write_home(settings, [
        fact("old", "The user went to a gig.", type="event", said_days_ago=40),  # over 2 x 14 days
        fact("tea", "The user likes green tea.", said_days_ago=20),
        fact("tea2", "The user likes green tea a lot.", said_days_ago=10),
        fact("mine", "The user went to a party.", type="event", said_days_ago=40, override=True),
    ], [episode("kept", "A chat."), episode("lost", "A chat whose turns are gone.")], turns_of=["kept"])
    report = run_sweep(settings, "lint", AS_OF)
    found = flags(lake)
    assert found == {"old": "stale", "tea": None, "tea2": "redundant", "mine": None}
    assert report.counts["orphan_episodes"] == 1 and report.counts["stale"] == 1


def judge_responder(request: dict[str, Any]) -> dict[str, Any]:
    """A model that reads the numbered pairs: flying fear vs loving flying, and vegetarian vs steak, conflict."""
    text = "\n".join(str(m.get("content") or "") for m in request["messages"] if m["role"] == "user")
    verdicts = []
    for number, a, b in re.findall(r"^(\d+)\. A: (.*) \| B: (.*)$", text, re.M):
        pair = f"{a} {b}"
        conflict = ("afraid of flying" in pair and "loves flying" in pair) or ("vegetarian" in pair
                                                                                and "steak" in pair)
        verdicts.append({"pair": int(number), "contradicts": conflict, "reason": "model says so"})
    return {"verdicts": verdicts}


@pytest.mark.usefixtures("fresh_breakers")
def test_the_model_judge_flags_what_the_rules_miss_in_batches_and_caches_by_pair(settings) -> None:
    lake = write_home(settings, PLANTED + UNRELATED)
    with StubServer(judge_responder) as stub:
        config = CoreConfig(base_url=stub.base_url, model="stub-model", backoff_seconds=0.01)
        report = run_sweep(settings, "lint", AS_OF, model_judge=ModelJudge(config, batch=2))
        calls = stub.calls
        asked = [len(re.findall(r"^\d+\. A: ", r["messages"][1]["content"], re.M)) for r in stub.requests]
        again = run_sweep(settings, "lint", days_ago(-1), model_judge=ModelJudge(config, batch=2))
        assert stub.calls == calls  # every pair's answer came from the cache
    rows = status_rows(lake, "lint")
    assert rows["fly"]["flag"] == rows["planes"]["flag"] == "conflicting"
    assert "stub-model: model says so" in rows["fly"]["reason"]
    assert "offline-rules-v1+stub-model" in rows["veg"]["reason"]
    assert all(rows[k]["flag"] is None for k in ("paris", "jazz", "hike"))
    assert calls >= 2 and max(asked) <= 2
    assert report.counts["judge_model_calls"] == calls and again.counts["judge_cache_hits"] == sum(asked)
    assert report.judge == "offline-rules-v1, stub-model"


def test_a_conflicting_facts_context_line_says_so(settings) -> None:
    from memlake.context.lines import fact_line

    write_home(settings, PLANTED + UNRELATED)
    run_sweep(settings, "lint", AS_OF)
    facts = Memory(settings=settings).facts("ana")
    veg = fact_line(facts.filter(pl.col("fact_id") == "veg").row(0, named=True))
    jazz = fact_line(facts.filter(pl.col("fact_id") == "jazz").row(0, named=True))
    assert veg.text.startswith("The user is vegetarian. (conflicting: with ") and jazz.text == "The user likes jazz."


def test_opposite_stances_on_the_same_thing_are_flagged_whatever_the_verb(settings) -> None:
    lake = write_home(settings, [
        fact("dogs", "The user loves dogs.", type="preference", said_days_ago=20),
        fact("nodogs", "The user doesn't like dogs.", type="preference", said_days_ago=5),
        fact("cats", "The user loves cats.", type="preference", said_days_ago=4),
        fact("olives", "The user hates olives.", type="preference", said_days_ago=9),
        fact("olives2", "The user enjoys olives.", type="preference", said_days_ago=3),
        fact("tea", "The user does not drink coffee.", said_days_ago=8),
        fact("tea2", "The user drinks green tea.", said_days_ago=2),
    ])
    run_sweep(settings, "lint", AS_OF)
    rows = status_rows(lake, "lint")
    assert {k for k, r in rows.items() if r["flag"] == "conflicting"} == {"dogs", "nodogs", "olives", "olives2"}
    assert rows["nodogs"]["related_fact_ids"] == ["dogs"] and "opposite stance" in rows["nodogs"]["reason"]
