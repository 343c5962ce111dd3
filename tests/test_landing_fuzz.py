"""Whatever lands, the manifest either ingests it or quarantines it with a reason; landing is untouched."""

import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from memlake.lake import Lake
from memlake.landing import update_manifest
from memlake.schemas import LANDING_MANIFEST
from memlake.settings import load_settings
from tests.conftest import SAMPLES

SEEDS = {p.name: p.read_bytes() for p in sorted((SAMPLES / "demo").iterdir())}


@st.composite
def damaged_file(draw) -> tuple[str, bytes]:
    name = draw(st.sampled_from(sorted(SEEDS)))
    data = bytearray(SEEDS[name])
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["truncate", "flip", "insert", "delete"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "truncate":
            del data[at:]
        elif kind == "flip" and data:
            data[at] ^= draw(st.integers(1, 255))
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif data:
            del data[at : at + draw(st.integers(1, 64))]
    return name, bytes(data)


@hsettings(max_examples=40, deadline=None, derandomize=True, database=None,
           suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(files=st.lists(damaged_file(), min_size=1, max_size=3))
def test_every_landed_file_is_ingested_or_quarantined_with_a_reason(tmp_path_factory, files):
    home = tmp_path_factory.mktemp("home")
    settings = load_settings(home)
    settings.ensure_dirs()
    landed: dict[Path, bytes] = {}
    for index, (name, data) in enumerate(files):
        path = settings.landing_dir / "demo" / f"{index}-{name}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        landed[path] = data

    update = update_manifest(settings, Lake.empty(LANDING_MANIFEST), now=datetime(2025, 1, 1, tzinfo=UTC))

    rows = pl.DataFrame(update.rows, infer_schema_length=None)
    assert set(rows["source_file"]) == {p.relative_to(settings.landing_dir).as_posix() for p in landed}
    assert set(rows["status"]) <= {"ingested", "quarantined", "duplicate"}
    for row in rows.filter(pl.col("status") == "quarantined").iter_rows(named=True):
        assert row["reason"]
        reason_file = settings.home / (row["quarantine_path"] + ".reason.json")
        assert json.loads(reason_file.read_text())["error"]
    assert {p: p.read_bytes() for p in landed} == landed
