"""`memlake remember --replaces` on one value of a multi-valued slot (a sibling), through real `memlake run`s.

Issue 20, follow-up of defect 1: replacing one brother held the agent's facts back on every later run, because
the facts check keyed the replaced chain by each row's own value while the fold kept the new value in the
replaced chain."""

import json
from datetime import UTC, datetime, timedelta

import polars as pl
import pytest
from typer.testing import CliRunner

from memlake.api import Memory
from memlake.facts.fold import Candidate, Folder, Override, chain_id, fold, slot_of
from memlake.facts.quality import broken_rows
from pipelines.cli import app
from tests.conftest import land


def chat_line(conversation: str, when: str, text: str) -> str:
    return json.dumps({"conversation_id": conversation, "role": "user", "content": text, "created_at": when}) + "\n"


def replace_ken(settings, monkeypatch, statement: str) -> tuple[CliRunner, str]:
    """Agent sibs2 said "My brother Tom ..." then, another day, "My brother Ken ..."; `memlake run`; then
    `memlake remember STATEMENT --replaces <Ken's fact id>` and two more runs, none holding the agent back.
    Returns the runner and Ken's fact id."""
    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")
    land(settings, "sibs2", "chat.jsonl",
         chat_line("c1", "2024-03-01T10:00:00Z", "My brother Tom is a carpenter.")
         # (only the sibling: "My brother Ken moved to Oslo" also says where Ken lives, a fact of Ken's own that
         # replacing the sibling fact leaves as it is)
         + chat_line("c2", "2024-04-01T10:00:00Z", "My brother Ken visited us last year."))
    runner = CliRunner()
    home = ["--home", str(settings.home)]
    ran = runner.invoke(app, ["run", *home])
    assert ran.exit_code == 0, ran.output
    siblings = Memory(settings.home).facts("sibs2").filter(pl.col("slot") == "sibling")
    ken = siblings.filter(pl.col("value") == "Ken")["fact_id"][0]

    remembered = runner.invoke(app, ["remember", statement, "--agent", "sibs2", "--replaces", ken, *home])
    assert remembered.exit_code == 0, remembered.output
    for _ in range(2):  # the first run folds the override; the second must not hold the agent back either
        ran = runner.invoke(app, ["run", *home])
        assert ran.exit_code == 0, ran.output
        assert "held back" not in ran.output, ran.output
        assert "fail" not in ran.output.lower(), ran.output
    return runner, ken


def sibling_rows(settings) -> tuple[list[tuple[str, str]], list[str]]:
    """(value, status) of every sibling version, sorted, and the values of the current sibling facts."""
    memory = Memory(settings.home)
    history = memory.facts("sibs2", include_history=True).filter(pl.col("slot") == "sibling")
    current = memory.facts("sibs2").filter(pl.col("slot") == "sibling")
    return sorted(zip(history["value"].to_list(), history["status"].to_list(), strict=True)), sorted(
        current["value"].to_list())


def test_replacing_one_brother_keeps_the_other_and_holds_nothing_back(settings, monkeypatch) -> None:
    runner, ken = replace_ken(settings, monkeypatch, "My brother is Bob")

    history, current = sibling_rows(settings)
    assert current == ["Bob", "Tom"]
    assert ("Ken", "superseded") in history and ("Bob", "active") in history and ("Tom", "active") in history
    replaced_chain = Memory(settings.home).facts("sibs2", include_history=True).filter(pl.col("fact_id") == ken)
    assert replaced_chain.filter(pl.col("status") == "active")["value"].to_list() == ["Bob"]
    home = ["--home", str(settings.home)]
    listed = runner.invoke(app, ["facts", "--agent", "sibs2", *home])
    # (Ken's own move, "Ken lives in Oslo", is a fact about Ken and stays: only the sibling was replaced)
    assert "sibling=Bob" in listed.output and "sibling=Tom" in listed.output and "sibling=Ken" not in listed.output
    profile = runner.invoke(app, ["profile", "--agent", "sibs2", *home])
    assert profile.exit_code == 0, profile.output
    assert "Tom" in profile.output and "Bob" in profile.output and "brother is Ken" not in profile.output, (
        profile.output)


def test_replacing_one_brother_by_the_other_leaves_that_brother_once(settings, monkeypatch) -> None:
    """"My brother is Tom" replacing Ken, when Tom is already known: Ken is superseded, Tom is current once."""
    runner, _ = replace_ken(settings, monkeypatch, "My brother is Tom")

    history, current = sibling_rows(settings)
    assert current == ["Tom"]
    assert ("Ken", "superseded") in history
    profile = runner.invoke(app, ["profile", "--agent", "sibs2", "--home", str(settings.home)])
    assert "Tom" in profile.output and "brother is Ken" not in profile.output, profile.output


# ---------------------------------------------------------------------------------------------- the fold alone

T0 = datetime(2024, 3, 1, 10, 0, tzinfo=UTC)


def brother(name: str, days: float, text: str = "") -> Candidate:
    return Candidate(agent_id="sibs2", type="relationship", subject="user", slot="sibling", value=name,
                     content=text or f"The user's brother is {name}.", created_at=T0 + timedelta(days=days),
                     conversation_id=f"c{days}", message_ids=(f"m{days}",))


def replace_by(fact_id: str, name: str, days: float) -> Override:
    return Override(override_id=f"o{days}", agent_id="sibs2", action="correct", written_at=T0 + timedelta(days=days),
                    fact_id=fact_id, slot="sibling", value=name, content=f"The user's brother is {name}.",
                    target_subject="user", target_slot="sibling")


def sibling_chain(name: str) -> str:
    return chain_id("sibs2", "user", slot_of("sibling", name), "relationship", "")


def current_siblings(facts: pl.DataFrame) -> list[str]:
    return sorted(facts.filter((pl.col("slot") == "sibling") & (pl.col("status") == "active"))["value"].to_list())


@pytest.mark.parametrize("resumed", [False, True], ids=["one fold", "resumed from the tables"])
def test_a_brother_said_again_after_a_replace_confirms_the_replacing_value(resumed: bool) -> None:
    """After Ken -> Bob, "my brother Bob" confirms Bob (no second Bob) and "my brother Ken" does not bring Ken
    back (the user's correction wins), whether the fold goes on in one pass or resumes from written tables."""
    before = [brother("Tom", 0), brother("Ken", 31), replace_by(sibling_chain("Ken"), "Bob", 40)]
    after = [brother("Bob", 50, "My brother Bob flies planes."), brother("Ken", 60, "My brother Ken called.")]
    if resumed:
        first = fold(before)
        facts = Folder.from_tables(first.facts, first.edges).add(after).facts_frame()
    else:
        facts = fold([*before, *after]).facts

    assert current_siblings(facts) == ["Bob", "Tom"]
    assert broken_rows(facts).height == 0, broken_rows(facts)


def test_the_check_still_finds_one_brother_current_twice() -> None:
    """The check keys chains as the fold does, so two current chains holding the same brother still break it."""
    facts = fold([brother("Tom", 0), brother("Ken", 31)]).facts
    twice = facts.with_columns(
        pl.when(pl.col("value") == "Ken").then(pl.lit("Tom")).otherwise(pl.col("value")).alias("value"))

    broken = broken_rows(twice)
    assert sorted(broken.filter(pl.col("rule") == "slot_chain_one_active")["value"].to_list()) == ["Tom", "Tom"]
