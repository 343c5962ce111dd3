"""`remember` always writes what the user said and reports what it wrote; the profile shows it at once.

The home uses the packaged embedding model: with it "I live in Montreal" reads like the plan to move to
Montreal (the case where `remember` once only confirmed the plan and wrote no home city).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from memlake.api import Memory
from memlake.facts.fold import Candidate, FoldConfig, fold
from memlake.facts.overrides import read_overrides
from memlake.facts.profile import profile_versions
from memlake.facts.said_as_is import as_said
from memlake.lake import Lake
from memlake.schemas import FACT_EDGES, FACTS, PROFILES
from memlake.settings import Settings, load_settings
from pipelines.cli import app

T0 = datetime(2024, 6, 1, 9, 0, tzinfo=UTC)
PLAN = "The user plans to move to Montreal (around 2024-07-31)."


def said(day: int, type_: str, content: str, slot: str | None = None, value: str | None = None) -> Candidate:
    return Candidate(agent_id="carol", type=type_, subject="user", content=content, slot=slot, value=value,
                     created_at=T0 + timedelta(days=day), conversation_id=f"c{day}", message_ids=(f"c{day}-m",))


def folded(tmp_path: Path, statements: list[Candidate]) -> Settings:
    """A home whose lake holds carol's facts, edges and profiles, folded and built as a run would."""
    settings = load_settings(tmp_path / "home")
    settings.ensure_dirs()
    result = fold(statements, config=FoldConfig.from_settings(settings))
    lake = Lake(settings.lake_dir)
    lake.write(FACTS, result.facts)
    lake.write(FACT_EDGES, result.edges)
    lake.write(PROFILES, profile_versions(result.facts, result.edges, settings.profile_regenerate_threshold))
    return settings


PLANNED = [said(0, "fact", "The user works at Acme.", "employer", "Acme"),
           said(5, "commitment", PLAN, value="move to Montreal")]


@pytest.fixture
def planned(tmp_path: Path) -> Settings:
    """Carol told of her plan to move to Montreal, and of her employer; no home city yet."""
    return folded(tmp_path, PLANNED)


def test_remember_writes_the_new_city_after_a_plan_and_reports_it(planned: Settings) -> None:
    memory = Memory(settings=planned)
    made = memory.remember("carol", "I live in Montreal")
    assert made.select("change", "slot", "value", "status").rows() == [("new fact", "home_city", "Montreal", "active")]
    assert made["closed"][0].to_list() and PLAN in made["closed"][0][0]  # the plan it carried out
    current = memory.facts("carol")
    assert current.filter(pl.col("slot") == "home_city")["value"].to_list() == ["Montreal"]
    assert PLAN not in current["content"].to_list()
    plan = memory.history(made["fact_id"][0], "carol").filter(pl.col("content") == PLAN)
    assert plan["status"].to_list() == ["superseded"]  # the city's history keeps the plan it carried out


def test_remember_reports_a_new_version_with_the_old_and_new_values_then_a_confirmation(tmp_path: Path) -> None:
    settings = folded(tmp_path, [said(0, "fact", "The user lives in Toronto.", "home_city", "Toronto")])
    memory = Memory(settings=settings)
    made = memory.remember("carol", "I moved to Montreal")
    assert made.select("change", "value", "previous_value").rows() == [("new version", "Montreal", "Toronto")]
    assert made["version"][0] == made["previous_version"][0] + 1
    again = memory.remember("carol", "I live in Montreal")
    assert again.select("change", "fact_id", "value").rows() == [("confirmed", made["fact_id"][0], "Montreal")]


def test_the_cli_says_what_remember_wrote(tmp_path: Path) -> None:
    settings = folded(tmp_path, [said(0, "fact", "The user lives in Toronto.", "home_city", "Toronto"),
                                 said(5, "commitment", PLAN, value="move to Montreal")])
    home = ["--agent", "carol", "--home", str(settings.home)]
    out = CliRunner().invoke(app, ["remember", "I live in Montreal", *home])
    assert out.exit_code == 0, out.output
    assert "new version of" in out.output and "home_city: Toronto -> Montreal" in out.output, out.output
    assert "closed" in out.output and "plans to move to Montreal" in out.output, out.output
    again = CliRunner().invoke(app, ["remember", "I live in Montreal", *home])
    assert again.exit_code == 0 and "confirmed" in again.output and "home_city=Montreal" in again.output, again.output


def test_the_profile_shows_remember_and_reject_at_once(planned: Settings) -> None:
    memory = Memory(settings=planned)
    before = memory.profile("carol")
    assert "Montreal" in before["text"][0] and PLAN in before["text"][0]
    memory.remember("carol", "I live in Montreal")
    profile = memory.profile("carol")
    assert profile["contributions"][0] > before["contributions"][0]  # as the next run will write it
    assert "The user lives in Montreal." in profile["text"][0] and PLAN not in profile["text"][0]
    employer = memory.facts("carol").filter(pl.col("slot") == "employer")["fact_id"][0]
    memory.reject("carol", employer)
    assert "Acme" not in memory.profile("carol")["text"][0]
    # what the next run writes from the same statements and logs is what the read showed
    run = fold(PLANNED, read_overrides(planned, "carol"), config=FoldConfig.from_settings(planned))
    written = profile_versions(run.facts, run.edges, planned.profile_regenerate_threshold).sort("version").tail(1)
    shown = memory.profile("carol")
    assert shown.select("version", "contributions", "text").rows() == written.select(
        "version", "contributions", "text").rows()


def test_remember_writes_every_fact_a_statement_holds(tmp_path: Path) -> None:
    """"I work at Initech as a senior data scientist" is an employer and a job title: both are written, though
    the employer was known already (a confirmation) and the title is new."""
    settings = folded(tmp_path, [said(0, "fact", "The user works at Initech.", "employer", "Initech")])
    memory = Memory(settings=settings)
    made = memory.remember("carol", "I work at Initech as a senior data scientist")
    assert sorted(made.select("change", "slot", "value").rows()) == [
        ("confirmed", "employer", "Initech"), ("new fact", "job_title", "senior data scientist")]
    assert memory.facts("carol").filter(pl.col("slot") == "job_title")["value"].to_list() == [
        "senior data scientist"]


def test_a_slot_told_with_its_details_is_written_once(tmp_path: Path) -> None:
    """A stranger's trial: "Actually I live in Clifton in Bristol, not Bath" wrote the new home and, beside it, the
    whole sentence as said ("Actually the user lives in Clifton in Bristol, not Bath."), so the profile listed the
    home twice."""
    settings = folded(tmp_path, [said(0, "fact", "The user lives in Bath.", "home_city", "Bath")])
    memory = Memory(settings=settings)
    made = memory.remember("carol", "Actually I live in Clifton in Bristol, not Bath.")
    assert made.select("change", "slot", "value").rows() == [("new version", "home_city", "Clifton")]


def profile_sections(memory: Memory, agent_id: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    for line in memory.profile(agent_id)["lines"][0]:
        sections.setdefault(line["section"], []).append(line["text"])
    return sections


@pytest.mark.parametrize("statement, unread_part", [
    # a stranger's trial: the job was written, the move was not
    ("My sister Giulia moved to York, she works at York Hospital", "York"),
    ("My sister Giulia took up rowing, she works at York Hospital", "rowing"),
    ("I'm vegetarian, these days I mostly cook Thai food", "Thai food"),
])
def test_remember_writes_every_statement_it_was_given_and_reports_each(
        tmp_path: Path, statement: str, unread_part: str) -> None:
    settings = folded(tmp_path, [said(0, "fact", "The user works at Acme.", "employer", "Acme")])
    made = Memory(settings=settings).remember("carol", statement)
    written = " ".join(made["content"].to_list())
    assert unread_part in written.replace("York Hospital", ""), made.select("change", "content").rows()
    assert set(made["change"].to_list()) <= {"new fact", "new version", "confirmed"}
    assert not any(content.startswith(("I ", "I'm", "My ")) for content in made["content"].to_list())


def test_a_remembered_statement_no_rule_reads_is_shown_in_the_third_person_under_its_section(tmp_path: Path) -> None:
    """A stranger's trial: "I just drink my coffee black these days" was listed verbatim under Identity. What the
    rules do not read is written as said, about the user in the third person, typed by its structure."""
    settings = folded(tmp_path, [said(0, "fact", "The user works at Acme.", "employer", "Acme")])
    memory = Memory(settings=settings)
    for statement in ("I just drink my coffee black these days", "I'm left-handed",
                      "I'm learning Portuguese in the evenings", "I can't stand loud restaurants"):
        memory.remember("carol", statement)
    sections = profile_sections(memory, "carol")
    every_line = [text for texts in sections.values() for text in texts]
    assert not [text for text in every_line if text.startswith(("I ", "I'm", "My "))], sections
    assert "The user just drinks their coffee black these days." in every_line
    assert "The user is left-handed." in sections["identity"]
    assert "The user is learning Portuguese in the evenings." in sections["work"]  # a skill
    assert "The user can't stand loud restaurants." in every_line


@pytest.mark.parametrize(("statement", "written"), [
    ("I got a new bike", "The user got a new bike."),  # was "gots": a past with no -ed
    ("I went to the coast with my partner", "The user went to the coast with their partner."),
    ("We adopted a cat and we love her", "The user and others adopted a cat and they love her."),
    ("Our neighbours are loud and I'm tired of it", "The user's neighbours are loud and they're tired of it."),
])
def test_a_statement_written_as_said_is_in_the_third_person_as_the_distillers_facts_are(statement: str,
                                                                                          written: str) -> None:
    """`remember` wrote "gots", "wents" and "they'm": its own verb and pronoun swaps, not the distiller's."""
    assert as_said(statement)["content"] == written


def test_remember_replaces_starts_the_new_value_when_said_and_ends_the_old_then(tmp_path: Path) -> None:
    """A stranger's trial: `remember --replaces` gave the new value the old value's start date, as if the user had
    always lived there. Told as a new value, it starts when it is said and the old one ends then."""
    settings = folded(tmp_path, [said(0, "fact", "The user lives in Toronto.", "home_city", "Toronto")])
    memory = Memory(settings=settings)
    toronto = memory.facts("carol").filter(pl.col("slot") == "home_city")["fact_id"][0]
    told_at = datetime.now(UTC)
    made = memory.remember("carol", "I live in Montreal now", replaces=toronto)
    assert made.select("change", "value").rows() == [("new version", "Montreal")]
    history = memory.history(toronto, "carol").sort("version")
    old, new = history.row(0, named=True), history.row(-1, named=True)
    assert (old["value"], new["value"]) == ("Toronto", "Montreal")
    assert new["valid_from"].date() == told_at.date()
    assert old["valid_from"].date() == T0.date() and old["valid_until"] == new["valid_from"]


@pytest.mark.parametrize("statement", [
    "I moved from Toronto to Montreal last month.",
    "We got the keys to our new place in Montreal and moved in on Saturday.",
    "Left Toronto for good, I live in Montreal now.",
])
def test_one_remember_of_a_move_writes_one_home_fact_and_ends_the_old(tmp_path: Path, statement: str) -> None:
    """A stranger's trial: one `remember` of a move wrote three facts (the new home, the move as said, the old city
    left) and ended one of them. The move is the home's next value: one fact, the old home ended."""
    settings = folded(tmp_path, [said(0, "fact", "The user lives in Toronto.", "home_city", "Toronto")])
    memory = Memory(settings=settings)
    made = memory.remember("carol", statement)
    assert made.select("change", "slot", "value").rows() == [("new version", "home_city", "Montreal")]
    current = memory.facts("carol")
    assert current.filter(pl.col("slot") == "home_city")["value"].to_list() == ["Montreal"]
    assert not [c for c in current["content"].to_list() if "Toronto" in c]
