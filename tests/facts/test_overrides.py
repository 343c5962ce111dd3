"""User overrides and the forget log: the append-only logs, what the fold does with them, and the reads.

A remembered fact is visible to the next read without a run (reads fold the
log entries written since the last run on top of the tables).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from memlake.api import Memory
from memlake.facts.fold import Candidate, FoldConfig, Forget, Override, chain_id, fold
from memlake.facts.overrides import (
    read_forgets,
    read_overrides,
    write_forget,
    write_override,
)
from memlake.inputs import read_log
from memlake.lake import Lake
from memlake.schemas import FACT_EDGES, FACTS, OVERRIDES
from memlake.settings import Settings, load_settings
from pipelines.cli import app

T0 = datetime(2024, 1, 10, 9, 0, tzinfo=UTC)
HOME_ID = chain_id("ann", "user", "home_city", "fact", "")


def said(content: str, value: str | None, days: float, slot: str | None = "home_city", **extra: object) -> Candidate:
    return Candidate(
        agent_id=str(extra.get("agent_id", "ann")), type=str(extra.get("type", "fact")), subject="user", slot=slot,
        value=value, content=content, created_at=T0 + timedelta(days=days),
        ingested_at=T0 + timedelta(days=float(extra.get("ingested_days", days))),  # type: ignore[arg-type]
        conversation_id=str(extra.get("conversation", f"c{days}")), message_ids=(f"m{days}",),
    )


def override(action: str, days: float, **fields: object) -> Override:
    return Override(override_id=f"o{action}{days}", agent_id="ann", action=action,
                    written_at=T0 + timedelta(days=days), **fields)  # type: ignore[arg-type]


def rows(result, slot: str = "home_city") -> list[tuple]:  # type: ignore[no-untyped-def]
    frame = result.facts.filter(pl.col("slot") == slot).sort("version")
    return frame.select("version", "value", "status", "source_interface").rows()


# ---------------------------------------------------------------------------------------------- logs


@pytest.fixture
def home(tmp_path: Path) -> Settings:
    settings = load_settings(tmp_path / "home", embedding_model="hash")
    settings.ensure_dirs()
    return settings


def test_each_write_is_one_new_parquet_file_and_reads_come_back_in_order(home: Settings) -> None:
    first = write_override(home, "ann", "add", content="The user is vegan.", slot="diet", value="vegan",
                           at=datetime(2025, 1, 2, tzinfo=UTC))
    second = write_override(home, "ann", "reject", fact_id="f_1", at=datetime(2025, 1, 1, tzinfo=UTC))
    write_override(home, "bob", "add", content="Bob's fact.")
    files = sorted((home.inputs_dir / "overrides").glob("*.parquet"))
    assert len(files) == 3
    (home.inputs_dir / "overrides" / ".tmp-half-written").write_bytes(b"garbage")  # a killed write: ignored
    assert [o.override_id for o in read_overrides(home, "ann")] == [second.override_id, first.override_id]
    frame = read_log(home, OVERRIDES)
    assert frame.columns == OVERRIDES.schema.names and frame.height == 3
    assert read_overrides(home, "ann")[1] == first
    forget = write_forget(home, "ann", "conversation", "c1", reason="asked to")
    assert read_forgets(home, "ann") == [forget] and read_forgets(home, "bob") == []


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (("ann", "merge"), {"content": "x"}, "unknown override action"),
        (("ann", "add"), {}, "needs the fact's content"),
        (("ann", "correct"), {"content": "x"}, "needs the fact id"),
        (("ann", "reject"), {}, "needs the fact id"),
        (("../etc", "add"), {"content": "x"}, "invalid agent id"),
        (("ann", "add"), {"content": "x", "type": "rumour"}, "unknown fact type"),
        (("ann", "add"), {"content": "x", "confidence": 1.5}, "confidence must be in"),
        (("ann", "add"), {"content": "x", "valid_from": "2024-05-01", "valid_until": "2024-01-01"},
         "valid_until .* is not after valid_from"),
        (("ann", "add"), {"content": "x", "valid_from": "2024-05-01", "valid_until": "2024-05-01"},
         "valid_until .* is not after valid_from"),
    ],
)
def test_bad_overrides_are_refused_and_nothing_is_written(home: Settings, args, kwargs, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        write_override(home, *args, **kwargs)
    with pytest.raises(ValueError, match="needs its id|unknown forget scope"):
        write_forget(home, "ann", "fact")
    assert read_log(home, OVERRIDES).height == 0


# ---------------------------------------------------------------------------------------------- fold


def test_an_added_fact_is_an_active_override_version() -> None:
    result = fold([], [override("add", 1, content="The user is vegan.", slot="diet", value="vegan",
                                type="preference")])
    assert rows(result, "diet") == [(1, "vegan", "active", "override")]
    assert result.facts["override_ids"][0].to_list() == ["oadd1"]


def test_a_correction_replaces_the_fact_retroactively() -> None:
    result = fold(
        [said("The user lives in Berlin.", "Berlin", 0), said("The user moved to Lisbon.", "Lisbon", 5)],
        [override("correct", 10, fact_id=HOME_ID, content="The user lives in Porto.", value="Porto")],
    )
    assert rows(result) == [(1, "Berlin", "superseded", "extraction"), (2, "Lisbon", "superseded", "extraction"),
                            (3, "Porto", "active", "override")]
    lisbon, porto = result.facts.sort("version").row(1, named=True), result.facts.sort("version").row(2, named=True)
    assert lisbon["valid_until"] == lisbon["valid_from"] == porto["valid_from"]  # Lisbon was never true
    assert result.edges.filter(pl.col("reason") == "user correction").select("from_version", "to_version").rows() == [
        (3, 2)
    ]


def test_a_correction_wins_over_a_later_extraction_and_a_repeat_confirms_it() -> None:
    result = fold(
        [
            said("The user lives in Berlin.", "Berlin", 0),
            said("The user moved to Madrid.", "Madrid", 20),  # said after the correction
            said("The user lives in Porto.", "Porto", 30),  # agrees with it
        ],
        [override("correct", 10, fact_id=HOME_ID, content="The user lives in Porto.", value="Porto")],
    )
    assert rows(result) == [(1, "Berlin", "superseded", "extraction"), (2, "Porto", "active", "override"),
                            (3, "Madrid", "superseded", "extraction")]
    facts = result.facts.sort("version")
    porto, madrid = facts.row(1, named=True), facts.row(2, named=True)
    assert porto["confirmation_count"] == 1 and porto["source_message_ids"] == ["m30"]
    assert madrid["superseded_by"] == HOME_ID and madrid["valid_until"] == madrid["valid_from"]
    assert result.stats.blocked_by_override == 1


def test_a_rejected_fact_stays_rejected_when_extracted_again_but_a_new_value_is_taken() -> None:
    result = fold(
        [
            said("The user lives in Berlin.", "Berlin", 0),
            said("The user lives in Berlin.", "Berlin", 20, conversation="again"),
            said("The user moved to Oslo.", "Oslo", 30),
        ],
        [override("reject", 10, fact_id=HOME_ID)],
    )
    assert rows(result) == [(1, "Berlin", "rejected", "extraction"), (2, "Oslo", "active", "extraction")]
    berlin = result.facts.sort("version").row(0, named=True)
    assert berlin["confirmation_count"] == 1 and berlin["override_ids"] == ["oreject10"]


def test_an_override_finds_its_target_by_slot_when_the_id_changed_and_reports_lost_ones() -> None:
    result = fold(
        [said("The user lives in Berlin.", "Berlin", 0)],
        [
            override("correct", 5, fact_id="f_old_id", target_subject="user", target_slot="home_city",
                     content="The user lives in Bonn.", value="Bonn"),
            override("reject", 6, fact_id="f_nowhere"),
        ],
    )
    assert rows(result)[-1] == (2, "Bonn", "active", "override")
    assert result.stats.unresolved_overrides == ["oreject6"]


def test_forgetting_a_fact_drops_its_chain_until_it_is_said_again() -> None:
    forget = Forget("x1", "ann", "fact", T0 + timedelta(days=10), target=HOME_ID)
    result = fold(
        [said("The user lives in Berlin.", "Berlin", 0), said("The user moved to Rome.", "Rome", 5),
         said("The user lives in Oslo.", "Oslo", 15)],
        forgets=[forget],
    )
    assert rows(result) == [(1, "Oslo", "active", "extraction")]
    assert result.edges.height == 0


def test_forgetting_a_conversation_or_an_agent_drops_what_was_ingested_before() -> None:
    candidates = [
        said("The user lives in Berlin.", "Berlin", 0, conversation="c-a"),
        said("The user is vegan.", "vegan", 1, slot="diet", conversation="c-b"),
        said("The user is vegan.", "vegan", 2, slot="diet", conversation="c-b", ingested_days=40),  # re-sent later
        said("Bob lives in Paris.", "Paris", 0, agent_id="bob"),
    ]
    forgets = [Forget("x1", "ann", "conversation", T0 + timedelta(days=30), target="c-b")]
    result = fold(candidates, forgets=forgets)
    assert rows(result, "diet") == [(1, "vegan", "active", "extraction")]
    assert result.facts.filter(pl.col("slot") == "diet")["source_message_ids"][0].to_list() == ["m2"]
    gone = fold(candidates, forgets=[Forget("x2", "ann", "agent", T0 + timedelta(days=30))])
    assert gone.facts["agent_id"].to_list() == ["ann", "bob"] and gone.facts["value"].to_list()[0] == "vegan"
    assert gone.stats.dropped_by_forget == 2


def test_a_forget_applied_again_on_the_tables_a_run_wrote_changes_nothing() -> None:
    # Reads may apply a forget the run already folded (see memlake.facts.reads): it must be a no-op then.
    from memlake.facts.fold import Folder

    candidates = [
        said("The user lives in Berlin.", "Berlin", 0, conversation="c-a"),
        said("The user moved to Rome.", "Rome", 5, conversation="c-b"),
        said("The user lives in Oslo.", "Oslo", 15, conversation="c-c"),  # said again after the fact forget
        said("The user is vegan.", "vegan", 2, slot="diet", conversation="c-d", ingested_days=40),  # re-sent
    ]
    forgets = [Forget("x1", "ann", "fact", T0 + timedelta(days=10), target=HOME_ID),
               Forget("x2", "ann", "conversation", T0 + timedelta(days=30), target="c-d")]
    run = fold(candidates, forgets=forgets)
    assert sorted(run.facts.select("value", "status").rows()) == [("Oslo", "active"), ("vegan", "active")]
    again = Folder.from_tables(run.facts, run.edges).add(forgets)
    assert again.facts_frame().equals(run.facts) and again.edges_frame().equals(run.edges)


def test_forgetting_a_conversation_on_the_tables_keeps_the_other_versions_of_a_chain() -> None:
    from memlake.facts.fold import Folder

    candidates = [said("The user lives in Berlin.", "Berlin", 0, conversation="c-a"),
                  said("The user moved to Rome.", "Rome", 5, conversation="c-b")]
    forget = Forget("x1", "ann", "conversation", T0 + timedelta(days=30), target="c-b")
    read = Folder.from_tables(fold(candidates).facts, fold(candidates).edges).add([forget])
    assert [(v.value, v.status, v.valid_until) for v in read.versions()] == [("Berlin", "active", None)]
    assert read.edges_frame().height == 0
    assert rows(fold(candidates, forgets=[forget])) == [(1, "Berlin", "active", "extraction")]  # what a run writes


# ---------------------------------------------------------------------------------------------- reads


@pytest.fixture
def folded_home(home: Settings) -> Settings:
    """A home whose facts tables hold Berlin (Jan) then Lisbon (June) for agent ann, and a fact of bob's."""
    result = fold(
        [
            said("The user lives in Berlin.", "Berlin", 0),
            said("The user moved to Lisbon.", "Lisbon", 150),
            said("The user likes tea.", "tea", 1, slot=None, type="preference"),
            said("Bob lives in Paris.", "Paris", 0, agent_id="bob"),
        ],
        config=FoldConfig(),
    )
    lake = Lake(home.lake_dir)
    lake.write(FACTS, result.facts)
    lake.write(FACT_EDGES, result.edges)
    return home


def test_a_history_is_read_only_within_the_agent_it_names(folded_home: Settings) -> None:
    """Issue 20 (3): fact ids are derived (agent, subject, slot), so anyone can compute bob's; a history read
    needs the agent, and another agent's fact id reads as an unknown one does."""
    memory = Memory(settings=folded_home)
    bobs_home = chain_id("bob", "user", "home_city", "fact", "")  # derived as anyone could
    assert memory.history(bobs_home, "bob")["value"].to_list() == ["Paris"]
    with pytest.raises(TypeError):
        memory.history(bobs_home)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="agent id"):
        memory.history(bobs_home, None)  # type: ignore[arg-type]
    as_ann = memory.history(bobs_home, "ann")
    assert as_ann.height == 0 and as_ann.equals(memory.history("f_0000000000000000", "ann"))
    assert memory.history(HOME_ID, "ann")["value"].to_list() == ["Berlin", "Lisbon"]


def test_the_cli_shows_one_facts_history_and_names_an_unknown_fact(folded_home: Settings) -> None:
    """A user who sees a fact id in `memlake facts` reads that one fact's versions, not every fact's."""
    runner = CliRunner()
    home = ["--home", str(folded_home.home)]
    out = runner.invoke(app, ["history", HOME_ID, "--agent", "ann", *home])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert len(lines) == 2 and "home_city=Berlin" in lines[0] and "[superseded]" in lines[0]
    assert "home_city=Lisbon" in lines[1] and "[active]" in lines[1] and "tea" not in out.output
    as_json = runner.invoke(app, ["history", HOME_ID, "--agent", "ann", "--json", *home])
    assert [json.loads(line)["value"] for line in as_json.output.splitlines()] == ["Berlin", "Lisbon"]
    bobs_home = chain_id("bob", "user", "home_city", "fact", "")
    (folded_home.landing_dir / "ann").mkdir(parents=True)  # ann has memory (the fixture wrote facts, no turns)
    out = runner.invoke(app, ["history", bobs_home, "--agent", "ann", *home])
    assert out.exit_code == 2 and "has no fact" in out.output and "Paris" not in out.output
    out = runner.invoke(app, ["history", HOME_ID, "--agent", "nobody", *home])
    assert out.exit_code == 1 and "has no memory here" in out.output


def test_a_remembered_fact_is_visible_to_the_next_read_without_a_run(folded_home: Settings) -> None:
    memory = Memory(settings=folded_home)
    assert memory.facts("ann").filter(pl.col("slot") == "home_city")["value"].to_list() == ["Lisbon"]
    made = memory.remember("ann", "I moved to Paris last week")
    assert made.select("slot", "value", "status", "source_interface").rows() == [
        ("home_city", "Paris", "active", "override")
    ]
    now = memory.facts("ann")
    assert now.filter(pl.col("slot") == "home_city")["value"].to_list() == ["Paris"]
    history = memory.history(HOME_ID, "ann")
    assert history["value"].to_list() == ["Berlin", "Lisbon", "Paris"]
    assert history["valid_until"][1] == history["valid_from"][2]  # a move, not a correction: Lisbon was true
    # Reading never crosses agents, and the lake itself is untouched until a run folds the log.
    assert memory.facts("bob")["value"].to_list() == ["Paris"] and memory.facts("bob").height == 1
    assert Lake(folded_home.lake_dir).read(FACTS).filter(pl.col("source_interface") == "override").height == 0
    # What a run would write from the same inputs agrees with what the read showed.
    rerun = fold(
        [said("The user lives in Berlin.", "Berlin", 0), said("The user moved to Lisbon.", "Lisbon", 150),
         said("The user likes tea.", "tea", 1, slot=None, type="preference")],
        read_overrides(folded_home, "ann"),
    )
    assert rerun.facts.filter(pl.col("status") == "active").sort("fact_id").select("fact_id", "value").equals(
        now.sort("fact_id").select("fact_id", "value")
    )


def test_remember_replaces_and_reject_by_id(folded_home: Settings) -> None:
    memory = Memory(settings=folded_home)
    with pytest.raises(ValueError, match="has no fact"):
        memory.remember("ann", "I live in Porto", replaces="f_unknown")
    with pytest.raises(ValueError, match="has no fact"):
        memory.remember("ann", "I live in Porto", replaces=chain_id("bob", "user", "home_city", "fact", ""))
    corrected = memory.remember("ann", "Actually I live in Porto", replaces=HOME_ID)
    assert corrected.select("fact_id", "version", "value").rows() == [(HOME_ID, 3, "Porto")]
    tea = memory.facts("ann", type="preference")["fact_id"][0]
    rejected = memory.reject("ann", tea)
    assert rejected["status"].to_list() == ["rejected"]
    assert memory.facts("ann", type="preference").height == 0
    assert memory.history(tea, "ann")["status"].to_list() == ["rejected"]


def test_a_fact_whose_validity_has_ended_is_not_current(folded_home: Settings) -> None:
    memory = Memory(settings=folded_home)
    memory.remember("ann", "I am in Tokyo for a conference.", slot="staying_in", value="Tokyo",
                    valid_from="2024-01-01", valid_until="2024-06-01")
    memory.remember("ann", "I am learning the cello.", slot="learning", value="cello", valid_from="2024-01-01")
    current = memory.facts("ann")["value"].to_list()
    assert "cello" in current and "Tokyo" not in current
    assert "Tokyo" in memory.facts("ann", include_history=True)["value"].to_list()  # a past fact keeps its history


def test_as_of_returns_what_was_true_and_said_by_then(folded_home: Settings) -> None:
    memory = Memory(settings=folded_home)

    def home_at(when: object) -> list[str]:
        return memory.facts("ann", as_of=when).filter(pl.col("slot") == "home_city")["value"].to_list()

    assert home_at("2024-01-09") == []  # not said yet
    assert home_at("2024-01-10") == ["Berlin"]  # a bare date means the end of that day
    assert home_at(datetime(2024, 3, 1)) == ["Berlin"]  # naive means UTC
    assert home_at("2024-06-08T12:00:00+00:00") == ["Lisbon"]
    assert home_at("2025-01-01") == ["Lisbon"]
    history = memory.facts("ann", as_of="2024-03-01", include_history=True)
    assert history.filter(pl.col("slot") == "home_city")["value"].to_list() == ["Berlin"]  # Lisbon not said yet
    with pytest.raises(ValueError):
        memory.facts("../x")


def test_the_cli_remembers_lists_and_profiles(folded_home: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")
    runner = CliRunner()
    home = ["--home", str(folded_home.home)]
    out = runner.invoke(app, ["remember", "I work at Globex", "--agent", "ann", *home])
    assert out.exit_code == 0, out.output
    assert "remembered" in out.output and "employer=Globex" in out.output
    out = runner.invoke(app, ["facts", "--agent", "ann", *home])
    assert "employer=Globex" in out.output and "home_city=Lisbon" in out.output and "Berlin" not in out.output
    out = runner.invoke(app, ["facts", "--agent", "ann", "--as-of", "2024-03-01", *home])
    assert "home_city=Berlin" in out.output and "Globex" not in out.output
    out = runner.invoke(app, ["facts", "--agent", "ann", "--history", *home])
    assert "[superseded]" in out.output and "home_city=Berlin" in out.output
    out = runner.invoke(app, ["remember", "I live in Porto", "--agent", "ann", "--replaces", HOME_ID, *home])
    assert out.exit_code == 0 and "home_city=Porto" in out.output
    out = runner.invoke(app, ["profile", "--agent", "ann", *home])
    assert out.exit_code == 0 and "no profile yet" in out.output  # profiles are written by a run


def test_a_held_back_agent_still_sees_what_it_remembered_since(folded_home: Settings) -> None:
    """A run that held back ann's facts (a broken chain) read the logs but kept ann's older rows: a fact ann
    remembered before that run is still seen by reads, though the stamp says every entry was folded."""
    from memlake.facts.overrides import FOLDED_ENTRIES, log_entries
    from memlake.facts.quality import HELD_BACK

    memory = Memory(settings=folded_home)
    memory.remember("ann", "I moved to Paris last week")
    lake = Lake(folded_home.lake_dir)
    held = '{"ann": ["a broken row"]}'
    lake.write(FACTS, lake.read(FACTS), stamp={FOLDED_ENTRIES: log_entries(folded_home), HELD_BACK: held})
    fresh = Memory(settings=folded_home)
    assert fresh.facts("ann").filter(pl.col("slot") == "home_city")["value"].to_list() == ["Paris"]
    assert fresh.facts("bob")["value"].to_list() == ["Paris"]
