"""`memlake ingest`, `run`, `turns`, `search` and `reindex`, as a user types them."""

import json
import shutil
import sys

import pytest
from typer.testing import CliRunner

from memlake.api import Memory
from pipelines.cli import app, main
from tests.conftest import SAMPLES, land


def test_ingest_run_and_read_back_the_samples(settings, monkeypatch):
    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")  # the real model is covered elsewhere
    runner = CliRunner()
    files = [str(p) for p in sorted((SAMPLES / "demo").iterdir())]

    landed = runner.invoke(app, ["ingest", *files, "--agent", "demo", "--home", str(settings.home)])
    assert landed.exit_code == 0, landed.output
    again = runner.invoke(app, ["ingest", *files, "--agent", "demo", "--home", str(settings.home)])
    assert "0 new file(s), 3 already there" in again.output
    renamed = settings.home.parent / "export (copy).json"  # the same bytes under another name
    shutil.copy(files[0], renamed)
    copy = runner.invoke(app, ["ingest", str(renamed), "--agent", "demo", "--home", str(settings.home)])
    assert "0 new file(s), 1 already there" in copy.output
    assert len(list((settings.landing_dir / "demo").iterdir())) == 3

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



@pytest.mark.parametrize("agent", ["..", ".", "...", ".hidden", "a..b", "-rf", "CON", "okid\n"])
def test_ingest_refuses_an_agent_id_that_is_not_a_plain_folder_and_lands_nothing(settings, monkeypatch, capsys,
                                                                                   agent):
    """`ingest --agent ..` put the file in the home folder itself (a dropped memlake.toml became the settings)."""
    source = settings.home.parent / "memlake.toml"
    source.write_text('core_model_base_url = "http://attacker.example/v1"\n')
    before = sorted(p.relative_to(settings.home) for p in settings.home.rglob("*"))

    code, printed = typed(monkeypatch, capsys, "ingest", str(source), "--agent", agent, "--home", str(settings.home))

    assert code == 2 and printed.startswith(f"error: invalid agent id {agent!r}: "), printed
    assert sorted(p.relative_to(settings.home) for p in settings.home.rglob("*")) == before


@pytest.mark.parametrize(
    "args",
    [["turns"], ["search", "hi"], ["facts"], ["remember", "I like tea"], ["reject", "f_1"], ["forget", "--all", "-y"],
     ["profile"], ["distill"]],
)
def test_every_agent_option_refuses_a_dot_dot_agent(settings, monkeypatch, capsys, args):
    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")
    code, printed = typed(monkeypatch, capsys, *args, "--agent", "..", "--home", str(settings.home))
    assert code == 2 and printed.startswith("error: invalid agent id '..': "), printed



def test_ingest_refuses_a_hidden_file_name_instead_of_landing_what_the_run_skips(settings, monkeypatch, capsys):
    """`ingest .chat.jsonl` said "1 new file(s)"; the run, which does not read hidden files, said "new files: 0"."""
    source = settings.home.parent / ".chat.jsonl"
    shutil.copy(SAMPLES / "demo" / "notes_chat.jsonl", source)

    code, printed = typed(monkeypatch, capsys, "ingest", str(source), "--agent", "alice", "--home", str(settings.home))

    assert code == 2 and printed.startswith("error: .chat.jsonl: a file name starting with '.' is not read"), printed
    assert not (settings.landing_dir / "alice").exists()


def test_run_lists_every_landing_path_it_did_not_read_and_why(settings, monkeypatch):
    """A hidden file, a hidden folder and a dangling symlink were skipped with no word."""
    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")
    land(settings, "alice", "notes_chat.jsonl", (SAMPLES / "demo" / "notes_chat.jsonl").read_bytes())
    land(settings, "alice", ".draft.jsonl", "{}")
    land(settings, ".trash", "old.jsonl", "{}")
    (settings.landing_dir / "alice" / "gone.jsonl").symlink_to(settings.home / "nowhere.jsonl")

    result = CliRunner().invoke(app, ["run", "--home", str(settings.home)])

    assert result.exit_code == 0, result.output
    assert "new files: 1;" in result.output
    assert "ignored in landing (not read): 3" in result.output
    assert "  .trash: hidden folder" in result.output
    assert "  alice/.draft.jsonl: hidden file" in result.output
    assert "  alice/gone.jsonl: dangling symlink" in result.output


def test_the_run_report_says_what_this_run_ingested_and_labels_the_lake_totals(settings, monkeypatch):
    """A second run over unchanged data printed the first run's counts again, as if they were new."""
    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")
    runner = CliRunner()
    land(settings, "demo", "notes_chat.jsonl", (SAMPLES / "demo" / "notes_chat.jsonl").read_bytes())
    first = runner.invoke(app, ["run", "--home", str(settings.home)])
    assert first.exit_code == 0, first.output
    assert "  jsonl             1              8      36" in first.output
    assert "In the lake, over every run: 1 file(s), 8 conversation(s), 36 turn(s)" in first.output

    again = runner.invoke(app, ["run", "--home", str(settings.home)])
    assert again.exit_code == 0, again.output
    assert "Ingested by this run: nothing new" in again.output
    assert "  jsonl " not in again.output
    assert "In the lake, over every run: 1 file(s), 8 conversation(s), 36 turn(s)" in again.output

    land(settings, "demo", "claude.json", (SAMPLES / "demo" / "claude_export.json").read_bytes())
    third = runner.invoke(app, ["run", "--home", str(settings.home)])
    assert third.exit_code == 0, third.output
    assert "  claude " in third.output and "  jsonl " not in third.output
    assert "In the lake, over every run: 2 file(s), 18 conversation(s)" in third.output


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


def typed(monkeypatch, capsys, *args: str) -> tuple[int, str]:
    """`memlake ARGS` through the console entry point: (exit code, everything printed)."""
    monkeypatch.setattr(sys, "argv", ["memlake", *args])
    with pytest.raises(SystemExit) as ended:
        main()
    printed = capsys.readouterr()
    return int(ended.value.code or 0), printed.out + printed.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["search", "hi", "--agent", "Bad Agent!"], "error: invalid agent id 'Bad Agent!'"),
        (["search", "hi", "--agent", "alice", "--as-of", "yesterday"], "error: 'yesterday' is not a date or time"),
        (["search", "hi", "--agent", "alice", "-k", "0"], "error: k must be a whole number from 1 to 100, got 0"),
        (["search", " ", "--agent", "alice"], "error: a search needs words to look for"),
        (["search", "hi", "--agent", "alice", "--scope", "foo"], "error: unknown scope 'foo'"),
        (["search", "hi", "--agent", "alice", "--role", "robot"], "error: unknown role 'robot'"),
        (["search", "hi", "--agent", "alice", "--since", "2024-07-01", "--until", "2024-01-01"],
         "error: since (2024-07-01 00:00) is not before until"),
        (["facts", "--agent", "alice", "--as-of", "2024-13-45"], "error: '2024-13-45' is not a date or time"),
        (["reject", "f_nope", "--agent", "alice"], "error: agent 'alice' has no fact 'f_nope'"),
        (["search", "hi", "--agent", "alice", "--scope", "graph", "-k", "0"],
         "error: k must be a whole number from 1 to 100, got 0"),
        (["search", "hi", "--agent", "alice", "--scope", "graph", "--since", "2024-01-01"],
         "error: a graph search takes no since, until, role or conversation_id"),
        (["graph", "entities", "--agent", "alice", "--type", "robot"], "error: unknown entity type 'robot'"),
        (["graph", "relations", "--agent", "alice", "--as-of", "yesterday"], "error: 'yesterday' is not a date"),
        (["graph", "neighborhood", "Nobody", "--agent", "alice"], "error: no entity called 'Nobody'"),
        (["graph", "neighborhood", "Nobody", "--agent", "alice", "--depth", "0"],
         "error: depth is a whole number from 1 to 5, got 0"),
        (["graph", "split", "m_nope", "--agent", "alice"], "error: agent 'alice' has no merge 'm_nope'"),
        # click's usage errors too, with the help to read
        (["forget", "--agent", "alice"], "error: Invalid value: give exactly one of --fact, --conversation, --query"
                                         " or --all (see memlake forget --help)"),
        (["ingest", "/nonexistent/export.zip", "--agent", "alice"], "error: Invalid value for 'files'"),
        (["search", "--agent", "alice"], "error: Missing argument 'query'. (see memlake search --help)"),
    ],
)
def test_a_mistake_in_what_was_asked_is_one_error_line_and_exit_code_2(settings, monkeypatch, capsys, args, message):
    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")
    code, printed = typed(monkeypatch, capsys, *args, "--home", str(settings.home))
    assert code == 2 and printed.startswith(message), printed
    assert "Traceback" not in printed and len(printed.splitlines()) == 1


def test_a_broken_settings_file_is_named_in_the_error(settings, monkeypatch, capsys, tmp_path):
    broken = tmp_path / "memlake.toml"
    broken.write_text('embedding_model = "hash\n')
    monkeypatch.setenv("MEMLAKE_SETTINGS_FILE", str(broken))
    code, printed = typed(monkeypatch, capsys, "agents", "--home", str(settings.home))
    assert code == 2 and printed.startswith(f"error: settings file {broken} is not valid TOML"), printed
    monkeypatch.setenv("MEMLAKE_SETTINGS_FILE", str(tmp_path / "missing.toml"))
    code, printed = typed(monkeypatch, capsys, "agents", "--home", str(settings.home))
    assert code == 2 and "missing.toml, which is not a file" in printed
    monkeypatch.delenv("MEMLAKE_SETTINGS_FILE")
    monkeypatch.setenv("MEMLAKE_PARTITION_START_DATE", "notadate")
    code, printed = typed(monkeypatch, capsys, "agents", "--home", str(settings.home))
    assert code == 2 and printed.startswith("error: setting partition_start_date: ") and "'notadate'" in printed
    assert len(printed.splitlines()) == 1


def test_reading_a_home_that_is_not_there_is_an_error_and_creates_nothing(monkeypatch, capsys, tmp_path):
    typo = tmp_path / "hmoe"
    for args in (["search", "hi", "--agent", "alice"], ["agents"], ["facts", "--agent", "alice"],
                 ["distill", "--agent", "alice"], ["forget", "--agent", "alice", "--all", "--yes"], ["reindex"]):
        code, printed = typed(monkeypatch, capsys, *args, "--home", str(typo))
        assert code == 2 and printed.startswith(f"error: no memlake home at {typo}"), printed
    with pytest.raises(ValueError, match="no memlake home"):
        Memory(typo)
    assert not typo.exists()


def test_search_says_when_an_agent_has_no_memory_and_shortens_a_long_hit_on_the_terminal(settings, monkeypatch):
    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")
    long_turn = "I adopted a cat named Biscuit. " + "She sleeps all day. " * 400
    land(settings, "alice", "a.jsonl", json.dumps(
        {"conversation_id": "c1", "role": "user", "content": long_turn, "created_at": "2024-03-01T10:00:00Z"}) + "\n")
    runner = CliRunner()
    assert runner.invoke(app, ["run", "--home", str(settings.home)]).exit_code == 0

    found = runner.invoke(app, ["search", "cat Biscuit", "--agent", "alice", "-k", "1", "--home", str(settings.home)])
    assert found.exit_code == 0 and "Biscuit" in found.output
    # the long turn's hit is the passage that matched, and the line says where the whole turn is
    assert len(found.output) < 1000 and "a passage: `memlake turns --agent alice --conversation c1`" in found.output
    as_json = runner.invoke(app, ["search", "cat Biscuit", "--agent", "alice", "-k", "1", "--json",
                                  "--home", str(settings.home)])
    hit = json.loads(as_json.output.splitlines()[0])
    assert hit["excerpt"] and "I adopted a cat named Biscuit." in hit["text"] and len(hit["text"]) < len(long_turn)
    whole = runner.invoke(app, ["turns", "--agent", "alice", "--conversation", "c1", "--json",
                                "--home", str(settings.home)])
    assert long_turn.strip() in whole.output

    for args in (["search", "cat"], ["search", "cat", "--json"], ["turns"], ["facts"], ["profile"]):
        nobody = runner.invoke(app, [*args, "--agent", "nobody", "--home", str(settings.home)])
        assert nobody.exit_code == 1, args
        assert "agent 'nobody' has no memory here; agents: alice" in nobody.output, args
    for args in (["turns"], ["search", "cat"], ["search", "cat", "--scope", "episodes"]):
        nope = runner.invoke(app, [*args, "--agent", "alice", "--conversation", "nope", "--home", str(settings.home)])
        assert nope.exit_code == 1 and "agent 'alice' has no conversation 'nope'" in nope.output, args
    with pytest.raises(ValueError, match="unknown fact type 'nope': one of fact, preference"):
        Memory(settings.home).facts("alice", type="nope")
    assert Memory(settings.home).facts("alice", type=" Preference ").equals(Memory(settings.home).facts(
        "alice", type="preference"))


def test_run_says_how_many_conversations_wait_for_the_distiller(settings, monkeypatch):
    """With the model endpoint down, `memlake run` succeeds (the rest is built) but says what is pending."""
    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")
    monkeypatch.setenv("MEMLAKE_CORE_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    monkeypatch.setenv("MEMLAKE_CORE_MODEL", "m")
    land(settings, "alice", "chat.jsonl",
         '{"conversation_id":"c1","role":"user","content":"I live in Oslo.","created_at":"2024-03-01T10:00:00Z"}\n')
    ran = CliRunner().invoke(app, ["run", "--home", str(settings.home)])
    assert ran.exit_code == 0, ran.output
    assert "pending: 1 conversation(s) of alice wait for the distiller" in ran.output



def test_python_dash_m_memlake_cli_gives_a_mistake_as_one_error_line_too(settings):
    """`python -m pipelines.cli` (the form the docs give beside `memlake`) printed a whole traceback for a
    mistake the `memlake` script gives as one `error:` line."""
    import os
    import subprocess

    typed_m = subprocess.run([sys.executable, "-m", "pipelines.cli", "search", "hi", "--agent", "Bad Agent!", "--home",
                              str(settings.home)], capture_output=True, text=True, env={**os.environ})
    assert typed_m.returncode == 2 and typed_m.stderr.startswith("error: invalid agent id 'Bad Agent!'"), typed_m.stderr
    assert "Traceback" not in typed_m.stderr + typed_m.stdout


NICENESS_OF_RUN = """
import os, sys
from pipelines import cli, runs
def report_niceness(settings, say, resources=None, progress=None):  # the run itself is not what is tested
    print("niceness", os.nice(0))
    sys.exit(0)
runs.run_landing_alone = report_niceness
sys.argv = ["memlake", "run", "--home", sys.argv[1]]
cli.main()
"""


@pytest.mark.parametrize(("setting", "started_under"), [(None, 0), ("0", 0), ("5", 12)])
def test_a_run_yields_the_cores_to_reads_by_the_run_nice_setting(settings, setting, started_under):
    """`memlake run` lowers its CPU priority to `run_nice` (default 10), never raising it: `memlake serve` on the
    same cores answers first. In a process of its own: a niceness cannot be taken back (and this test process may
    run niced already, by a `memlake run` an earlier test invoked in it)."""
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "MEMLAKE_RUN_NICE"}
    if setting is not None:
        env["MEMLAKE_RUN_NICE"] = setting
    started_at = min(19, os.nice(0) + started_under)
    command = [sys.executable, "-c", NICENESS_OF_RUN, str(settings.home)]
    ran = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120,
                         preexec_fn=lambda: os.nice(started_under))
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert f"niceness {max(started_at, 10 if setting is None else int(setting))}" in ran.stdout
