"""The Dagster instance on PostgreSQL (`dagster_postgres_url`): `memlake run` keeps its runs and events there, not
in SQLite files under the home, builds the same memory as on SQLite, and a rerun finds nothing to do."""

import psycopg2
import pytest

from memlake.api import Memory
from pipelines.runs import POSTGRES_STORAGE_URL_VARIABLE
from tests.scale.homes import run_samples, sample_home
from tests.scale.postgres import throwaway_postgres
from tests.transcripts.helpers import turns_of


def _memory_of(settings) -> dict[str, list[tuple]]:
    memory = Memory(settings=settings)
    return {agent: sorted(memory.facts(agent).select("type", "subject", "content").rows())
            for agent in sorted(memory.agents())}


def _built_files(settings) -> dict:
    """Every lake file below the landing manifest (which a run writes anew each time it looks), with its mtime."""
    return {path: path.stat().st_mtime_ns for path in settings.lake_dir.rglob("*.parquet")
            if "landing_manifest" not in path.parts}


@pytest.fixture
def postgres_url():
    with throwaway_postgres() as url:
        yield url


def test_memlake_run_on_a_postgres_instance_builds_what_sqlite_builds_and_a_rerun_does_nothing(
        tmp_path, monkeypatch, postgres_url):
    monkeypatch.delenv(POSTGRES_STORAGE_URL_VARIABLE, raising=False)
    on_sqlite = sample_home(tmp_path, "sqlite", monkeypatch)
    assert run_samples(on_sqlite).success

    on_postgres = sample_home(tmp_path, "postgres", monkeypatch, dagster_postgres_url=postgres_url)
    first = run_samples(on_postgres)
    assert first.success and first.failed_checks == []

    with psycopg2.connect(postgres_url) as connection, connection.cursor() as cursor:
        cursor.execute("select run_id from runs")
        assert first.run_id in {row[0] for row in cursor.fetchall()}
    assert "password" not in (on_postgres.dagster_home / "dagster.yaml").read_text()
    assert postgres_url not in (on_postgres.dagster_home / "dagster.yaml").read_text()
    assert not list(on_postgres.dagster_home.rglob("*.db")), "runs or events written to SQLite beside Postgres"

    assert turns_of(on_postgres).height == turns_of(on_sqlite).height == 142
    assert _memory_of(on_postgres) == _memory_of(on_sqlite)

    lake_files = _built_files(on_postgres)
    again = run_samples(on_postgres)
    assert again.success and again.days == []
    assert set(again.materialized) == {"transcripts/landing_manifest"}  # it looked, found nothing new
    assert _built_files(on_postgres) == lake_files
