"""A scanner that finds a text anywhere under a home: what a forget is proven against.

Every file is read as bytes (landing, quarantine, caches, logs, service files, Lance data files); Parquet
files are also read as rows (their pages are compressed, so bytes alone would miss text), every version of
every LanceDB table is read as rows, and every SQLite database (Dagster's instance storage) is read as
rows of every table as well as bytes (a freed page may still hold text).
"""

from __future__ import annotations

import sqlite3
import zipfile
from collections import Counter
from pathlib import Path

import lancedb
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq


def occurrences(home: Path, needle: str) -> Counter[str]:
    """Where `needle` is under `home`: a count per file (or per `lancedb/<table>@v<version>`)."""
    found: Counter[str] = Counter()
    raw = needle.encode()
    for path in sorted(p for p in home.rglob("*") if p.is_file()):
        name = path.relative_to(home).as_posix()
        data = path.read_bytes()
        found[name] += data.count(raw)
        if path.suffix == ".parquet" or data[:4] == b"PAR1":
            found[name] += _in_parquet(path, needle)
        elif data[:16] == b"SQLite format 3\x00":
            found[name] += _in_sqlite(path, needle)
        elif zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                found[name] += sum(archive.read(member).count(raw) for member in archive.namelist())
    found.update(_in_lance(home / "lancedb", needle))
    return Counter({k: v for k, v in found.items() if v})


def store_occurrences(filesystem: pafs.FileSystem, prefix: str, lance_uri: str, lance_options: dict[str, str],
                      needle: str) -> Counter[str]:
    """Where `needle` is among the objects under `prefix` of an object store, and in every version of every
    LanceDB table at `lance_uri`: a count per object (or per `lancedb/<table>@v<version>`)."""
    found: Counter[str] = Counter()
    raw = needle.encode()
    selector = pafs.FileSelector(prefix, recursive=True, allow_not_found=True)
    for info in sorted(filesystem.get_file_info(selector), key=lambda info: info.path):
        if info.type != pafs.FileType.File:
            continue
        with filesystem.open_input_stream(info.path) as stream:
            data = stream.read()
        found[info.path] += data.count(raw)
        if info.path.endswith(".parquet") or data[:4] == b"PAR1":
            found[info.path] += _in_parquet(pa.BufferReader(data), needle)
    found.update(_in_lance_tables(lancedb.connect(lance_uri, storage_options=lance_options), needle))
    return Counter({k: v for k, v in found.items() if v})


def _in_parquet(path: Path | pa.BufferReader, needle: str) -> int:
    try:
        table = pq.read_table(path)
    except Exception:  # a Lance or other file that starts like Parquet: its bytes were read
        return 0
    return sum(str(value).count(needle) for column in table.columns for value in column.to_pylist())


def _in_sqlite(path: Path, needle: str) -> int:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        count = 0
        for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            for row in con.execute(f'SELECT * FROM "{table}"'):
                count += sum(str(v).count(needle) for v in row if isinstance(v, str | bytes))
        return count
    finally:
        con.close()


def _in_lance(root: Path, needle: str) -> Counter[str]:
    if not root.is_dir():
        return Counter()
    return _in_lance_tables(lancedb.connect(str(root)), needle)


def _in_lance_tables(db: lancedb.DBConnection, needle: str) -> Counter[str]:
    found: Counter[str] = Counter()
    for name in db.list_tables().tables:
        table = db.open_table(name)
        for version in table.list_versions():
            number = version["version"] if isinstance(version, dict) else version.version
            table.checkout(number)
            rows = table.to_arrow()
            found[f"lancedb/{name}@v{number}"] += sum(
                str(value).count(needle) for column in rows.columns for value in column.to_pylist())
    return found


def files_of(home: Path, agent_id: str) -> dict[str, bytes]:
    """The bytes of every file in the agent's landing folder: another agent's data is compared with them."""
    folder = home / "landing" / agent_id
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
