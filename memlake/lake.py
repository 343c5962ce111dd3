"""The lake: Parquet tables under `<home>/lake`, written atomically, read through DuckDB.

A partition (or an unpartitioned table) is one Parquet file. It is written to
a temporary file beside its final place and swapped in with `os.replace` (`memlake.atomic_files`), so a
reader sees the old file or the new one, never half of one, and a killed write
leaves the old data in place.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.dataset  # noqa: F401  # read_table imports it on first use; never first on a reader thread
import pyarrow.parquet as pq

from memlake.atomic_files import TMP_PREFIX, write_parquet_atomically
from memlake.changes import mark_changed
from memlake.schemas import PARTITION_COLUMN, TABLES, Table

DATA_FILE = "data.parquet"
# Parquet reads, writes and fsyncs release the GIL: a run touching hundreds of daily files
# spends most of its lake time waiting on them one by one otherwise.
_FILE_THREADS = 4


def conform(table: Table, data: pa.Table | Sequence[dict[str, Any]] | pl.DataFrame) -> pa.Table:
    """`data` with exactly the table's columns, order and types; missing columns become null."""
    if isinstance(data, pl.DataFrame):
        data = data.to_arrow()
    if not isinstance(data, pa.Table):
        return pa.Table.from_pylist(list(data), schema=table.schema)
    columns = []
    for field in table.schema:
        if field.name in data.column_names:
            columns.append(data.column(field.name).cast(field.type))
        else:
            columns.append(pa.nulls(data.num_rows, field.type))
    return pa.Table.from_arrays(columns, schema=table.schema)


def _atomic_write(path: Path, data: pa.Table) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    for stale in path.parent.glob(f"{TMP_PREFIX}*"):
        stale.unlink(missing_ok=True)  # left by a killed write; never read
    write_parquet_atomically(path, data)


def _stamped(data: pa.Table, stamp: Mapping[str, str] | None) -> pa.Table:
    """`data` with `stamp` in its schema metadata, which Parquet keeps in the file's footer."""
    return data.replace_schema_metadata({**(data.schema.metadata or {}), **stamp}) if stamp else data


def _footer_value(path: Path, key: str) -> str | None:
    value = (pq.read_schema(path).metadata or {}).get(key.encode())
    return value.decode() if value is not None else None


def _with_days(table: Table, parts: list[pa.Table], days: list[str]) -> pl.DataFrame:
    """`parts` (one per file, in order) as one frame; a partitioned table's rows get their file's day."""
    if not parts:
        return Lake.empty(table)
    if table.partitioned:
        parts = [
            part.append_column(PARTITION_COLUMN, pa.array([day] * part.num_rows, pa.string()))
            for part, day in zip(parts, days, strict=True)
        ]
    frame = pl.from_arrow(pa.concat_tables(parts))
    assert isinstance(frame, pl.DataFrame)
    return frame


class Lake:
    """Reads and writes the lake tables of one home."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def table_dir(self, table: Table) -> Path:
        return self.root / table.layer / table.name

    def partition_file(self, table: Table, day: str) -> Path:
        return self.table_dir(table) / f"{PARTITION_COLUMN}={day}" / DATA_FILE

    def write(
        self,
        table: Table,
        data: pa.Table | Sequence[dict[str, Any]] | pl.DataFrame,
        stamp: Mapping[str, str] | None = None,
    ) -> int:
        """Replace an unpartitioned table whole, its file stamped with `stamp` (see `stamp`). Returns the
        row count."""
        if table.partitioned:
            raise ValueError(f"{table.path} is partitioned: use write_partition")
        conformed = _stamped(conform(table, data), stamp)
        _atomic_write(self.table_dir(table) / DATA_FILE, conformed)
        mark_changed(self.root)
        return conformed.num_rows

    def write_partition(
        self, table: Table, day: str, data: pa.Table | Sequence[dict[str, Any]] | pl.DataFrame
    ) -> int:
        """Replace one daily partition of `table` (an empty one is written as an empty file)."""
        if not table.partitioned:
            raise ValueError(f"{table.path} is not partitioned: use write")
        conformed = conform(table, data)
        _atomic_write(self.partition_file(table, day), conformed)
        mark_changed(self.root)
        return conformed.num_rows

    def write_partitions(
        self,
        table: Table,
        by_day: Mapping[str, pa.Table | Sequence[dict[str, Any]] | pl.DataFrame],
        stamp: Mapping[str, str] | None = None,
    ) -> pl.DataFrame:
        """`write_partition` for many days, side by side (each file still swapped in atomically), each
        file stamped with `stamp` (key-value metadata in its footer: what built it, see `stamps`).

        Returns the rows written, as `read` of those days would give them.
        """
        conformed = {day: _stamped(conform(table, data), stamp) for day, data in by_day.items()}
        with ThreadPoolExecutor(_FILE_THREADS) as pool:
            list(pool.map(lambda day: _atomic_write(self.partition_file(table, day), conformed[day]), conformed))
        mark_changed(self.root)
        return _with_days(table, list(conformed.values()), list(conformed))

    def partitions(self, table: Table) -> list[str]:
        """The days that have a written partition, sorted."""
        prefix = f"{PARTITION_COLUMN}="
        root = self.table_dir(table)
        if not root.is_dir():
            return []
        return sorted(
            p.name[len(prefix) :]
            for p in root.iterdir()
            if p.name.startswith(prefix) and (p / DATA_FILE).is_file()
        )

    def stamps(self, table: Table, key: str) -> dict[str, str | None]:
        """Each written day's stamp `key` (None: its file has none), read from the files' footers only."""
        return {day: _footer_value(self.partition_file(table, day), key) for day in self.partitions(table)}

    def stamp(self, table: Table, key: str) -> str | None:
        """An unpartitioned table's stamp `key` (None: no file yet, or a file without it)."""
        path = self.table_dir(table) / DATA_FILE
        return _footer_value(path, key) if path.is_file() else None

    def files(self, table: Table, days: Iterable[str] | None = None) -> list[Path]:
        if not table.partitioned:
            path = self.table_dir(table) / DATA_FILE
            return [path] if path.is_file() else []
        wanted = self.partitions(table) if days is None else sorted(set(days))
        return [f for day in wanted if (f := self.partition_file(table, day)).is_file()]

    def read(self, table: Table, days: Iterable[str] | None = None) -> pl.DataFrame:
        """A table (or some of its days) as a Polars frame, with the `day` column when partitioned."""
        files = self.files(table, days)
        if len(files) > 1:
            with ThreadPoolExecutor(_FILE_THREADS) as pool:
                parts = list(pool.map(lambda path: pq.read_table(path, schema=table.schema), files))
        else:  # one file (an unpartitioned table, a single day): no pool to start
            parts = [pq.read_table(path, schema=table.schema) for path in files]
        days = [path.parent.name.split("=", 1)[1] for path in files] if table.partitioned else []
        return _with_days(table, parts, days)

    @staticmethod
    def empty(table: Table) -> pl.DataFrame:
        frame = pl.from_arrow(table.schema.empty_table())
        assert isinstance(frame, pl.DataFrame)
        if table.partitioned:
            frame = frame.with_columns(pl.lit(None, dtype=pl.String).alias(PARTITION_COLUMN))
        return frame

    def connect(self) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB connection with every lake table as a view `<layer>.<table>`.

        Each reader gets its own connection: no database file is shared
        between writers and readers.
        """
        con = duckdb.connect()
        for table in TABLES.values():
            con.execute(f'CREATE SCHEMA IF NOT EXISTS "{table.layer}"')
            files = self.files(table)
            view = f'"{table.layer}"."{table.name}"'
            if files:
                file_list = ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)
                con.execute(
                    f"CREATE VIEW {view} AS SELECT * FROM read_parquet([{file_list}], "
                    f"hive_partitioning = {str(table.partitioned).lower()}, hive_types_autocast = false, "
                    "union_by_name = true)"
                )
            else:
                con.register(f"_empty_{table.layer}_{table.name}", self.empty(table).to_arrow())
                con.execute(f"CREATE VIEW {view} AS SELECT * FROM _empty_{table.layer}_{table.name}")
        return con


def query(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] | None = None) -> pl.DataFrame:
    """Run a parameterised query and return a Polars frame."""
    return con.sql(sql, params=list(params) if params is not None else None).pl()
