"""The lake writer replaces partitions atomically; the reader sees every table through DuckDB."""

import os
from datetime import UTC, datetime

import polars as pl
import pytest

from memlake.lake import Lake, query
from memlake.schemas import LANDING_MANIFEST, TABLES, TURNS


def turn(message_id: str, content: str) -> dict:
    return {
        "agent_id": "a",
        "conversation_id": "c",
        "message_id": message_id,
        "turn_index": 0,
        "role": "user",
        "content": content,
        "created_at": datetime(2024, 1, 1, tzinfo=UTC),
    }


def test_write_partition_replaces_only_that_day(tmp_path):
    lake = Lake(tmp_path)
    lake.write_partition(TURNS, "2024-01-01", [turn("m1", "old")])
    lake.write_partition(TURNS, "2024-01-02", [turn("m2", "other day")])
    lake.write_partition(TURNS, "2024-01-01", [turn("m3", "new")])

    frame = lake.read(TURNS).sort("day")
    assert frame["message_id"].to_list() == ["m3", "m2"]
    assert frame["day"].to_list() == ["2024-01-01", "2024-01-02"]
    assert lake.partitions(TURNS) == ["2024-01-01", "2024-01-02"]


def test_killed_write_leaves_old_partition_and_rerun_completes(tmp_path, monkeypatch):
    lake = Lake(tmp_path)
    lake.write_partition(TURNS, "2024-01-01", [turn("m1", "old")])

    def killed(*_args, **_kwargs):
        raise KeyboardInterrupt("killed between the temporary file and the rename")

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        lake.write_partition(TURNS, "2024-01-01", [turn("m2", "new")])
    monkeypatch.undo()

    assert lake.read(TURNS)["content"].to_list() == ["old"]
    lake.write_partition(TURNS, "2024-01-01", [turn("m2", "new")])
    assert lake.read(TURNS)["content"].to_list() == ["new"]
    leftovers = [p.name for p in lake.partition_file(TURNS, "2024-01-01").parent.iterdir()]
    assert leftovers == ["data.parquet"]


def test_conform_fills_missing_columns_and_keeps_schema(tmp_path):
    lake = Lake(tmp_path)
    lake.write_partition(TURNS, "2024-01-01", [turn("m1", "x")])
    frame = lake.read(TURNS)
    assert frame.columns == [*TURNS.schema.names, "day"]
    assert frame["speaker"].to_list() == [None]


def test_duckdb_views_cover_every_table_even_empty(tmp_path):
    lake = Lake(tmp_path)
    lake.write_partition(TURNS, "2024-01-01", [turn("m1", "x"), turn("m2", "y")])
    con = lake.connect()
    for table in TABLES.values():
        query(con, f'SELECT * FROM "{table.layer}"."{table.name}" LIMIT 0')
    counted = query(con, "SELECT day, count(*) AS n FROM transcripts.turns WHERE agent_id = ? GROUP BY day", ["a"])
    assert counted.to_dicts() == [{"day": "2024-01-01", "n": 2}]
    assert query(con, "SELECT count(*) AS n FROM transcripts.landing_manifest")["n"].to_list() == [0]


def test_unpartitioned_and_partitioned_writes_are_not_mixed(tmp_path):
    lake = Lake(tmp_path)
    with pytest.raises(ValueError):
        lake.write(TURNS, pl.DataFrame())
    with pytest.raises(ValueError):
        lake.write_partition(LANDING_MANIFEST, "2024-01-01", [])


def test_write_partitions_writes_every_day_and_returns_what_a_read_gives(tmp_path):
    lake = Lake(tmp_path)
    lake.write_partition(TURNS, "2024-01-03", [turn("stale", "to be emptied")])
    written = lake.write_partitions(
        TURNS, {"2024-01-01": [turn("m1", "one")], "2024-01-02": [turn("m2", "two")], "2024-01-03": []}
    )
    assert lake.partitions(TURNS) == ["2024-01-01", "2024-01-02", "2024-01-03"]
    assert written.equals(lake.read(TURNS))
    assert written["message_id"].to_list() == ["m1", "m2"]
    assert written["day"].to_list() == ["2024-01-01", "2024-01-02"]
