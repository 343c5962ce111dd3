"""`memlake ingest`, `run`, `turns` and `reindex`, as a user types them."""

import json
import shutil

from typer.testing import CliRunner

from memlake.cli import app
from tests.conftest import SAMPLES


def test_ingest_run_and_read_back_the_samples(settings, monkeypatch):
    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")  # the real model is covered elsewhere
    runner = CliRunner()
    files = [str(p) for p in sorted((SAMPLES / "demo").iterdir())]

    landed = runner.invoke(app, ["ingest", *files, "--agent", "demo", "--home", str(settings.home)])
    assert landed.exit_code == 0, landed.output
    again = runner.invoke(app, ["ingest", *files, "--agent", "demo", "--home", str(settings.home)])
    assert "0 new file(s), 3 already there" in again.output

    ran = runner.invoke(app, ["run", "--home", str(settings.home)])
    assert ran.exit_code == 0, ran.output
    report = ran.output
    for fmt in ("chatgpt", "claude", "jsonl"):
        assert f"  {fmt} " in report
    assert "Quarantined: 0 file(s)" in report

    agents = runner.invoke(app, ["agents", "--home", str(settings.home)])
    assert agents.output.split() == ["demo"]
    turns = runner.invoke(app, ["turns", "--agent", "demo", "--home", str(settings.home)])
    assert "Lisbon" in turns.output

    shutil.rmtree(settings.lancedb_dir)  # the indexes are lost; the lake is not
    reindexed = runner.invoke(app, ["reindex", "--home", str(settings.home)])
    assert reindexed.exit_code == 0, reindexed.output
    assert "search/chunk_index" in reindexed.output
    found = runner.invoke(app, ["search", "Lisbon", "--agent", "demo", "-k", "1", "--home", str(settings.home)])
    assert found.exit_code == 0 and "Lisbon" in found.output, found.output


def test_reindex_of_an_empty_lake_says_what_to_do(settings):
    result = CliRunner().invoke(app, ["reindex", "--home", str(settings.home)])
    assert result.exit_code == 1
    assert "has no turns: run `memlake run` first" in result.output


def test_ingest_rejects_a_bad_agent_id(settings):
    result = CliRunner().invoke(
        app, ["ingest", str(SAMPLES / "demo" / "notes_chat.jsonl"), "--agent", "../etc", "--home", str(settings.home)]
    )
    assert result.exit_code != 0
    assert not (settings.landing_dir / ".." / "etc").exists()


def home_without_question_keys(settings, monkeypatch) -> CliRunner:
    """Two days of a question and its reply, run with question keys off (a home older than them)."""
    from tests.conftest import land

    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")
    monkeypatch.setenv("MEMLAKE_CHUNK_QUESTIONS", "false")
    chat = [{"conversation_id": f"c{day}", "message_id": f"m{day}{i}", "speaker": speaker, "role": role,
             "content": content, "created_at": f"2024-03-0{day}T09:0{i}:00Z"}
            for day in (1, 2)
            for i, (speaker, role, content) in enumerate([("Sam", "assistant", "What are you reading these days?"),
                                                          ("Priya", "user", "A history of the Silk Road.")])]
    land(settings, "priya", "chat.jsonl", "".join(json.dumps(r) + "\n" for r in chat))
    runner = CliRunner()
    assert runner.invoke(app, ["run", "--home", str(settings.home)]).exit_code == 0
    return runner


def question_keys(settings) -> list[str]:
    """The message ids of the question-keyed replies in the lake's chunks."""
    import polars as pl

    from memlake.lake import Lake
    from memlake.schemas import CHUNKS

    chunks = Lake(settings.lake_dir).read(CHUNKS)
    return chunks.filter(pl.col("kind") == "question")["message_ids"].list.first().sort().to_list()


def test_memlake_run_builds_again_the_chunks_an_older_chunker_or_other_settings_built(settings, monkeypatch):
    """After an upgrade that adds a chunk kind, or a change of chunk settings, the next `memlake run` gives
    every day today's chunks, with nothing new landed; the run after that rebuilds nothing."""
    import pyarrow.parquet as pq

    from memlake.lake import Lake
    from memlake.schemas import CHUNKS

    runner = home_without_question_keys(settings, monkeypatch)
    lake = Lake(settings.lake_dir)

    assert question_keys(settings) == []
    monkeypatch.setenv("MEMLAKE_CHUNK_QUESTIONS", "true")
    upgraded = runner.invoke(app, ["run", "--home", str(settings.home)])
    assert upgraded.exit_code == 0, upgraded.output
    assert "new files: 0" in upgraded.output and "chunks built again" in upgraded.output
    assert "2024-03-01..2024-03-02 (2 days)" in upgraded.output
    assert question_keys(settings) == ["m11", "m21"]
    found = runner.invoke(app, ["search", "What is Priya reading?", "--agent", "priya", "--json",
                                "--home", str(settings.home)])
    assert '"question"' in found.output  # the index has them too

    # a day written before chunk files were stamped (an older memlake) is built again, and only it
    path = lake.partition_file(CHUNKS, "2024-03-02")
    pq.write_table(pq.read_table(path).replace_schema_metadata(None), path)
    older = runner.invoke(app, ["run", "--home", str(settings.home)])
    assert "2024-03-02..2024-03-02 (1 day)" in older.output, older.output
    settled = runner.invoke(app, ["run", "--home", str(settings.home)])
    assert settled.exit_code == 0 and "chunks built again" not in settled.output


def test_reindex_rechunk_gives_every_day_the_chunk_kinds_of_todays_settings(settings, monkeypatch):
    """A home built before a chunk kind existed (here: with question keys off) gets it in one command."""
    runner = home_without_question_keys(settings, monkeypatch)

    assert question_keys(settings) == []
    monkeypatch.setenv("MEMLAKE_CHUNK_QUESTIONS", "true")
    plain = runner.invoke(app, ["reindex", "--home", str(settings.home)])
    assert plain.exit_code == 0 and question_keys(settings) == []  # a plain reindex embeds the chunks the lake has
    rechunked = runner.invoke(app, ["reindex", "--rechunk", "--home", str(settings.home)])
    assert rechunked.exit_code == 0, rechunked.output
    assert "transcripts/chunks" in rechunked.output and "search/chunk_index" in rechunked.output
    assert question_keys(settings) == ["m11", "m21"]  # every day, not only the last one
    found = runner.invoke(app, ["search", "What is Priya reading?", "--agent", "priya", "--json",
                                "--home", str(settings.home)])
    assert '"text_match": "question"' in found.output or '"vector_match": "question"' in found.output
