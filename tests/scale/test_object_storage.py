"""The home's lake and LanceDB indexes on S3-compatible storage (`storage_uri = "s3://bucket/prefix"`): `memlake
run` writes them there and nowhere local, `Memory` reads back the same search hits, facts and context as the same
samples on local disk, a rerun changes nothing, and no secret reaches a file of the home."""

import os
import signal
import subprocess
import sys
import time

import pytest

from memlake.api import Memory
from memlake.lake import Lake
from memlake.schemas import TABLES, TURNS
from memlake.settings import load_settings
from pipelines.runs import POSTGRES_STORAGE_URL_VARIABLE
from tests.scale.homes import run_samples, sample_home
from tests.scale.object_storage import ACCESS_KEY, REGION, SECRET_KEY, bucket_filesystem, objects, throwaway_s3

BUCKET = "memlake-test"
AS_OF = "2030-01-01"


@pytest.fixture
def s3_endpoint():
    with throwaway_s3() as endpoint:
        yield endpoint


def _home(tmp_path, name, monkeypatch, **written):
    monkeypatch.delenv(POSTGRES_STORAGE_URL_VARIABLE, raising=False)
    return sample_home(tmp_path, name, monkeypatch, **written)


def _queries(settings) -> dict[str, list[str]]:
    """A few phrasings per agent, taken from its own turns (the first words of some), read from the local lake."""
    turns = Lake(settings.lake_dir).read(TURNS).sort("conversation_id", "turn_index")
    return {agent: [" ".join(text.split()[:5]) for text in group["content"].to_list()[::7][:4]]
            for (agent,), group in turns.group_by("agent_id", maintain_order=True)}


def _memory_of(settings, queries) -> dict:
    memory = Memory(settings=settings)
    read = {}
    assert memory.agents_with_turns() == sorted(queries)
    for agent, phrasings in queries.items():
        read[agent] = {
            "turns": memory.turns(agent).select("day", "conversation_id", "turn_index", "content").rows(),
            "facts": sorted(memory.facts(agent).select("fact_id", "type", "subject", "content").rows()),
            "search": [memory.search(q, agent, as_of=AS_OF).select("conversation_id", "message_ids", "text").rows()
                       for q in phrasings],
            "facts search": [memory.search(q, agent, scope="facts", as_of=AS_OF).select("text").rows()
                             for q in phrasings],
            "context": [memory.context(q, agent, mode="full", as_of=AS_OF).text for q in phrasings],
        }
    return read


def _built(filesystem, prefix) -> dict:
    """Every object of the lake and indexes but the landing manifest (which a run writes anew each time it
    looks) and the change marks."""
    return {path: stat for path, stat in objects(filesystem, prefix).items()
            if "landing_manifest" not in path and not path.rsplit("/", 1)[-1].startswith(".changed")}


def _local_and_remote_homes(tmp_path, monkeypatch, s3_endpoint, prefix):
    """The samples built on local disk (the reference), and a second sample home, not yet run, whose lake and
    indexes are at s3://BUCKET/<prefix>; with the test's client of the bucket."""
    local = _home(tmp_path, "local", monkeypatch)
    assert run_samples(local).success
    bucket = bucket_filesystem(s3_endpoint)
    bucket.create_dir(BUCKET)
    for name, value in {"AWS_ENDPOINT_URL": s3_endpoint, "AWS_ACCESS_KEY_ID": ACCESS_KEY,
                        "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_REGION": REGION}.items():
        monkeypatch.setenv(name, value)  # the standard variables: the keys are never in the home's settings
    return local, _home(tmp_path, "remote", monkeypatch, storage_uri=f"s3://{BUCKET}/{prefix}"), bucket


def test_the_lake_and_indexes_on_s3_hold_what_local_disk_holds_and_a_rerun_changes_nothing(
        tmp_path, monkeypatch, s3_endpoint):
    local, remote, bucket = _local_and_remote_homes(tmp_path, monkeypatch, s3_endpoint, "team-a")
    first = run_samples(remote)
    assert first.success and first.failed_checks == []

    stored = objects(bucket, f"{BUCKET}/team-a")
    assert any(path.startswith(f"{BUCKET}/team-a/lake/") and path.endswith(".parquet") for path in stored)
    assert any(path.startswith(f"{BUCKET}/team-a/lancedb/") and ".lance/" in path for path in stored)
    local_lake_files = [p for p in (remote.home / "lake").rglob("*") if p.is_file()] if (
        remote.home / "lake").exists() else []
    local_index_files = [p for p in (remote.home / "lancedb").rglob("*") if p.is_file()] if (
        remote.home / "lancedb").exists() else []
    assert local_lake_files == [] and local_index_files == [], "a URI home wrote its lake or indexes locally"

    queries = _queries(local)
    assert sum(len(q) for q in queries.values()) >= 4
    on_disk = _memory_of(local, queries)
    on_s3 = _memory_of(remote, queries)
    assert any(read["facts"] for read in on_s3.values()) and any(any(read["search"]) for read in on_s3.values())
    assert on_s3 == on_disk

    for path in remote.home.rglob("*"):
        if path.is_file():
            assert SECRET_KEY.encode() not in path.read_bytes(), f"the secret key was written to {path}"

    built = _built(bucket, f"{BUCKET}/team-a")
    again = run_samples(remote)
    assert again.success and again.days == []
    assert set(again.materialized) == {"transcripts/landing_manifest"}
    assert _built(bucket, f"{BUCKET}/team-a") == built
    assert _memory_of(remote, queries) == on_disk


def test_a_storage_uri_other_than_s3_is_refused_with_the_setting_named(tmp_path):
    for uri in ("ftp://somewhere/else", "s3://", "s3:///prefix", "lake-folder"):
        with pytest.raises(ValueError, match=r"storage_uri .*s3://bucket/prefix"):
            load_settings(tmp_path, storage_uri=uri)
    assert load_settings(tmp_path, storage_uri="s3://bucket/team-a/").storage_uri == "s3://bucket/team-a"
    assert load_settings(tmp_path).storage_uri == ""  # the home's own folders, as before


def test_the_secret_key_is_in_no_printed_form_of_the_settings(tmp_path):
    settings = load_settings(tmp_path, storage_uri=f"s3://{BUCKET}/x", s3_secret_access_key=SECRET_KEY)
    assert SECRET_KEY not in repr(settings) and SECRET_KEY not in settings.model_dump_json()


# Columns that say when a run happened, not what it built: two uninterrupted runs of the same samples differ there
# (a distillation cache row's created_at is when the run cached it).
RUN_TIME_COLUMNS = {"ingested_at", "first_seen_at", "ran_at", "written_at", "distill_cache.created_at"}


def _tables(settings) -> dict[str, list[tuple]]:
    """Every lake table's rows, sorted, without the run-time columns."""
    lake = Lake.of(settings)
    tables = {}
    for name, table in sorted(TABLES.items()):
        frame = lake.read(table)
        frame = frame.drop([c for c in frame.columns if {c, f"{table.name}.{c}"} & RUN_TIME_COLUMNS])
        tables[name] = sorted(map(repr, frame.rows()))
    return tables


def _killed_during_the_lake_write(settings, bucket, turns_prefix) -> None:
    """`memlake run`'s job in a subprocess, killed as soon as its first turns partition is on the store (the days
    are written side by side: the others are being uploaded)."""
    code = ("import sys\nfrom memlake.settings import load_settings\nfrom tests.scale.homes import run_samples\n"
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


def test_a_run_killed_while_writing_the_lake_on_s3_is_recovered_by_the_next_run(tmp_path, monkeypatch, s3_endpoint):
    local, remote, bucket = _local_and_remote_homes(tmp_path, monkeypatch, s3_endpoint, "team-b")
    _killed_during_the_lake_write(remote, bucket, f"{BUCKET}/team-b/lake/{TURNS.layer}/{TURNS.name}")
    assert Lake.of(remote).partitions(TURNS) != Lake.of(local).partitions(TURNS) or not objects(
        bucket, f"{BUCKET}/team-b/lancedb"), "the killed run finished what it was to build"

    recovered = run_samples(remote)
    assert recovered.success and recovered.failed_checks == []
    assert _tables(remote) == _tables(local)
    queries = _queries(local)
    assert _memory_of(remote, queries) == _memory_of(local, queries)
