"""`Memory.forget` and `memlake forget`: a fact, a conversation's facts, or all of an agent's facts.

The next read (facts, history, fact search) no longer shows what was forgotten, and what it shows is what the
next run will write.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from memlake.api import Memory
from memlake.chunks import text_sha256
from memlake.embedding import HashEmbedder, embedding_cache
from memlake.facts.fold import FoldConfig, fold
from memlake.facts.overrides import read_forgets, read_overrides
from memlake.facts.reads import agent_facts
from memlake.settings import Settings, load_settings
from pipelines.cli import app
from tests.facts.test_fact_search import CANDIDATES, HOME_ID, run


@pytest.fixture
def home(tmp_path: Path) -> Settings:
    settings = load_settings(tmp_path / "home", embedding_model="hash")
    settings.ensure_dirs()
    run(settings)
    return settings


def current(memory: Memory, agent: str = "ann") -> list[tuple[str | None, str | None]]:
    return sorted(memory.facts(agent).select("slot", "value").rows(), key=str)


def what_a_run_writes(settings: Settings, agent: str = "ann") -> list[tuple[str | None, str | None]]:
    result = fold(CANDIDATES, read_overrides(settings), read_forgets(settings), FoldConfig())
    active = result.facts.filter((pl.col("agent_id") == agent) & (pl.col("status") == "active"))
    return sorted(active.select("slot", "value").rows(), key=str)


def test_forgetting_a_fact_removes_every_version_from_facts_history_and_search(home: Settings) -> None:
    memory = Memory(settings=home)
    gone = memory.forget("ann", fact_id=HOME_ID, reason="asked to")
    assert sorted(gone["value"].to_list()) == ["Berlin", "Lisbon"] and set(gone["fact_id"]) == {HOME_ID}
    assert current(memory) == [(None, "green tea")] == what_a_run_writes(home)
    assert memory.history(HOME_ID, "ann").height == 0
    assert memory.facts("ann", as_of="2024-03-01").filter(pl.col("slot") == "home_city").height == 0
    assert not any("Lisbon" in t for t in memory.search("where does the user live", "ann", scope="facts")["text"])
    assert current(memory, "bob") == [("home_city", "Paris")]  # never crosses agents
    [entry] = read_forgets(home, "ann")
    assert (entry.scope, entry.target) == ("fact", HOME_ID)
    run(home)
    assert current(Memory(settings=home)) == [(None, "green tea")]


def test_forgetting_a_fact_deletes_its_vectors_from_the_embedding_cache(home: Settings) -> None:
    cache = embedding_cache(home, HashEmbedder())
    texts = {t: text_sha256(t) for t in ("The user lives in Berlin.", "The user moved to Lisbon.",
                                         "The user likes green tea.")}
    assert set(cache.lookup(texts.values())) == set(texts.values())  # the fact index's texts, cached

    Memory(settings=home).forget("ann", fact_id=HOME_ID)
    assert set(cache.lookup(texts.values())) == {texts["The user likes green tea."]}
    kept = {h for p in home.embedding_cache_dir.rglob("*.parquet") for h in pq.read_table(p)["text_sha256"].to_pylist()}
    assert not kept & {texts["The user lives in Berlin."], texts["The user moved to Lisbon."]}  # deleted, not hidden
    run(home)  # the next run does not bring them back
    assert set(cache.lookup(texts.values())) == {texts["The user likes green tea."]}


def test_forgetting_a_conversation_drops_what_it_alone_said_and_the_old_value_is_current_again(home: Settings) -> None:
    memory = Memory(settings=home)
    gone = memory.forget("ann", conversation_id="c150")  # where the user said they moved to Lisbon
    assert gone["value"].to_list() == ["Lisbon"]
    assert current(memory) == [("home_city", "Berlin"), (None, "green tea")] == what_a_run_writes(home)
    history = memory.history(HOME_ID, "ann")
    assert history.select("value", "status").rows() == [("Berlin", "active")]
    assert history["valid_until"][0] is None


def test_forgetting_everything_then_remembering_keeps_only_the_new_fact(home: Settings) -> None:
    memory = Memory(settings=home)
    memory.remember("ann", "I work at Globex")
    gone = memory.forget("ann", everything=True)
    assert sorted(gone["value"].to_list()) == ["Berlin", "Globex", "Lisbon", "green tea"]
    assert current(memory) == [] == what_a_run_writes(home)
    memory.remember("ann", "I live in Oslo")
    assert current(memory) == [("home_city", "Oslo")] == what_a_run_writes(home)
    assert current(memory, "bob") == [("home_city", "Paris")]


def test_a_remembered_fact_forgotten_and_folded_is_not_folded_again_by_every_read(home: Settings) -> None:
    memory = Memory(settings=home)
    [remembered] = memory.remember("ann", "My favourite colour is green")["fact_id"].to_list()
    run(home)
    memory.forget("ann", fact_id=remembered)
    run(home)  # no row carries the override's id now: the forget removed its fact

    def no_model() -> None:
        raise AssertionError("a read loaded the embedding model to fold entries the last run folded")

    read = agent_facts(home, "ann", embed_factory=no_model)
    assert not read.pending
    assert sorted(read.facts.filter(pl.col("status") == "active")["value"].to_list()) == ["Lisbon", "green tea"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "exactly one"),
        ({"fact_id": HOME_ID, "everything": True}, "exactly one"),
        ({"fact_id": "f_unknown"}, "has no fact"),
        ({"conversation_id": "c-unknown"}, "has no conversation"),
    ],
)
def test_a_bad_forget_is_refused_and_nothing_is_written(home: Settings, kwargs: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValueError, match=message):
        Memory(settings=home).forget("ann", **kwargs)
    assert read_forgets(home) == []


def test_the_cli_forgets_and_asks_before_forgetting_a_conversation_or_everything(
    home: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")
    runner = CliRunner()
    where = ["--agent", "ann", "--home", str(home.home)]
    out = runner.invoke(app, ["forget", *where, "--fact", HOME_ID])
    assert out.exit_code == 0, out.output
    assert "forgot" in out.output and "home_city=Lisbon" in out.output and "2 fact version(s) forgotten" in out.output
    out = runner.invoke(app, ["facts", *where])
    assert "home_city" not in out.output and "green tea" in out.output

    out = runner.invoke(app, ["forget", *where, "--all"], input="n\n")
    assert out.exit_code != 0 and "Forget everything of agent ann?" in out.output
    assert len(read_forgets(home)) == 1  # declined: nothing written
    out = runner.invoke(app, ["forget", *where, "--conversation", "c1"], input="y\n")
    assert out.exit_code == 0 and "green tea" in out.output
    out = runner.invoke(app, ["facts", *where])
    assert "no facts" in out.output

    out = runner.invoke(app, ["forget", "--agent", "bob", "--home", str(home.home), "--all", "--yes"])
    assert out.exit_code == 0 and "Forget" not in out.output and "home_city=Paris" in out.output
    assert len(read_forgets(home)) == 3

    for bad in (["--fact", HOME_ID, "--all"], []):
        out = runner.invoke(app, ["forget", *where, *bad, "--yes"])
        said = " ".join(out.output.replace("│", " ").split())  # the error box wraps its lines
        assert out.exit_code != 0 and "exactly one of --fact, --conversation, --query or --all" in said
    out = runner.invoke(app, ["forget", *where, "--fact", "f_unknown"])  # `memlake` prints it as `error:`, exit 2
    assert out.exit_code == 1 and "has no fact" in str(out.exception)
    assert len(read_forgets(home)) == 3
