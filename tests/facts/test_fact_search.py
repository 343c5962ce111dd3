"""Fact search sees what fact reads see: a remembered, corrected, rejected or forgotten fact at once, no run needed.

Until a run folds the logs, an agent with pending overrides or forgets is searched in an index of the facts a
read sees; after the run, the run's `search/fact_index` gives the same answer.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from memlake.api import Memory
from memlake.embedding import HashEmbedder, embedding_cache
from memlake.facts.fold import Candidate, FoldConfig, chain_id, fold
from memlake.facts.overrides import FOLDED_ENTRIES, log_entries, read_forgets, read_overrides
from memlake.facts.reads import agent_facts
from memlake.lake import Lake
from memlake.schemas import FACT_EDGES, FACT_INDEX, FACTS
from memlake.search import FACT_INDEX_SCHEMA, fact_index_rows
from memlake.settings import Settings, load_settings
from memlake.vectors import VectorStore

T0 = datetime(2024, 1, 10, 9, 0, tzinfo=UTC)
HOME_ID = chain_id("ann", "user", "home_city", "fact", "")


def said(content: str, value: str, days: float, slot: str | None = "home_city", agent: str = "ann",
         type_: str = "fact") -> Candidate:
    when = T0 + timedelta(days=days)
    return Candidate(agent_id=agent, type=type_, subject="user", slot=slot, value=value, content=content,
                     created_at=when, ingested_at=when, conversation_id=f"c{days:g}", message_ids=(f"m{days:g}",))


CANDIDATES = [
    said("The user lives in Berlin.", "Berlin", 0),
    said("The user moved to Lisbon.", "Lisbon", 150),
    said("The user likes green tea.", "green tea", 1, slot=None, type_="preference"),
    said("Bob lives in Paris.", "Paris", 0, agent="bob"),
]


def run(settings: Settings) -> None:
    """What a pipeline run does for the facts layer: fold every input, write the tables, rebuild the fact index."""
    entries = log_entries(settings)  # named before the logs are read, as the facts asset does
    result = fold(CANDIDATES, read_overrides(settings), read_forgets(settings), FoldConfig())
    lake = Lake(settings.lake_dir)
    lake.write(FACTS, result.facts, stamp={FOLDED_ENTRIES: entries})
    lake.write(FACT_EDGES, result.edges)
    embedder = HashEmbedder() if settings.embedding_model == "hash" else None
    VectorStore(settings.lancedb_dir).sync(
        FACT_INDEX, fact_index_rows(result.facts), base_schema=FACT_INDEX_SCHEMA, key="fact_key", scope="true",
        embed=embedder.embed if embedder else None, embedder=embedder.name if embedder else "none",
        dim=embedder.dim if embedder else 0, cache=embedding_cache(settings, embedder),
    )


def built_home(folder: Path, embedding_model: str) -> Settings:
    settings = load_settings(folder, embedding_model=embedding_model)
    settings.ensure_dirs()
    run(settings)
    return settings


@pytest.fixture(params=["hash", "none"], ids=["hybrid", "full-text-only"])
def home(tmp_path: Path, request: pytest.FixtureRequest) -> Settings:
    return built_home(tmp_path / "home", request.param)


def texts(memory: Memory, query: str, agent: str = "ann") -> list[str]:
    return memory.search(query, agent, scope="facts", k=5)["text"].to_list()


def test_a_remembered_fact_is_found_first_at_once_and_still_after_the_run(home: Settings) -> None:
    memory = Memory(settings=home)
    assert not any("Globex" in t for t in texts(memory, "Where does the user work?"))
    made = memory.remember("ann", "I work at Globex", tags="work")
    assert made["tags"].to_list() == [["work"]]  # one tag given as a string is one tag, not four letters
    hits = memory.search("Where does the user work?", "ann", scope="facts", k=5)
    assert "Globex" in hits["text"][0]
    assert hits["fact_id"][0] == made["fact_id"][0] and hits["status"][0] == "active"
    expected_mode = "hybrid" if home.embedding_model == "hash" else "full_text"
    assert hits["mode"][0] == expected_mode
    # the run's index is not written by a read; other agents are not touched
    assert VectorStore(home.lancedb_dir).count(FACT_INDEX, "ann") == 3
    assert not any("Globex" in t for t in texts(memory, "Where does the user work?", "bob"))
    run(home)
    assert not agent_facts(home, "ann").pending
    after = memory.search("Where does the user work?", "ann", scope="facts", k=5)
    assert "Globex" in after["text"][0] and after["fact_id"][0] == made["fact_id"][0]


def test_a_correction_replaces_the_old_value_in_fact_search(home: Settings) -> None:
    memory = Memory(settings=home)
    assert texts(memory, "Where does the user live?")[0] == "The user moved to Lisbon."
    memory.remember("ann", "Actually I live in Porto", replaces=HOME_ID)
    found = texts(memory, "Where does the user live?")
    assert "Porto" in found[0] and not any("Lisbon" in t or "Berlin" in t for t in found)


def test_a_fact_search_as_of_a_date_sees_what_a_fact_read_as_of_it_sees(home: Settings) -> None:
    """Before the move the user lived in Berlin: fact search as of then finds that version; after it, Lisbon.
    A fact remembered today is not found as of a day before it was said."""
    memory = Memory(settings=home)
    memory.remember("ann", "I work at Globex")
    for day, city in (("2024-03-01", "Berlin"), ("2024-07-01", "Lisbon")):
        hits = memory.search("Where does the user live? Where does she work?", "ann", scope="facts", k=5,
                             as_of=day)
        assert city in hits["text"][0], (day, hits["text"].to_list())
        read = memory.facts("ann", as_of=day)  # the same versions, each with the status a fact read gives it
        columns = ["fact_id", "version", "status"]
        assert set(hits.select(columns).rows()) <= set(read.select(columns).rows())
        assert hits.schema["version"] == read.schema["version"]
        assert not any("Globex" in t for t in hits["text"])
    assert memory.search("Where does the user live?", "ann", scope="facts", as_of="2024-03-01")["status"][0] == (
        "active")  # Berlin, in force then (superseded since): active then
    assert any("Globex" in t for t in texts(memory, "Where does she work?"))  # now
    assert memory.search("Where does the user live?", "ann", scope="facts", as_of="2023-12-01").height == 0


def test_a_fact_read_as_of_a_date_gives_each_version_its_status_then(home: Settings) -> None:
    """Berlin was the user's home on 2024-03-01: read as of then it is active, not its present `superseded`."""
    memory = Memory(settings=home)
    then = memory.facts("ann", as_of="2024-03-01").filter(pl.col("slot") == "home_city")
    assert then.select("value", "status").rows() == [("Berlin", "active")]
    assert memory.facts("ann", as_of="2024-03-01", include_history=True).filter(
        pl.col("slot") == "home_city").select("value", "status").rows() == [("Berlin", "active")]
    later = memory.facts("ann", as_of="2024-07-01", include_history=True).filter(pl.col("slot") == "home_city")
    assert later.select("value", "status").rows() == [("Lisbon", "active"), ("Berlin", "superseded")]


def test_a_fact_search_now_leaves_out_a_fact_whose_validity_has_ended_as_fact_reads_do(home: Settings) -> None:
    """A fact said to hold until a day now gone is not current: `facts()` leaves it out, and so does a search
    with no `as_of` (which means now), before the next run and after it."""
    memory = Memory(settings=home)
    memory.remember("ann", "The user is staying at the Hotel Astoria", valid_from="2024-05-13",
                    valid_until="2024-06-01")
    for state in ("pending", "folded"):
        assert not any("Astoria" in t for t in memory.facts("ann")["content"]), state
        assert not any("Astoria" in t for t in texts(memory, "Which hotel is the user staying at?")), state
        assert memory.history(memory.facts("ann", include_history=True).filter(
            pl.col("content").str.contains("Astoria"))["fact_id"][0], "ann").height == 1, state  # kept, as history
        run(home)


def test_an_empty_search_result_has_the_columns_of_a_full_one_in_every_scope(home: Settings) -> None:
    memory = Memory(settings=home)
    for scope in ("facts", "chunks", "episodes"):
        nothing = memory.search("Where does the user live?", "ann", scope=scope, since="2030-01-01")
        assert nothing.height == 0
        if scope == "facts":
            found = memory.search("Where does the user live?", "ann", scope="facts")
            assert found.height > 0 and nothing.schema == found.schema
        assert {"role", "speaker"} <= set(nothing.columns) if scope == "chunks" else True
        assert "title" in nothing.columns if scope == "episodes" else True


def test_a_fact_search_of_one_conversation_finds_a_fact_any_of_whose_sources_is_in_it(home: Settings) -> None:
    """Green tea was said in conversation c1 and again in c3: a search of either finds the fact, naming it."""
    again = said("I really like green tea.", "green tea", 3, slot=None, type_="preference")
    result = fold([*CANDIDATES, again], read_overrides(home), read_forgets(home), FoldConfig())
    tea = result.facts.filter((pl.col("value") == "green tea") & (pl.col("status") == "active")).row(0, named=True)
    assert tea["source_conversation_ids"] == ["c1", "c3"]
    Lake(home.lake_dir).write(FACTS, result.facts)
    Lake(home.lake_dir).write(FACT_EDGES, result.edges)
    memory = Memory(settings=home)
    for conversation in ("c1", "c3"):
        hits = memory.search("Which tea does she like?", "ann", scope="facts", conversation_id=conversation)
        assert hits["fact_id"].to_list() == [tea["fact_id"]], conversation
        assert hits["conversation_id"].to_list() == [conversation]
    assert memory.search("Which tea does she like?", "ann", scope="facts", conversation_id="c9").height == 0


def test_a_rejected_fact_leaves_fact_search_at_once(home: Settings) -> None:
    memory = Memory(settings=home)
    assert texts(memory, "green tea")[0] == "The user likes green tea."
    tea = memory.facts("ann", type="preference")["fact_id"][0]
    memory.reject("ann", tea)
    assert "The user likes green tea." not in texts(memory, "green tea")
    run(home)
    assert "The user likes green tea." not in texts(memory, "green tea")


def test_a_forgotten_fact_leaves_fact_search_and_a_forgotten_remembered_one_stays_gone(home: Settings) -> None:
    memory = Memory(settings=home)
    memory.forget("ann", fact_id=HOME_ID)
    assert not any("Lisbon" in t or "Berlin" in t for t in texts(memory, "Where does the user live?"))
    made = memory.remember("ann", "I work at Globex")
    memory.forget("ann", fact_id=made["fact_id"][0])
    assert not any("Globex" in t for t in texts(memory, "Where does the user work?"))
    assert memory.facts("ann").filter(pl.col("slot") == "employer").height == 0
    run(home)  # the run drops the override's fact: reads must not bring the override back
    fresh = Memory(settings=home)
    assert fresh.facts("ann").filter(pl.col("slot").is_in(["employer", "home_city"])).height == 0
    assert not any("Globex" in t for t in texts(fresh, "Where does the user work?"))
    assert texts(fresh, "green tea")[0] == "The user likes green tea."


def test_a_reader_embeds_each_fact_once_across_writes_and_reads(tmp_path: Path) -> None:
    home = built_home(tmp_path / "home", "hash")  # counting embeddings needs an embedder
    embedded: list[str] = []

    class Counting(HashEmbedder):
        def embed(self, texts: list[str]):  # type: ignore[no-untyped-def]
            embedded.extend(texts)
            return super().embed(texts)

    memory = Memory(settings=home)
    memory._embedder = Counting()  # the reader's configured embedder
    memory.remember("ann", "I work at Globex")
    memory.facts("ann")
    memory.search("Where does the user work?", "ann", scope="facts")
    memory.remember("ann", "I work at Initech")
    memory.search("Where does the user work?", "ann", scope="facts")
    facts_texts = [t for t in embedded if t != "Where does the user work?"]
    assert len(facts_texts) == len(set(facts_texts))  # every fact text embedded once
    assert {"The user works at Globex.", "The user works at Initech."} <= set(facts_texts)


def test_facts_as_of_a_day_between_a_move_and_its_telling_show_what_was_known_then() -> None:
    """Said on day 150: "I moved to Lisbon ten days ago". As of day 145 the user had said nothing of a move, so
    Berlin is what was known (not nothing); as of day 151, Lisbon, since day 140."""
    from memlake.facts.reads import select_facts

    moved = replace(said("The user moved to Lisbon ten days ago.", "Lisbon", 150), valid_from=T0 + timedelta(days=140))
    result = fold([said("The user lives in Berlin.", "Berlin", 0), moved], [], [], FoldConfig())

    def city(day: float) -> list[str]:
        return select_facts(result.facts, as_of=T0 + timedelta(days=day), edges=result.edges)["value"].to_list()

    assert city(145) == ["Berlin"]  # closed on day 140 by what was said on day 150: still open on day 145
    assert city(151) == ["Lisbon"]
    assert city(100) == ["Berlin"]
    assert select_facts(result.facts, as_of=T0 + timedelta(days=145))["value"].to_list() == []  # without the edges


def test_the_cli_fact_search_leads_each_hit_with_the_id_reject_and_forget_take(home: Settings) -> None:
    from typer.testing import CliRunner

    from pipelines.cli import app

    command = ["search", "Where does the user live?", "--agent", "ann", "--scope", "facts", "-k", "1",
               "--home", str(home.home)]
    shown = CliRunner().invoke(app, command, env={"MEMLAKE_EMBEDDING_MODEL": home.embedding_model})
    assert shown.exit_code == 0, shown.output
    assert f"{HOME_ID} v2 [active]" in shown.output and "Lisbon" in shown.output
