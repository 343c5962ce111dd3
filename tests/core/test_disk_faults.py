"""A full disk, a quota and a read-only file system are told apart from other errors, in every shape they reach a
shell in; and a write that meets one leaves nothing under its final name and names that name."""

import errno

import pyarrow as pa
import pytest

from memlake.atomic_files import write_parquet_atomically, write_text_atomically
from memlake.disk_faults import disk_fault, disk_fault_in_text
from tests.disk_faults import faulty_disk


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (OSError(errno.ENOSPC, "No space left on device", "/h/landing/a/chat.jsonl"),
         "no space left on device: /h/landing/a/chat.jsonl"),
        (OSError(errno.EDQUOT, "Disk quota exceeded", "/h/x"), "no space left on device (disk quota exceeded): /h/x"),
        (OSError(errno.EROFS, "Read-only file system", "/h/inputs"), "read-only file system: /h/inputs"),
        # pyarrow: the errno, its own words, no file name
        (OSError(errno.ENOSPC, "Error writing bytes to file. Detail: [errno 28] No space left on device"),
         "no space left on device"),
        # LanceDB (Rust io errors) and SQLite: the words only
        (RuntimeError("lance error: LanceError(IO): No space left on device (os error 28)"), "no space left on device"),
        (Exception("sqlite3.OperationalError: database or disk is full"), "no space left on device"),
    ],
)
def test_a_disk_fault_is_recognised_in_each_shape_it_arrives_in(error, said):
    assert str(disk_fault(error)) == said


def test_a_fault_that_caused_another_error_is_found_through_the_chain():
    try:
        try:
            raise OSError(errno.EROFS, "Read-only file system", "/h/lake")
        except OSError as exc:
            raise RuntimeError("the step failed") from exc
    except RuntimeError as wrapped:
        assert str(disk_fault(wrapped)) == "read-only file system: /h/lake"


def test_a_failed_dagster_steps_message_names_the_fault_and_path():
    message = "OSError: [Errno 28] No space left on device: '/h/lake/episodes/x/day=2024-03-01/data.parquet'\n"
    fault = disk_fault_in_text(message)
    assert fault is not None and fault.path == "/h/lake/episodes/x/day=2024-03-01/data.parquet"


@pytest.mark.parametrize("error", [OSError(errno.ENOENT, "No such file or directory", "/h/x"),
                                   OSError(errno.EACCES, "Permission denied", "/h/x"),
                                   ValueError("no space in the query"), KeyError("disk")])
def test_other_errors_are_not_disk_faults(error):
    assert disk_fault(error) is None


@pytest.mark.parametrize("fault", [errno.ENOSPC, errno.EROFS])
def test_an_atomic_write_that_meets_a_fault_leaves_the_old_file_and_names_the_final_path(tmp_path, monkeypatch,
                                                                                         fault):
    text, table = tmp_path / "note.txt", tmp_path / "data.parquet"
    write_text_atomically(text, "old")
    with faulty_disk(monkeypatch, tmp_path, fault):
        with pytest.raises(OSError) as met:
            write_text_atomically(text, "new")
        assert met.value.filename == str(text)
        with pytest.raises(OSError) as met:
            write_parquet_atomically(table, pa.table({"a": [1, 2, 3]}))
        assert met.value.errno == fault and met.value.filename == str(table)  # pyarrow named no file
    assert text.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["note.txt"]  # no temporary, no cut-short data.parquet
