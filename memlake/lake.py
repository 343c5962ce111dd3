"""The lake: Parquet tables under `<home>/lake` (or `<storage_uri>/lake`), written atomically, read through DuckDB.

A partition (or an unpartitioned table) is one Parquet file. It is written to
a temporary file beside its final place and swapped in with `os.replace` (`memlake.atomic_files`), so a
reader sees the old file or the new one, never half of one, and a killed write
leaves the old data in place. On an object store (`memlake.storage`), which has no rename, the file is one
object uploaded whole: S3 shows it only once the upload completes, so the same holds (docs/decisions.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads  # read_table imports it on first use too; never first on a reader thread
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from memlake.atomic_files import TMP_PREFIX
from memlake.changes import mark_changed
from memlake.schemas import PARTITION_COLUMN, TABLES, Table
from memlake.settings import Settings
from memlake.storage import ObjectStorageUnsupported, Store, lake_store, write_parquet_whole

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


def _atomic_write(store: Store, path: str, data: pa.Table) -> None:
    """`data` as the Parquet file `path` of `store`, whole or not at all (`write_parquet_whole`)."""
    if store.local:
        for stale in Path(path).parent.glob(f"{TMP_PREFIX}*"):
            stale.unlink(missing_ok=True)  # left by a killed write; never read
    write_parquet_whole(store, path, data)


def _stamped(data: pa.Table, stamp: Mapping[str, str] | None) -> pa.Table:
    """`data` with `stamp` in its schema metadata, which Parquet keeps in the file's footer."""
    return data.replace_schema_metadata({**(data.schema.metadata or {}), **stamp}) if stamp else data


def _footer_value(store: Store, path: str, key: str) -> str | None:
    value = (pq.read_schema(path, filesystem=store.filesystem).metadata or {}).get(key.encode())
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
    """Reads and writes the lake tables of one home: a local folder, or a prefix of an object store
    (`memlake.storage`). Every read, write, listing and footer stamp goes through the store's filesystem."""

    def __init__(self, root: str | Path | Store) -> None:
        self.store = root if isinstance(root, Store) else Store.folder(Path(root))

    @classmethod
    def of(cls, settings: Settings) -> Lake:
        """The home's lake, where its settings put it (`storage_uri`)."""
        return cls(lake_store(settings))

    def _table_path(self, table: Table) -> str:
        return self.store.file(table.layer, table.name)

    def _partition_path(self, table: Table, day: str) -> str:
        return self.store.file(table.layer, table.name, f"{PARTITION_COLUMN}={day}", DATA_FILE)

    def _local(self, what: str) -> None:
        if not self.store.local:
            raise ObjectStorageUnsupported(f"{what} names a local file; this lake is at {self.store.uri}")

    def partition_file(self, table: Table, day: str) -> Path:
        """The file of one day of `table` in a local lake."""
        self._local("Lake.partition_file")
        return Path(self._partition_path(table, day))

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
        _atomic_write(self.store, self.store.file(table.layer, table.name, DATA_FILE), conformed)
        mark_changed(self.store)
        return conformed.num_rows

    def write_partition(
        self, table: Table, day: str, data: pa.Table | Sequence[dict[str, Any]] | pl.DataFrame
    ) -> int:
        """Replace one daily partition of `table` (an empty one is written as an empty file)."""
        if not table.partitioned:
            raise ValueError(f"{table.path} is not partitioned: use write")
        conformed = conform(table, data)
        _atomic_write(self.store, self._partition_path(table, day), conformed)
        mark_changed(self.store)
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
            list(pool.map(lambda day: _atomic_write(self.store, self._partition_path(table, day), conformed[day]),
                          conformed))
        mark_changed(self.store)
        return _with_days(table, list(conformed.values()), list(conformed))

    def partitions(self, table: Table) -> list[str]:
        """The days that have a written partition, sorted: one listing of the table's folder (or prefix)."""
        prefix = f"{PARTITION_COLUMN}="
        root = self._table_path(table)
        selector = pafs.FileSelector(root, recursive=True, allow_not_found=True)
        days = []
        for info in self.store.filesystem.get_file_info(selector):
            parts = info.path[len(root):].strip("/").split("/")
            if (info.type == pafs.FileType.File and len(parts) == 2 and parts[1] == DATA_FILE
                    and parts[0].startswith(prefix)):
                days.append(parts[0][len(prefix):])
        return sorted(days)

    def stamps(self, table: Table, key: str) -> dict[str, str | None]:
        """Each written day's stamp `key` (None: its file has none), read from the files' footers only."""
        return {day: _footer_value(self.store, self._partition_path(table, day), key)
                for day in self.partitions(table)}

    def stamp(self, table: Table, key: str) -> str | None:
        """An unpartitioned table's stamp `key` (None: no file yet, or a file without it)."""
        return (self.footer(table) or {}).get(key)

    def footer(self, table: Table) -> dict[str, str] | None:
        """An unpartitioned table's stamps, from its file's footer only (None: no file yet)."""
        paths = self._paths(table)
        if not paths:
            return None
        metadata = pq.read_schema(paths[0], filesystem=self.store.filesystem).metadata or {}
        return {k.decode(): v.decode() for k, v in metadata.items() if not k.startswith(b"ARROW")}

    def _paths(self, table: Table, days: Iterable[str] | None = None) -> list[str]:
        """The table's files (of `days`, when given) as paths of the store's filesystem."""
        if not table.partitioned:
            path = self.store.file(table.layer, table.name, DATA_FILE)
            return [path] if self.store.filesystem.get_file_info(path).type == pafs.FileType.File else []
        written = self.partitions(table)
        wanted = written if days is None else sorted(set(days) & set(written))
        return [self._partition_path(table, day) for day in wanted]

    def files(self, table: Table, days: Iterable[str] | None = None) -> list[Path]:
        """The table's files in a local lake (`file_states`, `holds`, `read_file`: any lake)."""
        self._local("Lake.files")
        return [Path(path) for path in self._paths(table, days)]

    def file_states(self, table: Table) -> list[tuple[str, int, int]]:
        """Each file of the table with its size and modification time: what changes when it is written again."""
        infos = self.store.filesystem.get_file_info(self._paths(table))
        return [(info.path, info.size or 0, info.mtime_ns or 0) for info in infos
                if info.type == pafs.FileType.File]

    def holds(self, table: Table, column: str, value: str) -> bool:
        """Whether any row of `table` has `value` in `column` (reading that column only)."""
        paths = self._paths(table)
        if not paths:
            return False
        found = pads.dataset(paths, filesystem=self.store.filesystem, format="parquet").head(
            1, columns=[column], filter=pc.field(column) == value)
        return found.num_rows > 0

    def read_file(self, path: str | Path) -> pa.Table:
        """One file of the lake as written (`paths_of`), its footer's metadata kept."""
        return pq.read_table(str(path), filesystem=self.store.filesystem)

    def paths_of(self, table: Table) -> list[str]:
        """The table's files, to read and replace one by one (`read_file`, `replace_file`)."""
        return self._paths(table)

    def replace_file(self, path: str | Path, data: pa.Table) -> None:
        """One file of the lake replaced whole (`paths_of`), with the same guarantee as every write."""
        _atomic_write(self.store, str(path), data)
        mark_changed(self.store)

    def read(self, table: Table, days: Iterable[str] | None = None) -> pl.DataFrame:
        """A table (or some of its days) as a Polars frame, with the `day` column when partitioned."""
        paths = self._paths(table, days)
        fs = self.store.filesystem
        if len(paths) > 1:
            with ThreadPoolExecutor(_FILE_THREADS) as pool:
                parts = list(pool.map(lambda path: pq.read_table(path, schema=table.schema, filesystem=fs), paths))
        else:  # one file (an unpartitioned table, a single day): no pool to start
            parts = [pq.read_table(path, schema=table.schema, filesystem=fs) for path in paths]
        days = [path.rsplit("/", 2)[1].split("=", 1)[1] for path in paths] if table.partitioned else []
        return _with_days(table, parts, days)

    @staticmethod
    def empty(table: Table) -> pl.DataFrame:
        frame = pl.from_arrow(table.schema.empty_table())
        assert isinstance(frame, pl.DataFrame)
        if table.partitioned:
            frame = frame.with_columns(pl.lit(None, dtype=pl.String).alias(PARTITION_COLUMN))
        return frame

    def _dataset(self, table: Table, paths: list[str]) -> pads.Dataset:
        """The files as one pyarrow dataset read through the store, with the `day` of a partitioned one."""
        schema, partitioning = table.schema, None
        if table.partitioned:
            day = pa.schema([(PARTITION_COLUMN, pa.string())])
            schema, partitioning = pa.unify_schemas([table.schema, day]), pads.partitioning(day, flavor="hive")
        return pads.dataset(paths, schema=schema, format="parquet", filesystem=self.store.filesystem,
                            partitioning=partitioning, partition_base_dir=self._table_path(table))

    def connect(self) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB connection with every lake table as a view `<layer>.<table>`.

        Each reader gets its own connection: no database file is shared
        between writers and readers.
        """
        con = duckdb.connect()
        for table in TABLES.values():
            con.execute(f'CREATE SCHEMA IF NOT EXISTS "{table.layer}"')
            files = self._paths(table)
            view = f'"{table.layer}"."{table.name}"'
            if files and not self.store.local:  # no httpfs here: DuckDB scans a pyarrow dataset of the store
                con.register(f"_files_{table.layer}_{table.name}", self._dataset(table, files))
                con.execute(f"CREATE VIEW {view} AS SELECT * FROM _files_{table.layer}_{table.name}")
            elif files:
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
