"""A full or read-only disk, as the commands meet it: one line saying so with the path, a non-zero exit, no
file cut short under its final name, and nothing lost (a retry after the fault lands and builds what an
uninterrupted run would have)."""

import errno

import polars as pl
import pytest

from memlake.api import Memory
from memlake.lake import Lake
from memlake.schemas import TABLES
from tests.conftest import land
from tests.disk_faults import faulty_disk
from tests.pipelines.test_cli import typed
from tests.transcripts.helpers import CONVERSATION, jsonl

SAID = {errno.ENOSPC: "no space left on device", errno.EDQUOT: "no space left on device (disk quota exceeded)",
        errno.EROFS: "read-only file system"}


def one_error_line(code: int, printed: str, fault: int, path_part: str) -> None:
    assert code == 1, printed
    assert "Traceback" not in printed, printed
    errors = [line for line in printed.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(f"error: {SAID[fault]}: "), printed
    assert path_part in errors[0], printed


@pytest.mark.parametrize("fault", [errno.ENOSPC, errno.EDQUOT, errno.EROFS])
def test_ingest_on_a_full_disk_lands_nothing_under_the_final_name_and_the_retry_lands_that_name(
        settings, monkeypatch, capsys, tmp_path, fault):
    export = tmp_path / "chat.jsonl"
    export.write_text(jsonl(*CONVERSATION))
    folder = settings.landing_dir / "alice"
    with faulty_disk(monkeypatch, settings.landing_dir, fault) as failed:
        code, printed = typed(monkeypatch, capsys, "ingest", str(export), "--agent", "alice",
                              "--home", str(settings.home))
    assert failed, "the fault was never hit"
    one_error_line(code, printed, fault, str(folder))
    assert not folder.is_dir() or list(folder.iterdir()) == []  # no cut-short file, no temporary left

    code, printed = typed(monkeypatch, capsys, "ingest", str(export), "--agent", "alice", "--home", str(settings.home))
    assert code == 0, printed
    assert [p.name for p in folder.iterdir()] == ["chat.jsonl"]  # not chat.1.jsonl
    assert (folder / "chat.jsonl").read_bytes() == export.read_bytes()


@pytest.mark.parametrize("fault", [errno.ENOSPC, errno.EROFS])
def test_remember_and_forget_on_a_full_disk_say_so_in_one_line_and_keep_what_was_there(
        settings, monkeypatch, capsys, fault):
    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")
    kept = Memory(settings.home).remember("alice", "I live in Porto.")["fact_id"][0]
    with faulty_disk(monkeypatch, settings.inputs_dir, fault):
        code, printed = typed(monkeypatch, capsys, "remember", "I play the cello.", "--agent", "alice",
                              "--home", str(settings.home))
        one_error_line(code, printed, fault, str(settings.inputs_dir / "overrides"))
        code, printed = typed(monkeypatch, capsys, "forget", "--fact", kept, "--agent", "alice",
                              "--home", str(settings.home))
        one_error_line(code, printed, fault, str(settings.inputs_dir / "forget"))
    facts = Memory(settings.home).facts("alice")  # reads keep working, and see what was there before
    assert facts["fact_id"].to_list() == [kept]
    logs = [p for p in settings.inputs_dir.rglob("*") if p.is_file() and not p.name.startswith(".changed")]
    assert all(not p.name.startswith(".") and p.stat().st_size for p in logs), logs  # nothing half-written

    code, printed = typed(monkeypatch, capsys, "remember", "I play the cello.", "--agent", "alice",
                          "--home", str(settings.home))
    assert code == 0, printed
    assert "cello" in " ".join(Memory(settings.home).facts("alice")["content"].to_list())


# the times that are the clock's, which two runs can never share: when a file was first seen, when a
# distillation was computed
CLOCK_COLUMNS = ("ingested_at", "first_seen_at")
CLOCK_COLUMNS_OF = {"episodes/distill_cache": ("created_at",)}


def lake_tables(settings) -> dict[str, pl.DataFrame]:
    """Every lake table's rows, in a fixed order, without the clock's times."""
    lake, tables = Lake(settings.lake_dir), {}
    for name, table in TABLES.items():
        frame = lake.read(table)
        clock = (*CLOCK_COLUMNS, *CLOCK_COLUMNS_OF.get(name, ()))
        frame = frame.drop([c for c in frame.columns if c in clock])
        sortable = [c for c, t in frame.schema.items() if not isinstance(t, pl.List | pl.Struct | pl.Array)]
        tables[name] = frame.sort(sortable) if frame.height else frame
    return tables


def test_a_run_on_a_full_disk_says_the_cause_in_one_line_and_the_rerun_builds_what_an_uninterrupted_run_does(
        settings, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")
    land(settings, "alice", "chat.jsonl", jsonl(*CONVERSATION))
    episodes = settings.lake_dir / "episodes"  # the disk fills once the turns and chunks are written
    with faulty_disk(monkeypatch, episodes) as failed:
        code, printed = typed(monkeypatch, capsys, "run", "--home", str(settings.home))
    assert failed, "the fault was never hit"
    assert code == 1, printed
    verdict = [line for line in printed.splitlines() if line.startswith("run ") and "FAILED" in line]
    assert len(verdict) == 1, printed
    assert f": FAILED: {SAID[errno.ENOSPC]}: {episodes}" in verdict[0], printed
    last = printed.strip().splitlines()[-1]  # and the last line says it again, where the eye lands
    assert last.startswith(f"error: run {verdict[0].split()[1].rstrip(':')} failed: {SAID[errno.ENOSPC]}: {episodes}")
    assert not [p for p in settings.lake_dir.rglob("*") if p.is_file() and p.name.startswith(".tmp-")]
    assert Memory(settings.home).turns("alice").height == len(CONVERSATION)  # reads keep working

    code, printed = typed(monkeypatch, capsys, "run", "--home", str(settings.home))
    assert code == 0, printed

    uninterrupted = tmp_path / "uninterrupted"
    monkeypatch.setenv("MEMLAKE_HOME", str(uninterrupted))
    from memlake.settings import load_settings

    other = load_settings(uninterrupted)
    land(other, "alice", "chat.jsonl", jsonl(*CONVERSATION))
    code, printed = typed(monkeypatch, capsys, "run", "--home", str(uninterrupted))
    assert code == 0, printed
    rerun, straight = lake_tables(settings), lake_tables(other)
    for name in TABLES:
        differ = [c for c in rerun[name].columns if rerun[name].height != straight[name].height
                  or not rerun[name][c].equals(straight[name][c])]
        assert not differ, (name, differ)
    assert Memory(settings.home).search("Berlin", "alice").height


def test_a_temporary_left_by_a_killed_ingest_does_not_count_as_landed(settings, monkeypatch, capsys, tmp_path):
    """A copy killed between its last byte and its rename leaves the whole bytes under a hidden temporary name,
    which the landing scan never reads: the next ingest must land the file, not call it already there."""
    export = tmp_path / "chat.jsonl"
    export.write_text(jsonl(*CONVERSATION))
    folder = settings.landing_dir / "alice"
    folder.mkdir(parents=True)
    (folder / ".tmp-0123456789abcdef").write_bytes(export.read_bytes())
    code, printed = typed(monkeypatch, capsys, "ingest", str(export), "--agent", "alice", "--home", str(settings.home))
    assert code == 0 and "1 new file(s)" in printed, printed
    assert (folder / "chat.jsonl").read_bytes() == export.read_bytes()


def test_token_add_on_a_read_only_disk_says_so_and_no_token_file_appears(settings, monkeypatch, capsys):
    tokens = settings.home / "service"
    with faulty_disk(monkeypatch, tokens, errno.EROFS) as failed:
        code, printed = typed(monkeypatch, capsys, "token", "add", "--agent", "alice", "--home", str(settings.home))
    assert failed, "the fault was never hit"
    one_error_line(code, printed, errno.EROFS, str(tokens / "tokens.json"))
    assert not tokens.is_dir() or list(tokens.iterdir()) == []
