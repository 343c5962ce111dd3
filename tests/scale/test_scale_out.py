"""Issue 42's one test of a team's set-up on one machine: the Dagster instance on a throwaway PostgreSQL cluster
AND the lake and LanceDB indexes on an S3-compatible server (moto), both on loopback. A run killed while it writes
the lake is recovered by the next `memlake run`, which leaves every table as an uninterrupted run on local disk and
SQLite leaves them; `Memory` reads back the same search hits, facts and context; a rerun changes nothing; the runs
are in Postgres, nothing of the lake or the indexes is local, and no secret reaches a file of the home.

One test, the samples' notes chat alone: each behaviour shown once, on the smallest landing that has every layer
(the suite's time budget: it replaced three tests that each built the whole samples twice)."""

import os
import signal
import subprocess
import sys
import time

import psycopg2

from memlake.lake import Lake
from memlake.schemas import TABLES, TURNS
from pipelines.runs import POSTGRES_STORAGE_URL_VARIABLE
from tests.scale.homes import memory_of, object_store_environment, queries_of, run_samples, sample_home
from tests.scale.object_storage import SECRET_KEY, bucket_filesystem, objects

BUCKET = "memlake-test"

# Columns that say when a run happened, not what it built: two uninterrupted runs of the same samples differ there
# (a distillation cache row's created_at is when the run cached it).
RUN_TIME_COLUMNS = {"ingested_at", "first_seen_at", "ran_at", "written_at", "distill_cache.created_at"}


def tables_of(settings) -> dict[str, list[str]]:
    """Every lake table's rows, sorted, without the run-time columns."""
    lake = Lake.of(settings)
    tables = {}
    for name, table in sorted(TABLES.items()):
        frame = lake.read(table)
        frame = frame.drop([c for c in frame.columns if {c, f"{table.name}.{c}"} & RUN_TIME_COLUMNS])
        tables[name] = sorted(map(repr, frame.rows()))
    return tables


def _built(filesystem, prefix) -> dict:
    """Every object of the lake and indexes but the landing manifest (which a run writes anew each time it
    looks) and the change marks."""
    return {path: stat for path, stat in objects(filesystem, prefix).items()
            if "landing_manifest" not in path and not path.rsplit("/", 1)[-1].startswith(".changed")}


def _killed_during_the_lake_write(settings, bucket, turns_prefix) -> None:
    """`memlake run`'s job in a subprocess, killed as soon as its first turns partition is on the store (the days
    are written side by side: the others are being uploaded)."""
    code = ("from memlake.settings import load_settings\nfrom tests.scale.homes import run_samples\n"
            f"run_samples(load_settings({str(settings.home)!r}))\n")
    run = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": os.getcwd()},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 400
        while not objects(bucket, turns_prefix):
            assert run.poll() is None, "the run ended before it wrote a turns partition"
            assert time.monotonic() < deadline, "no turns partition written in time"
            time.sleep(0.02)
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=60)
    assert run.returncode == -signal.SIGKILL


def test_a_team_home_on_postgres_and_s3_recovers_a_killed_run_reads_as_local_disk_and_reruns_to_nothing(
        tmp_path, monkeypatch, postgres_url, s3_endpoint):
    monkeypatch.delenv(POSTGRES_STORAGE_URL_VARIABLE, raising=False)
    local = sample_home(tmp_path, "local", monkeypatch, landing="notes chat")  # SQLite, local disk: the reference
    uninterrupted = run_samples(local)
    assert uninterrupted.success and uninterrupted.failed_checks == []

    bucket = bucket_filesystem(s3_endpoint)
    bucket.create_dir(BUCKET)
    object_store_environment(monkeypatch, s3_endpoint)
    team = sample_home(tmp_path, "team", monkeypatch, landing="notes chat", storage_uri=f"s3://{BUCKET}/team-a",
                       dagster_postgres_url=postgres_url)
    prefix = f"{BUCKET}/team-a"

    _killed_during_the_lake_write(team, bucket, f"{prefix}/lake/{TURNS.layer}/{TURNS.name}")
    assert Lake.of(team).partitions(TURNS) != Lake.of(local).partitions(TURNS) or not objects(
        bucket, f"{prefix}/lancedb"), "the killed run finished what it was to build"

    recovered = run_samples(team)
    assert recovered.success and recovered.failed_checks == []
    assert recovered.days == uninterrupted.days  # the killed run's days, every one built again
    assert tables_of(team) == tables_of(local)

    # where things are: the runs in Postgres, the lake and the indexes on the store, none of it under the home
    with psycopg2.connect(postgres_url) as connection, connection.cursor() as cursor:
        cursor.execute("select run_id from runs")
        assert set(recovered.run_ids) <= {row[0] for row in cursor.fetchall()}
    dagster_yaml = (team.dagster_home / "dagster.yaml").read_text()
    assert postgres_url not in dagster_yaml and "password" not in dagster_yaml
    assert not list(team.dagster_home.rglob("*.db")), "runs or events written to SQLite beside Postgres"
    stored = objects(bucket, prefix)
    assert any(path.startswith(f"{prefix}/lake/") and path.endswith(".parquet") for path in stored)
    assert any(path.startswith(f"{prefix}/lancedb/") and ".lance/" in path for path in stored)
    for folder in (team.home / "lake", team.home / "lancedb"):
        assert not (folder.exists() and any(p.is_file() for p in folder.rglob("*"))), f"{folder} written locally"
    for path in team.home.rglob("*"):
        if path.is_file():
            assert SECRET_KEY.encode() not in path.read_bytes(), f"the secret key was written to {path}"

    queries = queries_of(local)
    assert sum(len(q) for q in queries.values()) >= 4
    on_disk = memory_of(local, queries)
    on_the_store = memory_of(team, queries)
    assert any(read["facts"] for read in on_the_store.values())
    assert any(any(hits) for read in on_the_store.values() for hits in read["search"])
    assert on_the_store == on_disk

    built = _built(bucket, prefix)
    again = run_samples(team)
    assert again.success and again.days == []
    assert set(again.materialized) == {"transcripts/landing_manifest"}  # it looked, found nothing new
    assert _built(bucket, prefix) == built
    assert memory_of(team, queries) == on_disk
