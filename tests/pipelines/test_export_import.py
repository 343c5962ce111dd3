"""`memlake export` and `memlake import` (and `Memory.export` / `Memory.import_`): an agent's memory moved to
another home under another id answers as it did there, what it forgot stays forgotten, and a bad export or a
taken agent is one error line that writes nothing.

A's home: the demo samples, a remembered fact, a correction of an extracted fact and a forgotten one, run through
the pipeline. B's home: a fresh one, A's export imported as B, run. Then every read is compared, ids aside.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from typer.testing import CliRunner

from memlake.api import Memory
from memlake.settings import Settings, load_settings, write_home_setting
from pipelines.cli import app
from tests.conftest import SAMPLES

AS_OF = "2024-12-31"
QUESTIONS = ("where does the user live", "what is the user's job", "Project Heron launch", "peanuts allergy",
             "what does the user like to drink")
REMEMBERED = "I am allergic to peanuts"
CORRECTION = "I work as a staff engineer"
# columns that name the agent, a derived id, or when the files were read: they differ by construction
ID_COLUMNS = {"agent_id", "fact_id", "superseded_by", "override_ids", "ingested_at", "key", "chunk_id",
              "episode_key", "entity_id", "relation_id", "source_entity_id", "target_entity_id", "merge_id",
              "source_file", "source_sha256", "source_format", "first_seen_at", "content_hash"}
# What LanceDB's storage order decides: it returns hits of equal score in the order of their rows, and the rows
# are stored in the order of their (agent-derived) ids, so two equally good hits, or two equally near keys of one
# turn (vector_match, text_match), may swap places and so their ranks and rank-fused scores. Which hits come back,
# and everything else each says, is compared.
RANKING_COLUMNS = {"rank", "score", "own_score", "rrf", "text_rank", "vector_rank", "context_lift", "vector_match",
                   "text_match"}
FACT_ID = re.compile(r"\bf_[0-9a-f]{16}(-\d+)?\b")


def make_home(root: Path) -> Settings:
    root.mkdir(parents=True)
    write_home_setting(root, "embedding_model", "hash")  # the reads' embedder; the run's is the hashing one too
    settings = load_settings(root)
    settings.ensure_dirs()
    return settings


def run(settings: Settings) -> None:
    from pipelines.runs import run_landing
    from resources import HashEmbedderResource, build_resources

    resources = {**build_resources(settings), "embedder": HashEmbedderResource()}
    outcome = run_landing(settings, resources=resources, instance=dg.DagsterInstance.ephemeral())
    assert outcome.success, outcome


def current(memory: Memory, agent: str, slot: str) -> dict[str, Any]:
    [row] = memory.facts(agent).filter((pl.col("slot") == slot) & (pl.col("subject") == "user")).to_dicts()
    return row


@pytest.fixture(scope="module")
def homes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A's home and what was forgotten in it, A's export (an archive, made by the CLI), and B's home built from
    the import alone."""
    root = tmp_path_factory.mktemp("export")
    a = make_home(root / "a")
    shutil.copytree(SAMPLES / "demo", a.landing_dir / "alice")
    run(a)
    memory = Memory(settings=a)
    memory.remember("alice", REMEMBERED)
    memory.remember("alice", CORRECTION, replaces=current(memory, "alice", "job_title")["fact_id"])
    said = pl.concat([memory.facts("alice"), memory.facts("alice", candidates=True)])  # shown or held back
    forgotten = said.filter(pl.col("content").str.contains("concise answers")).to_dicts()
    assert len(forgotten) == 1  # a fact without a slot: its id comes from its words, not a slot
    memory.forget("alice", fact_id=forgotten[0]["fact_id"])
    run(a)
    for scope in ("chunks", "episodes", "facts"):  # used before AS_OF, so the searches' access boost counts them
        used = memory.search(QUESTIONS[0], "alice", k=2, scope=scope, as_of=AS_OF)["key"].to_list()
        memory.record_access("alice", used, scope=scope, at="2024-12-01")

    archive = root / "alice.tar.gz"
    runner = CliRunner()
    exported = runner.invoke(app, ["export", "--agent", "alice", str(archive), "--archive", "--home", str(a.home)])
    assert exported.exit_code == 0, exported.output
    b_home = root / "b"
    imported = runner.invoke(app, ["import", str(archive), "--agent", "bea", "--home", str(b_home)])
    assert imported.exit_code == 0, imported.output
    b = load_settings(b_home)
    write_home_setting(b_home, "embedding_model", "hash")
    b = load_settings(b_home)
    run(b)
    return {"a": Memory(settings=a), "b": Memory(settings=b), "archive": archive, "root": root,
            "forgotten": forgotten[0]["content"], "imported": imported.output, "b_settings": b}


def rows(frame: pl.DataFrame, leave_out: set[str] = ID_COLUMNS) -> list[dict[str, Any]]:
    """A frame's rows without the id columns, in a stable order."""
    kept = frame.drop([c for c in frame.columns if c in leave_out])
    return sorted(kept.to_dicts(), key=repr)


def lines(text: str) -> list[str]:
    """A block's lines, fact ids aside, in a stable order (lines of equal rank may swap: see RANKING_COLUMNS)."""
    return sorted(FACT_ID.sub("f_<id>", line) for line in text.splitlines())


def sections(markdown: str) -> dict[str, list[str]]:
    """A profile's sections: each heading with its lines, fact ids aside, in a stable order."""
    found: dict[str, list[str]] = {}
    for part in markdown.split("\n## "):
        heading, _, body = part.partition("\n")
        found[heading] = lines(body)
    return found


def test_the_import_lands_one_file_and_log_entries_and_copies_no_lake_table(homes: dict[str, Any]) -> None:
    b: Settings = homes["b_settings"]
    [landed] = (b.landing_dir / "bea").iterdir()
    assert landed.suffix == ".parquet"
    overrides = list((b.inputs_dir / "overrides").iterdir())
    forgets = list((b.inputs_dir / "forget").iterdir())
    accesses = list((b.inputs_dir / "access").iterdir())
    assert len(overrides) == 2 and len(forgets) == 1 and len(accesses) == 3
    assert "2 overrides, 1 forget, 3 access" in homes["imported"]


def test_facts_with_history_answer_as_they_did(homes: dict[str, Any]) -> None:
    a, b = homes["a"], homes["b"]
    assert rows(b.facts("bea", include_history=True)) == rows(a.facts("alice", include_history=True))
    assert rows(b.facts("bea", as_of="2024-05-01")) == rows(a.facts("alice", as_of="2024-05-01"))
    assert current(b, "bea", "job_title")["value"] == current(a, "alice", "job_title")["value"]
    assert any(REMEMBERED.split()[-1] in text for text in b.facts("bea")["content"])
    history_a = a.history(current(a, "alice", "job_title")["fact_id"], "alice")
    history_b = b.history(current(b, "bea", "job_title")["fact_id"], "bea")
    assert history_b.height >= 2 and rows(history_b) == rows(history_a)


def test_the_forgotten_fact_does_not_come_back(homes: dict[str, Any]) -> None:
    b: Memory = homes["b"]
    everything = b.facts("bea", include_history=True)
    assert homes["forgotten"] not in everything["content"].to_list()
    found = b.search("concise answers with code examples", "bea", scope="facts", as_of=AS_OF)
    assert not any(homes["forgotten"] in text for text in found["text"])


def hits(memory: Memory, agent: str, question: str, scope: str, k: int) -> list[dict[str, Any]]:
    """A search's hits that some list found (a score of 0 is a filler no list ranked: any order is as good)."""
    found = memory.search(question, agent, k=k, scope=scope, as_of=AS_OF).filter(pl.col("score") > 0)
    # message ids come best match first: equally good messages in either order
    found = found.with_columns(pl.col(c).list.sort() for c in ("message_ids", "context_message_ids") if c in found)
    return rows(found, ID_COLUMNS | RANKING_COLUMNS)


@pytest.mark.parametrize("scope", ["chunks", "episodes", "facts", "graph"])
def test_search_answers_as_it_did(homes: dict[str, Any], scope: str) -> None:
    """The same hits, each saying the same (text, conversation, messages, time, recency, importance, boosts...):
    each home's first 5 are among the other's first 10, which leaves room for ties that swap at the cut."""
    a, b = homes["a"], homes["b"]
    for question in QUESTIONS:
        before, after = hits(a, "alice", question, scope, 5), hits(b, "bea", question, scope, 5)
        assert before or scope == "graph"
        if question == QUESTIONS[0] and scope != "graph":  # the hits used: boosted alike, so their keys were re-keyed
            assert any(hit["access"] > 0 for hit in before) and any(hit["access"] > 0 for hit in after)
        assert all(hit in hits(a, "alice", question, scope, 10) for hit in after), question
        assert all(hit in hits(b, "bea", question, scope, 10) for hit in before), question


def test_profile_graph_and_context_answer_as_they_did(homes: dict[str, Any]) -> None:
    a, b = homes["a"], homes["b"]
    [profile_a], [profile_b] = a.profile("alice")["text"].to_list(), b.profile("bea")["text"].to_list()
    assert "The user works as a staff engineer." in profile_b
    assert sections(profile_b) == sections(profile_a)
    assert rows(b.entities("bea")) == rows(a.entities("alice"))
    assert rows(b.relations("bea")) == rows(a.relations("alice"))
    for question in QUESTIONS:
        blocks = {}
        for memory, agent in ((a, "alice"), (b, "bea")):
            blocks[agent] = [memory.context(question, agent, mode=mode, as_of=AS_OF) for mode in ("compact", "full")]
        for compact, full in zip(blocks["alice"], blocks["bea"], strict=True):
            assert compact.gate == full.gate
            assert [(s.name, len(s.lines)) for s in compact.sections] == [(s.name, len(s.lines)) for s in full.sections]
        # each line of one home's block is in the other's blocks (of equally ranked lines, the budget keeps either)
        shown = {agent: set(lines(compact.text)) | set(lines(full.text)) for agent, (compact, full) in blocks.items()}
        for agent, other in (("alice", "bea"), ("bea", "alice")):
            assert set(lines(blocks[agent][0].text)) <= shown[other], (question, agent)


# ---------------------------------------------------------------- bad input: one error line, nothing written


def files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


@pytest.fixture(scope="module")
def folder_export(homes: dict[str, Any]) -> Path:
    """A's export as a folder, through `Memory.export`."""
    path = homes["root"] / "alice-folder"
    manifest = homes["a"].export("alice", path)
    assert manifest["tables"]["transcripts/turns"]["rows"] == homes["a"].turns("alice").height
    assert json.loads((path / "manifest.json").read_text())["agent_id"] == "alice"
    return path


def a_copy(folder_export: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "export"
    shutil.copytree(folder_export, copy)
    return copy


def edit_manifest(folder: Path, change: Any) -> None:
    manifest = json.loads((folder / "manifest.json").read_text())
    change(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest))


def refused(source: Path, tmp_path: Path, match: str, agent: str = "cy", merge: bool = False,
            home: Path | None = None) -> None:
    """Importing `source` raises a ValueError matching `match` and leaves the home as it was."""
    from memlake.agent_export import import_agent

    home = home or tmp_path / "home"
    before = files_under(home)
    with pytest.raises(ValueError, match=match):
        import_agent(load_settings(home), source, agent, merge=merge)
    assert files_under(home) == before


def test_a_folder_without_its_manifest_is_refused(folder_export: Path, tmp_path: Path) -> None:
    copy = a_copy(folder_export, tmp_path)
    (copy / "manifest.json").unlink()
    refused(copy, tmp_path, "is not a memlake export: it has no manifest.json")


@pytest.mark.parametrize(("change", "match"), [
    (lambda m: m["tables"]["transcripts/turns"].update(schema_version="0123456789ab"),
     "table transcripts/turns has schema version '0123456789ab', this memlake .* has"),
    (lambda m: m["tables"]["inputs/forget"].update(schema_version=None), "table inputs/forget has schema version"),
    (lambda m: m.update(format_version=2), "export format version 2; this memlake .* reads version 1"),
    (lambda m: m.update(format="something-else"), "is not a memlake export: its manifest.json does not say"),
    (lambda m: m["tables"].pop("inputs/overrides"), "lists no table inputs/overrides"),
    (lambda m: m["tables"]["facts/facts"].update(rows=1), "rows, the manifest says 1"),
    (lambda m: m.update(agent_id="../etc"), "agent id"),
])
def test_a_manifest_that_does_not_match_this_memlake_or_its_files_is_refused(
        folder_export: Path, tmp_path: Path, change: Any, match: str) -> None:
    copy = a_copy(folder_export, tmp_path)
    edit_manifest(copy, change)
    refused(copy, tmp_path, match)


def test_a_damaged_table_file_is_refused(folder_export: Path, tmp_path: Path) -> None:
    copy = a_copy(folder_export, tmp_path)
    (copy / "transcripts" / "turns.parquet").write_bytes(b"not parquet at all")
    refused(copy, tmp_path, "turns.parquet is not a Parquet file of table transcripts/turns")
    (copy / "transcripts" / "turns.parquet").unlink()
    refused(copy, tmp_path, "the file 'transcripts/turns.parquet' of table transcripts/turns is missing")


def test_a_path_that_is_not_an_export_is_refused(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    refused(text, tmp_path, "is not a memlake export: neither a folder nor a .zip or .tar.gz archive")
    refused(tmp_path / "nowhere", tmp_path, "no export at")
    empty = tmp_path / "empty"
    empty.mkdir()
    refused(empty, tmp_path, "has no manifest.json")


@pytest.mark.parametrize("agent", ["../x", "-rf", "a b", "", "CON"])
def test_an_invalid_agent_id_is_refused(folder_export: Path, tmp_path: Path, agent: str) -> None:
    refused(folder_export, tmp_path, "agent id", agent=agent)


def test_an_agent_with_memory_is_refused_unless_merged_and_one_export_lands_once(
        homes: dict[str, Any], folder_export: Path) -> None:
    b: Settings = homes["b_settings"]
    refused(folder_export, b.home, "agent 'bea' already has memory in .* import as a new agent, or pass --merge",
            agent="bea", home=b.home)
    before = files_under(b.landing_dir / "bea")
    done = homes["b"].import_(folder_export, "bea", merge=True)  # another export of A: its own landing file
    assert done["turns"] == homes["a"].turns("alice").height
    assert len(files_under(b.landing_dir / "bea")) == len(before) + 1
    refused(folder_export, b.home, "is already imported as agent 'bea'", agent="bea", merge=True, home=b.home)


def test_export_refuses_a_path_taken_an_unknown_archive_name_and_an_agent_with_nothing(
        homes: dict[str, Any], tmp_path: Path) -> None:
    a: Memory = homes["a"]
    with pytest.raises(ValueError, match="already exists: an export writes a new folder"):
        a.export("alice", tmp_path)
    with pytest.raises(ValueError, match="an archive's name ends in .zip, .tar.gz, .tgz: got alice.rar"):
        a.export("alice", tmp_path / "alice.rar", archive=True)
    with pytest.raises(ValueError, match="agent 'nobody' has no memory"):
        a.export("nobody", tmp_path / "nobody")
    assert files_under(tmp_path) == []


def test_an_import_writes_landing_and_inputs_only(folder_export: Path, tmp_path: Path) -> None:
    from memlake.agent_export import import_agent

    settings = load_settings(tmp_path / "home")
    done = import_agent(settings, folder_export, "cy")
    written = [p for p in files_under(settings.home) if (settings.home / p).is_file() and "/." not in p]
    landed = [p for p in written if not p.startswith("inputs/")]
    assert landed == [f"landing/cy/memlake-import-{done['export_id']}.parquet"]
    assert len(written) - 1 == sum(done["entries"].values()) == 2 + 1 + 3  # overrides, forget, accesses


def test_a_zip_export_imports_as_the_folder_does(homes: dict[str, Any], folder_export: Path, tmp_path: Path) -> None:
    from memlake.agent_export import export_files, plan_import

    archive = tmp_path / "alice.zip"
    homes["a"].export("alice", archive, archive=True)
    with export_files(archive) as packed, export_files(folder_export) as folder:
        from_zip, from_folder = plan_import(packed, "cy"), plan_import(folder, "cy")
    assert from_zip.turns.equals(from_folder.turns)
    assert {k: len(v) for k, v in from_zip.entries.items()} == {k: len(v) for k, v in from_folder.entries.items()}


def test_the_cli_says_a_bad_import_in_one_line(folder_export: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    from tests.pipelines.test_cli import typed

    copy = a_copy(folder_export, tmp_path)
    edit_manifest(copy, lambda m: m.update(format_version=9))
    code, printed = typed(monkeypatch, capsys, "import", str(copy), "--agent", "cy", "--home", str(tmp_path / "h"))
    assert code == 2 and printed.strip().count("\n") == 0 and printed.startswith("error: ")
    assert files_under(tmp_path / "h") == []
