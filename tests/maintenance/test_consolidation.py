"""Consolidation at a fixed as_of: decay by kind, use refreshing a fact, promote, evict, merge, prune; reruns."""

from __future__ import annotations

import json

import polars as pl
import pytest

from memlake.access import record_access
from memlake.lake import Lake
from memlake.maintenance.sweep import run_sweep
from memlake.schemas import AUDIT, FACT_STATUS, REPORTS
from memlake.settings import load_settings
from tests.maintenance.helpers import AS_OF, days_ago, episode, fact, status_rows, write_home


def test_salience_decays_by_kind_from_when_it_was_said(settings) -> None:
    lake = write_home(settings, [fact("ev", "The user ran a 10k race.", type="event", said_days_ago=28),
                                 fact("id", "The user is a nurse.", type="identity", said_days_ago=28),
                                 fact("pref", "The user likes tea.", type="preference", said_days_ago=90)])
    run_sweep(settings, "consolidation", AS_OF)
    rows = status_rows(lake, "consolidation")
    assert rows["ev"]["salience"] == pytest.approx(0.6 * 0.25)  # two 14-day half-lives
    assert rows["id"]["salience"] == pytest.approx(0.6 * 0.5 ** (28 / 180))
    assert rows["pref"]["salience"] == pytest.approx(0.3)  # one 90-day half-life
    assert {r["status"] for r in rows.values()} == {"active"}  # all above the 0.1 floor


def test_a_use_in_the_access_log_refreshes_a_fact_but_not_a_use_after_as_of(settings) -> None:
    lake = write_home(settings, [fact("a", "The user likes tea.", said_days_ago=100),
                                 fact("b", "The user likes jazz.", said_days_ago=100)])
    record_access(settings, "ana", "facts", ["a@1"], at=days_ago(10))
    record_access(settings, "ana", "facts", ["b@1"], at=days_ago(-5))  # after as_of
    run_sweep(settings, "consolidation", AS_OF)
    rows = status_rows(lake, "consolidation")
    assert rows["a"]["last_active_at"] == days_ago(10) and rows["a"]["use_count"] == 1
    assert rows["b"]["last_active_at"] == days_ago(100) and rows["b"]["use_count"] == 0
    assert rows["a"]["salience"] > rows["b"]["salience"]


def test_idle_facts_below_the_floor_are_evicted_with_the_reason_but_never_an_override(settings) -> None:
    lake = write_home(settings, [
        fact("old", "The user went to a concert.", type="event", said_days_ago=120),
        fact("mine", "The user went to a gig.", type="event", said_days_ago=120, override=True),
        fact("new", "The user went to a play.", type="event", said_days_ago=2),
        fact("home", "The user lives in Porto.", slot="home_city", value="Porto", said_days_ago=900),
    ])
    report = run_sweep(settings, "consolidation", AS_OF)
    rows = status_rows(lake, "consolidation")
    assert rows["home"]["status"] == "active"  # a slot's value stays true, however idle
    assert rows["old"]["status"] == "evicted" and rows["old"]["reason"].startswith("evicted: salience")
    assert rows["mine"]["status"] == "active" and rows["mine"]["salience"] == pytest.approx(0.6)
    assert rows["new"]["status"] == "active"
    assert report.counts["evicted"] == 1
    audit = Lake(settings.lake_dir).read(AUDIT)
    assert audit.filter(pl.col("field") == "status").select("object_id", "old_value", "new_value").rows() == [
        ("old@1", "active", "evicted")]


def test_a_fact_that_recent_episodes_keep_coming_back_to_is_promoted_and_kept(settings) -> None:
    episodes = [episode(f"c{i}", "We talked about the marathon training plan.", ended_days_ago=3 + i)
                for i in range(3)]
    lake = write_home(settings, [fact("run", "The user is training for a marathon.", type="event",
                                      said_days_ago=200)], episodes)
    run_sweep(settings, "consolidation", AS_OF)
    row = status_rows(lake, "consolidation")["run"]
    assert row["flag"] == "promoted" and row["status"] == "active" and row["salience"] == pytest.approx(0.6)


def test_near_duplicate_episodes_are_merged_into_the_earlier(settings) -> None:
    lake = write_home(settings, [], [
        episode("first", "The user planned a trip to Kyoto in April with their sister.", ended_days_ago=9),
        episode("again", "The user planned a trip to Kyoto in April with their sister.", ended_days_ago=5),
        episode("other", "The user asked about sourdough starters.", ended_days_ago=4),
    ])
    report = run_sweep(settings, "consolidation", AS_OF)
    assert report.counts["merged_episodes"] == 1
    merged = lake.read(AUDIT).filter(pl.col("object_kind") == "episode")
    assert merged.select("object_id", "new_value").rows() == [("again", "merged")]
    assert "merged into first" in merged["reason"][0]


def test_pruning_is_off_by_default_and_a_retention_prunes_what_is_older(settings, monkeypatch) -> None:
    facts = [fact("old", "The user liked a band.", type="identity", said_days_ago=400),
             fact("mine", "The user is called Ana.", said_days_ago=400, override=True)]
    episodes = [episode("ancient", "An old chat.", ended_days_ago=400), episode("recent", "A new chat.")]
    write_home(settings, facts, episodes)
    assert run_sweep(settings, "consolidation", AS_OF).counts["pruned_episodes"] == 0
    monkeypatch.setenv("MEMLAKE_MAINTENANCE_RETENTION_DAYS", "365")
    later = load_settings(settings.home)
    report = run_sweep(later, "consolidation", days_ago(-1))
    assert report.counts["pruned_episodes"] == 1 and report.counts["pruned_facts"] == 1
    rows = status_rows(Lake(settings.lake_dir), "consolidation")
    assert rows["old"]["status"] == "evicted" and rows["old"]["reason"].startswith("pruned")
    assert rows["mine"]["status"] == "active"


def test_a_sweep_run_again_at_the_same_as_of_changes_nothing(settings) -> None:
    lake = write_home(settings, [fact("old", "The user went to a concert.", type="event", said_days_ago=120),
                                 fact("tea", "The user likes tea.", said_days_ago=10)],
                      [episode("a", "Same summary about tea."), episode("b", "Same summary about tea.")])
    run_sweep(settings, "consolidation", AS_OF)
    first = {t.name: lake.read(t) for t in (FACT_STATUS, AUDIT, REPORTS)}
    run_sweep(settings, "consolidation", AS_OF)
    second = {t.name: lake.read(t) for t in (FACT_STATUS, AUDIT, REPORTS)}
    assert first["fact_status"].equals(second["fact_status"]) and first["audit"].equals(second["audit"])
    steady = ["sweep_id", "kind", "as_of", "agents", "counts", "judge"]  # durations and ran_at are the clock's
    assert first["reports"].select(steady).equals(second["reports"].select(steady))
    assert json.loads(second["reports"]["counts"][0])["evicted"] == 1


def test_a_later_sweep_audits_only_what_changed(settings) -> None:
    lake = write_home(settings, [fact("ev", "The user went to a concert.", type="event", said_days_ago=20)])
    run_sweep(settings, "consolidation", AS_OF)
    assert lake.read(AUDIT).height == 0  # still active: nothing changed
    run_sweep(settings, "consolidation", days_ago(-60))
    audit = lake.read(AUDIT)
    assert audit.select("object_id", "old_value", "new_value").rows() == [("ev@1", "active", "evicted")]
    assert lake.read(REPORTS).height == 2


def test_an_imported_old_fact_is_idle_from_its_ingestion_and_before_it_from_when_it_was_said(settings) -> None:
    imported = {**fact("old", "The user went to a concert.", type="event", said_days_ago=400),
                "ingested_at": days_ago(2)}
    lake = write_home(settings, [imported, fact("native", "The user went to a play.", type="event",
                                                said_days_ago=400)])
    run_sweep(settings, "consolidation", AS_OF)
    rows = status_rows(lake, "consolidation")
    assert rows["old"]["status"] == "active" and rows["old"]["last_active_at"] == days_ago(2)
    assert rows["native"]["status"] == "evicted"  # said and held 400 days ago: idle all that time
    run_sweep(settings, "consolidation", days_ago(5))  # before this memory held it: idle from when it was said
    earlier = lake.read(FACT_STATUS).filter((pl.col("as_of") == days_ago(5)) & (pl.col("fact_id") == "old"))
    assert earlier["status"].to_list() == ["evicted"]
