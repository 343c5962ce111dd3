"""The facts and profile assets, materialized into a tmp_path lake, and the whole pipeline on the samples.

The sample test runs the real pipeline (`run_landing`, hashing embedder) on
data/samples/demo and checks what the issue asks of working memory: the
current home city and employer are the new ones, `as_of` before a change
returns the old ones, `history` shows both with dates and source message ids,
dropping the same export again adds no fact, and a correction override wins
over a later extraction.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
import polars as pl
import pytest

from assets import facts as fact_assets
from memlake.api import Memory
from memlake.facts.quality import validate_facts
from memlake.lake import Lake
from memlake.schemas import EPISODES, FACT_EDGES, FACTS, PROFILES, TURNS
from memlake.settings import load_settings, write_home_setting
from resources import CoreModelResource, HashEmbedderResource, LakeResource
from tests.conftest import REPO

SAMPLES = REPO / "data" / "samples" / "demo"
UTC0 = datetime(2024, 1, 1, tzinfo=UTC)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def turn(conversation: str, message: str, role: str, content: str, when: str, ingested: str) -> dict:
    return {
        "agent_id": "ann", "conversation_id": conversation, "message_id": message, "turn_index": int(message[-1]),
        "role": role, "speaker": role, "content": content, "created_at": at(when), "created_at_inferred": False,
        "conversation_started_at": at(when), "title": conversation, "source_format": "jsonl",
        "source_file": "ann/x.jsonl", "source_sha256": "x", "content_sha256": "x", "ingested_at": at(ingested),
    }


def candidate(content: str, slot: str | None, value: str, message_ids: list[str], **extra: object) -> dict:
    return {"type": extra.get("type", "fact"), "subject": "user", "slot": slot, "value": value, "content": content,
            "confidence": 0.9, "importance": 0.6, "tags": [], "valid_from": extra.get("valid_from"),
            "valid_until": None, "message_ids": message_ids}


def episode(conversation: str, started: str, ended: str, candidates: list[dict]) -> dict:
    return {"agent_id": "ann", "conversation_id": conversation, "title": conversation,
            "conversation_started_at": at(started), "conversation_ended_at": at(ended), "summary": "s",
            "fact_candidates": candidates, "message_ids": [], "ingested_at": at("2025-01-01T00:00:00")}


@pytest.fixture
def small_lake(tmp_path: Path) -> Path:
    """Two conversations of agent `ann`: Berlin then a move to Lisbon; an assistant-only and an undated candidate."""
    home = tmp_path / "home"
    lake = Lake(load_settings(home).lake_dir)
    lake.write_partition(TURNS, "2024-01-10", [
        turn("c1", "c1-m1", "user", "I live in Berlin.", "2024-01-10T09:00:00", "2025-01-01T00:00:00"),
        turn("c1", "c1-m2", "assistant", "You like jazz.", "2024-01-10T09:01:00", "2025-01-01T00:00:00"),
    ])
    lake.write_partition(TURNS, "2024-06-10", [
        turn("c2", "c2-m1", "user", "I moved to Lisbon last week.", "2024-06-10T18:00:00", "2025-01-01T00:00:00"),
    ])
    lake.write_partition(EPISODES, "2024-01-10", [episode("c1", "2024-01-10T09:00:00", "2024-01-10T09:01:00", [
        candidate("The user lives in Berlin.", "home_city", "Berlin", ["c1-m1"]),
        candidate("The user likes jazz.", None, "jazz", ["c1-m2"], type="preference"),  # the assistant said it
    ])])
    lake.write_partition(EPISODES, "2024-06-10", [episode("c2", "2024-06-10T18:00:00", "2024-06-10T18:05:00", [
        candidate("The user moved to Lisbon.", "home_city", "Lisbon", ["c2-m1"], valid_from="2024-06-03"),
        candidate("The user enjoys cycling.", None, "cycling", [], type="preference"),  # no message id
    ])])
    return home


def materialize(home: Path) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [fact_assets.facts, fact_assets.profiles, fact_assets.facts_expectations],
        resources={
            "lake": LakeResource(home=str(home)),
            "embedder": HashEmbedderResource(),
            "core_model": CoreModelResource(home=str(home)),
        },
        instance=dg.DagsterInstance.ephemeral(),
    )


def test_the_assets_are_unpartitioned_eager_lake_writers_with_a_blocking_suite() -> None:
    from assets.shared import LAKE_WRITERS

    for asset in (fact_assets.facts, fact_assets.profiles):
        assert asset.partitions_def is None and asset.op.pool == LAKE_WRITERS
    # the facts wait for the day tables they read to be rebuilt first (tests/pipelines/test_days_in_step.py)
    labels = {c.get_label() for c in fact_assets.facts.automation_conditions_by_key.values()}
    assert labels == {"eager, after the day tables it reads"}
    assert {c.get_label() for c in fact_assets.profiles.automation_conditions_by_key.values()} == {"eager"}
    assert set(fact_assets.facts.keys) == {fact_assets.FACTS_KEY, fact_assets.EDGES_KEY}
    assert [c.blocking for c in fact_assets.facts_expectations.check_specs] == [True]


def test_the_assets_fold_episodes_into_facts_edges_and_profiles(small_lake: Path) -> None:
    result = materialize(small_lake)
    assert result.success
    assert [(e.check_name, e.passed) for e in result.get_asset_check_evaluations()] == [("facts_expectations", True)]
    lake = Lake(load_settings(small_lake).lake_dir)
    facts, edges, profiles = lake.read(FACTS), lake.read(FACT_EDGES), lake.read(PROFILES)

    home = facts.filter(pl.col("slot") == "home_city").sort("version")
    assert home["value"].to_list() == ["Berlin", "Lisbon"]
    assert home["status"].to_list() == ["superseded", "active"]
    berlin, lisbon = home.row(0, named=True), home.row(1, named=True)
    # created_at is when it was said (the message), never when it was ingested.
    assert berlin["created_at"] == at("2024-01-10T09:00:00") and lisbon["created_at"] == at("2024-06-10T18:00:00")
    assert berlin["ingested_at"] == at("2025-01-01T00:00:00")
    assert berlin["valid_until"] == lisbon["valid_from"] == at("2024-06-03T00:00:00")
    assert berlin["superseded_by"] == lisbon["fact_id"] and lisbon["source_message_ids"] == ["c2-m1"]
    assert edges.select("edge_type", "from_version", "to_version").rows() == [("update", 2, 1)]
    # Facts come only from the user: the assistant's "You like jazz" made none.
    assert "jazz" not in " ".join(facts["content"].to_list())
    # A candidate without message ids is dated by the end of its conversation.
    cycling = facts.filter(pl.col("content").str.contains("cycling")).row(0, named=True)
    assert cycling["created_at"] == at("2024-06-10T18:05:00")

    mats = {e.asset_key.to_user_string(): e for e in result.get_asset_materialization_events()}
    metadata = mats["facts/facts"].event_specific_data.materialization.metadata
    assert metadata["dagster/row_count"].value == 3
    assert metadata["skipped_candidates"].value == {"not said by the user": 1}
    assert set(mats) == {"facts/facts", "facts/fact_edges", "profile/profiles"}

    assert profiles.height >= 1
    latest = profiles.sort("version").row(-1, named=True)
    cited = {fid for line in latest["lines"] for fid in line["fact_ids"]}
    assert cited <= set(facts["fact_id"].to_list())
    assert "Lisbon" in latest["text"] and "Berlin" not in latest["text"]


def test_a_rerun_over_the_same_inputs_writes_the_same_tables(small_lake: Path) -> None:
    lake = Lake(load_settings(small_lake).lake_dir)
    materialize(small_lake)
    first = (lake.read(FACTS), lake.read(FACT_EDGES), lake.read(PROFILES))
    materialize(small_lake)
    for before, after in zip(first, (lake.read(FACTS), lake.read(FACT_EDGES), lake.read(PROFILES)), strict=True):
        assert before.equals(after)


def test_the_suite_catches_each_broken_rule(small_lake: Path) -> None:
    materialize(small_lake)
    facts = Lake(load_settings(small_lake).lake_dir).read(FACTS)
    assert validate_facts(facts).success
    active = facts.filter(pl.col("status") == "active").row(0, named=True)
    broken = pl.concat([
        facts,
        pl.DataFrame([{**active, "confidence": 1.5}], schema=facts.schema),  # duplicate id+version, bad confidence
        pl.DataFrame([{**active, "fact_id": "f_x", "version": 1, "importance": -0.1, "superseded_by": "f_gone",
                       "valid_until": UTC0}], schema=facts.schema),  # valid_until before valid_from
        pl.DataFrame([{**facts.filter(pl.col("slot") == "home_city").row(0, named=True), "fact_id": "f_y",
                       "status": "active"}], schema=facts.schema),  # a second active version of the home city
    ])
    result = validate_facts(broken)
    assert not result.success
    failed = {(f["expectation"], f["kwargs"].get("column") or f["kwargs"].get("column_list")) for f in result.failures}
    assert ("expect_compound_columns_to_be_unique", "['fact_id', 'version']") in failed
    assert ("expect_column_values_to_be_between", "confidence") in failed
    assert ("expect_column_values_to_be_between", "importance") in failed
    assert ("expect_column_values_to_be_in_set", "superseded_by_exists") in failed
    assert ("expect_column_values_to_be_in_set", "slot_chain_one_active") in failed
    assert any(f["expectation"] == "expect_column_pair_values_a_to_be_greater_than_b" for f in result.failures)


# ---------------------------------------------------------------------------------------------- samples


def sample_home(home: Path):  # type: ignore[no-untyped-def]
    """`home` after one pipeline run over data/samples/demo, and a function running the pipeline again."""
    from pipelines.runs import run_landing
    from resources import build_resources

    home.mkdir(parents=True, exist_ok=True)
    write_home_setting(home, "embedding_model", "hash")  # the home's own setting: its resources read it there
    settings = load_settings(home)
    settings.ensure_dirs()
    shutil.copytree(SAMPLES, settings.landing_dir / "demo")
    instance = dg.DagsterInstance.ephemeral()
    resources = {**build_resources(settings), "lake": LakeResource(home=str(home)), "embedder": HashEmbedderResource()}

    def run() -> object:
        outcome = run_landing(settings, resources=resources, instance=instance)
        assert outcome.success and not outcome.failed_checks, outcome
        return outcome

    run()
    return settings, run


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory):
    """The sample home after one pipeline run over data/samples/demo."""
    return sample_home(tmp_path_factory.mktemp("samples") / "home")


def current(memory: Memory, slot: str, as_of: str | None = None) -> list[str]:
    frame = memory.facts("demo", subject="user", as_of=as_of)
    return frame.filter(pl.col("slot") == slot)["value"].to_list()


def test_samples_current_home_and_employer_are_the_new_ones(demo) -> None:
    memory = Memory(settings=demo[0])
    assert current(memory, "home_city") == ["Lisbon"]
    assert current(memory, "employer") == ["Northwind Labs"]


def test_samples_as_of_before_a_change_returns_the_old_values(demo) -> None:
    memory = Memory(settings=demo[0])
    assert current(memory, "home_city", "2024-05-01") == ["Berlin"]
    assert current(memory, "employer", "2024-05-01") == ["Acme Robotics"]
    assert current(memory, "home_city", "2024-07-01") == ["Lisbon"]
    assert current(memory, "employer", "2024-07-01") == ["Acme Robotics"]
    assert memory.facts("demo", as_of="2023-12-01").height == 0  # nothing said yet


def test_samples_history_shows_both_with_dates_and_user_message_ids(demo) -> None:
    memory = Memory(settings=demo[0])
    user_messages = set(memory.turns("demo").filter(pl.col("role") == "user")["message_id"].to_list())
    for slot, old, new in (("home_city", "Berlin", "Lisbon"), ("employer", "Acme Robotics", "Northwind Labs")):
        fact_id = memory.facts("demo").filter(pl.col("slot") == slot)["fact_id"][0]
        linked = memory.history(fact_id, "demo")
        history = linked.filter(pl.col("fact_id") == fact_id)
        assert history["value"].to_list() == [old, new]
        assert history["status"].to_list() == ["superseded", "active"]
        first, second = history.row(0, named=True), history.row(1, named=True)
        # "I left Acme Robotics at the end of August", then started at Northwind Labs on September 2
        left = first["valid_until"] if slot == "employer" else second["valid_from"]
        assert first["valid_from"] < first["valid_until"] == left <= second["valid_from"] <= second["created_at"]
        # the plan (to move to Lisbon) and the states (interviewing at Northwind Labs) the new value carried out
        # are in its history, closed the day it began
        carried_out = linked.filter(pl.col("value").str.contains(new) & (pl.col("fact_id") != fact_id))
        assert carried_out.height >= 1
        assert set(carried_out["status"]) == {"superseded"}
        assert set(carried_out["valid_until"]) == {second["valid_from"]}
        for row in (first, second):
            assert row["source_message_ids"] and set(row["source_message_ids"]) <= user_messages
            assert row["source_conversation_ids"]
    # The history read and --history agree.
    with_history = memory.facts("demo", subject="user", include_history=True).filter(pl.col("slot") == "home_city")
    assert sorted(with_history["value"].to_list()) == ["Berlin", "Lisbon"]


def test_samples_dropping_the_same_export_again_adds_no_fact(demo) -> None:
    settings, run = demo
    lake = Lake(settings.lake_dir)
    before = lake.read(FACTS)
    shutil.copy(SAMPLES / "claude_export.json", settings.landing_dir / "demo" / "claude_export (copy).json")
    run()
    after = lake.read(FACTS)
    assert after.height == before.height
    assert after.equals(before)


def test_samples_a_correction_override_wins_over_a_later_extraction(demo) -> None:
    settings, run = demo
    memory = Memory(settings=settings)
    home_id = memory.facts("demo").filter(pl.col("slot") == "home_city")["fact_id"][0]
    made = memory.remember("demo", "Actually I live in Porto.", replaces=home_id)
    assert made["value"].to_list() == ["Porto"] and made["source_interface"].to_list() == ["override"]
    assert current(memory, "home_city") == ["Porto"]  # visible before any run
    # A later conversation says otherwise; the user's correction still wins after the run.
    later = [
        {"conversation_id": "late-1", "message_id": "late-1-m1", "role": "user", "speaker": "Priya",
         "content": "I moved to Madrid last month.", "created_at": "2025-03-01T10:00:00Z", "title": "Moving"},
        {"conversation_id": "late-1", "message_id": "late-1-m2", "role": "assistant", "speaker": "Assistant",
         "content": "Congratulations on the move!", "created_at": "2025-03-01T10:00:30Z"},
    ]
    (settings.landing_dir / "demo" / "later.jsonl").write_text("\n".join(json.dumps(r) for r in later) + "\n")
    run()
    memory = Memory(settings=settings)
    assert current(memory, "home_city") == ["Porto"]
    history = memory.history(home_id, "demo")
    madrid = history.filter(pl.col("value") == "Madrid")
    assert madrid.height == 1, history.select("version", "value", "status")
    madrid_row = madrid.row(0, named=True)
    assert madrid_row["status"] == "superseded" and madrid_row["superseded_by"] == home_id
    assert madrid_row["source_message_ids"] == ["late-1-m1"]
    # Said before the correction was written (though ingested after it): the correction, written later,
    # replaces it retroactively, so Madrid is true at no time and Porto holds from Madrid's start.
    assert madrid_row["valid_until"] == madrid_row["valid_from"]
    porto = history.filter(pl.col("status") == "active").row(0, named=True)
    assert porto["value"] == "Porto" and porto["valid_from"] == madrid_row["valid_from"]
    lisbon = history.filter(pl.col("value") == "Lisbon").row(0, named=True)
    assert lisbon["valid_until"] == madrid_row["valid_from"]
    profile = memory.profile("demo")
    assert profile.height == 1 and "Porto" in profile["text"][0]


def cited(memory: Memory) -> list[str]:
    """The fact ids the latest profile's lines cite, in order."""
    lines = memory.profile("demo")["lines"][0]
    return list(dict.fromkeys(fid for line in lines for fid in line["fact_ids"]))


def test_samples_forget_reject_and_remember_reach_the_lake_and_profile_on_a_run_with_no_new_chats(
    tmp_path: Path,
) -> None:
    """What `forget`, `reject` and `remember` wrote is folded by the next `memlake run` even when no chat
    came in: the forgotten fact leaves the lake and the profile, the rejected one is rejected, the new
    home city is current; a run after that folds nothing again."""
    settings, run = sample_home(tmp_path / "home")
    memory = Memory(settings=settings)
    facts = memory.facts("demo")
    home_id = facts.filter(pl.col("slot") == "home_city")["fact_id"][0]
    forgotten, rejected = [fid for fid in cited(memory) if fid in set(facts["fact_id"]) - {home_id}][:2]
    memory.forget("demo", fact_id=forgotten)
    # the profile forgets at once too, every version of it, as the next run will write it
    for version in memory.profile("demo")["version"][0], 1:
        shown = memory.profile("demo", version)
        assert forgotten not in {f for line in shown["lines"][0] for f in line["fact_ids"]}
        assert forgotten not in shown["text"][0] and shown["text"][0].startswith("## ")
    memory.reject("demo", rejected)
    memory.remember("demo", "I moved to Porto last week.")

    outcome = run()
    # a forgotten fact takes the message it was read from: that message's day is built again, and the facts folded
    said_on = Memory(settings=settings).sql("SELECT DISTINCT day FROM transcripts.turns", agent_id="demo")["day"]
    assert not outcome.new_files and len(outcome.days) == 1 and outcome.days[0] in set(said_on.cast(pl.String))
    assert {"facts/facts", "profile/profiles", "search/fact_index"} <= set(outcome.materialized)
    lake = Lake(settings.lake_dir).read(FACTS)
    assert forgotten not in lake["fact_id"].to_list()
    # (the rejected fact may have an older version, superseded before: its newest version is the rejected one)
    assert lake.filter(pl.col("fact_id") == rejected).sort("version")["status"].to_list()[-1] == "rejected"
    assert "active" not in set(lake.filter(pl.col("fact_id") == rejected)["status"])
    user_home = (pl.col("subject") == "user") & (pl.col("slot") == "home_city") & (pl.col("status") == "active")
    assert lake.filter(user_home)["value"].to_list() == ["Porto"]
    memory = Memory(settings=settings)
    assert forgotten not in cited(memory) and rejected not in cited(memory)
    assert "Porto" in memory.profile("demo")["text"][0]

    again = run()
    assert not again.refolded and again.materialized == ["transcripts/landing_manifest"]


def test_samples_a_lake_built_again_from_landing_keeps_what_was_forgotten_forgotten(tmp_path: Path) -> None:
    """The lake is derived from the landing files and the logs: deleting it and running again must not bring
    back facts of a forgotten conversation (the rebuilt manifest sees every file anew, today)."""
    settings, run = sample_home(tmp_path / "home")
    facts = Memory(settings=settings).facts("demo")
    alone = facts.filter(pl.col("source_conversation_ids").list.len() == 1)
    conversation = alone["source_conversation_ids"][0][0]
    # the versions it alone said (a slot's chain stays, its version before the forgotten one current again)
    said_there = set(keys(alone.filter(pl.col("source_conversation_ids").list.first() == conversation)))
    Memory(settings=settings).forget("demo", conversation_id=conversation)
    run()
    assert not said_there & set(keys(Memory(settings=settings).facts("demo")))

    shutil.rmtree(settings.lake_dir)
    shutil.rmtree(settings.lancedb_dir)
    run()
    rebuilt = Memory(settings=settings)
    assert rebuilt.facts("demo").height > 0
    assert not said_there & set(keys(rebuilt.facts("demo")))
    assert not said_there & set(rebuilt.search("lives plans works", "demo", scope="facts", k=50)["key"])


def keys(facts: pl.DataFrame) -> list[str]:
    """Fact versions as `fact_id@version`, as a fact search's `key` names them."""
    return (facts["fact_id"] + "@" + facts["version"].cast(pl.String)).to_list()


def test_samples_profiles_built_by_older_rules_are_built_again_by_a_run_with_no_new_chats(tmp_path: Path) -> None:
    """A home whose profiles older profile rules built gets them rebuilt by the next `memlake run`, though no
    chat came in: the latest profile then leaves out Project Heron's launch (said once, of a project, in a chat
    with an assistant: a candidate), the move's plan not at all (carried out), and keeps the coming half marathon
    current. A run after that rebuilds nothing."""
    from memlake.facts.profile import PROFILE_RULES_STAMP

    settings, run = sample_home(tmp_path / "home")
    lake = Lake(settings.lake_dir)
    lake.write(PROFILES, lake.read(PROFILES), stamp={PROFILE_RULES_STAMP: "profile-2"})  # before issue 23

    outcome = run()
    assert outcome.refolded and not outcome.new_files and not outcome.days
    assert "profile/profiles" in set(outcome.materialized)
    lines = Memory(settings=settings).profile("demo")["lines"][0]
    sections = {line["text"]: line["section"] for line in lines}
    assert "Project Heron launched on 2024-03-14." not in sections
    held_back = Memory(settings=settings).facts("demo", candidates=True)["content"]
    assert "Project Heron launched on 2024-03-14." in held_back
    # the move was carried out: the plan is history (in the city's history), not a line, and the city is Lisbon
    assert "The user plans to move from Berlin to Lisbon (around 2024-06-01)." not in sections
    assert [text for text, section in sections.items() if section == "places" and "Lisbon" in text]
    # the half marathon was said once in a chat with an assistant: a candidate, in no profile line either
    assert "The user plans to run the Lisbon half marathon in October 2024." in held_back

    again = run()
    assert not again.refolded and again.materialized == ["transcripts/landing_manifest"]


def test_samples_a_profile_version_that_is_not_there_is_an_error_naming_the_latest(demo, monkeypatch, capsys) -> None:
    from typer.testing import CliRunner

    from pipelines.cli import app
    from tests.pipelines.test_cli import typed

    settings, _ = demo
    memory = Memory(settings=settings)
    latest = memory.profile("demo")["version"][0]
    home = ["--home", str(settings.home)]
    message = f"agent 'demo' has no profile version 99; the latest is {latest}"
    with pytest.raises(ValueError, match=message):  # in a notebook as on the command line
        memory.profile("demo", 99)
    for version in ("4", 0, True):
        with pytest.raises(ValueError, match="a profile version must be a whole number from 1"):
            memory.profile("demo", version)  # type: ignore[arg-type]
    assert memory.profile("nobody").height == 0  # no profile yet: nothing, not an error
    code, printed = typed(monkeypatch, capsys, "profile", "--agent", "demo", "--version", "99", *home)
    assert code == 2 and printed == f"error: {message}\n"
    first = CliRunner().invoke(app, ["profile", "--agent", "demo", "--version", "1", *home])
    assert first.exit_code == 0 and first.output.startswith("profile v1 of demo")


# ---------------------------------------------------------------------------------------------- several values


def test_two_siblings_pass_the_blocking_check_and_every_agent_gets_a_profile(settings, monkeypatch) -> None:
    """Issue 20 (1): "My brother Tom" then "My brother Ken", run twice with `memlake run`: both runs succeed,
    both brothers are current facts, and the profile is built (the blocking check failed every run)."""
    from typer.testing import CliRunner

    from pipelines.cli import app
    from tests.conftest import land

    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")
    said = [("c1", "2024-03-01T10:00:00Z", "My brother Tom is a carpenter."),
            ("c2", "2024-04-01T10:00:00Z", "My brother Ken moved to Oslo last year.")]
    land(settings, "ann", "chat.jsonl", "".join(
        json.dumps({"conversation_id": c, "role": "user", "content": text, "created_at": when}) + "\n"
        for c, when, text in said))
    land(settings, "bob", "chat.jsonl", json.dumps(
        {"conversation_id": "b1", "role": "user", "content": "I live in Paris.", "created_at": "2024-03-02T10:00:00Z"}
    ) + "\n")
    runner = CliRunner()
    for _ in range(2):
        ran = runner.invoke(app, ["run", "--home", str(settings.home)])
        assert ran.exit_code == 0, ran.output
        assert "fail" not in ran.output.lower(), ran.output

    memory = Memory(settings.home)
    siblings = memory.facts("ann").filter(pl.col("slot") == "sibling")
    assert sorted(siblings["value"].to_list()) == ["Ken", "Tom"]
    for agent in ("ann", "bob"):
        assert memory.profile(agent).height == 1, agent
    assert all(name in memory.profile("ann")["text"][0] for name in ("Tom", "Ken")), memory.profile("ann")["text"][0]
    assert "Paris" in memory.profile("bob")["text"][0]


def chat_line(conversation: str, when: str, text: str) -> str:
    return json.dumps({"conversation_id": conversation, "role": "user", "content": text, "created_at": when}) + "\n"


def test_a_fold_that_breaks_one_agents_chain_holds_back_that_agent_only_and_names_its_rows(
    settings, monkeypatch
) -> None:
    """Issue 20 (1): one agent's broken facts (a fold defect, simulated: two active home cities) do not stop the
    run. The other agents get their new facts and profile; that agent keeps its facts of the last good run, and
    `memlake run` names the rows that broke."""
    from typer.testing import CliRunner

    from pipelines.cli import app
    from tests.conftest import land

    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")
    land(settings, "ann", "one.jsonl", chat_line("a1", "2024-03-01T10:00:00Z", "I live in Berlin."))
    land(settings, "bob", "one.jsonl", chat_line("b1", "2024-03-01T11:00:00Z", "I live in Paris."))
    runner = CliRunner()
    assert runner.invoke(app, ["run", "--home", str(settings.home)]).exit_code == 0

    real_fold = fact_assets.fold

    def fold_with_a_defect(*args, **kwargs):  # every version of ann's home city active, as a broken rule would
        result = real_fold(*args, **kwargs)
        result.facts = result.facts.with_columns(
            pl.when((pl.col("agent_id") == "ann") & (pl.col("slot") == "home_city"))
            .then(pl.lit("active")).otherwise(pl.col("status")).alias("status"))
        return result

    monkeypatch.setattr(fact_assets, "fold", fold_with_a_defect)
    land(settings, "ann", "two.jsonl", chat_line("a2", "2024-04-01T10:00:00Z", "I moved to Lisbon."))
    land(settings, "bob", "two.jsonl", chat_line("b2", "2024-04-01T11:00:00Z", "I moved to Rome."))
    ran = runner.invoke(app, ["run", "--home", str(settings.home)])
    assert ran.exit_code == 0, ran.output
    ann_home = Memory(settings.home).facts("ann").filter(pl.col("slot") == "home_city")
    assert ann_home["value"].to_list() == ["Berlin"]  # the last good run's facts
    assert "facts of agent 'ann' held back" in ran.output
    assert "slot 'home_city'" in ran.output and ann_home["fact_id"][0] in ran.output, ran.output
    assert "'bob'" not in ran.output
    memory = Memory(settings.home)
    assert memory.facts("bob").filter(pl.col("slot") == "home_city")["value"].to_list() == ["Rome"]
    assert "Rome" in memory.profile("bob")["text"][0]
    assert "Berlin" in memory.profile("ann")["text"][0]


def test_the_blocking_check_names_the_rows_that_break_a_chain(small_lake: Path) -> None:
    """The backstop: a facts table with two active home cities fails the check, which names agent, subject,
    slot and fact ids."""
    materialize(small_lake)
    lake = Lake(load_settings(small_lake).lake_dir)
    facts = lake.read(FACTS).drop("day", strict=False)
    lake.write(FACTS, facts.with_columns(pl.lit("active").alias("status")))
    home_id = facts.filter(pl.col("slot") == "home_city")["fact_id"][0]

    result = fact_assets.facts_expectations(lake=LakeResource(home=str(small_lake)))
    assert not result.passed
    assert f"agent 'ann', subject 'user', slot 'home_city' = 'Berlin': fact {home_id} v1" in result.description
    assert "slot_chain_one_active" in result.description
