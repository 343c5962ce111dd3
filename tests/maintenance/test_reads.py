"""What reads see after a sweep: an evicted fact leaves `Memory.context` and "now" reads, stays in history."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest

from memlake.api import Memory
from memlake.maintenance.sweep import run_sweep
from tests.conftest import land_samples

LATER = datetime(2030, 1, 1, tzinfo=UTC)  # years after the samples' chats: every extracted fact is idle


@pytest.fixture
def samples_home(settings, run_pipeline):
    land_samples(settings)
    assert run_pipeline().success
    return settings


def test_an_evicted_fact_leaves_the_context_block_but_stays_in_history(samples_home) -> None:
    memory = Memory(settings=samples_home)
    cycling = memory.facts("demo").filter(pl.col("content").str.contains("cycling"))
    assert cycling.height == 1 and cycling["slot"][0] is None
    assert "cycling" in memory.context("Do I still love cycling?", "demo").text
    memory.remember("demo", "I am allergic to cats")  # a user override: never evicted

    report = run_sweep(samples_home, "consolidation", LATER)

    assert report.counts["evicted"] >= 1
    block = memory.context("Do I still love cycling?", "demo")
    assert "allergic to cats" in block.text
    assert not any(cycling["fact_id"][0] in row["ref"] for row in block.provenance)
    assert cycling["fact_id"][0] not in memory.facts("demo")["fact_id"].to_list()
    history = memory.history(cycling["fact_id"][0], "demo").filter(pl.col("version") == cycling["version"][0])
    assert history["status"].to_list() == ["evicted"]
    assert history["sweep_note"][0].startswith("evicted: salience")
    # as of a day before the sweep, the fact was still there; where the user lives, a slot's value, never goes
    assert cycling["fact_id"][0] in memory.facts("demo", as_of="2025-01-01")["fact_id"].to_list()
    assert "Lisbon" in memory.context("where do I live now?", "demo").text


def test_an_evicted_fact_leaves_fact_search_the_tools_recall_and_the_profile(samples_home) -> None:
    from memlake.tools import MemoryTools

    memory = Memory(settings=samples_home)
    cycling = memory.facts("demo").filter(pl.col("content").str.contains("cycling"))["fact_id"][0]
    tools = MemoryTools(memory, "demo")

    def recalled(scope: str) -> list[str]:
        found = tools.call("recall", {"query": "I love cycling", "scope": scope, "limit": 50})
        assert found["ok"], found
        return [hit.get("fact_id") for hit in found["results"]]

    def profiled() -> list[str]:
        return [i for line in memory.profile("demo")["lines"][0] for i in line["fact_ids"]]

    assert cycling in memory.search("cycling", "demo", k=50, scope="facts")["fact_id"].to_list()
    assert cycling in recalled("facts") and cycling in recalled("all")
    assert cycling in profiled()

    run_sweep(samples_home, "consolidation", LATER)

    assert cycling not in memory.search("cycling", "demo", k=50, scope="facts")["fact_id"].to_list()
    assert cycling not in recalled("facts") and cycling not in recalled("all")
    assert cycling not in profiled() and "cycling" not in memory.profile("demo")["text"][0]
    lisbon = memory.search("Lisbon", "demo", k=50, scope="facts")["text"].to_list()
    assert any("Lisbon" in text for text in lisbon)  # a slot's value is never evicted: still found
    # as of before the sweep, fact search still finds it, as `facts(as_of=...)` does
    assert cycling in memory.search("cycling", "demo", k=50, scope="facts", as_of="2025-01-01")["fact_id"].to_list()


def test_old_chats_imported_today_are_not_evicted_for_their_age_by_a_sweep_now(samples_home) -> None:
    memory = Memory(settings=samples_home)
    cycling = memory.facts("demo").filter(pl.col("content").str.contains("cycling"))
    said, ingested = cycling["created_at"][0], cycling["ingested_at"][0]
    assert (ingested - said).days > 300  # chats from long before this home saw them

    report = run_sweep(samples_home, "consolidation", datetime.now(UTC))

    assert report.counts["evicted"] == 0
    assert cycling["fact_id"][0] in memory.facts("demo")["fact_id"].to_list()
    assert "cycling" in memory.context("Do I still love cycling?", "demo").text
