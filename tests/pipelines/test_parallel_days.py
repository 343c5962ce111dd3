"""Days built in parallel (`run_workers`): `memlake run` with 2 workers builds its days in two Dagster runs
launched together, each in a process of its own, and gives exactly the tables one worker gives; the folds and the
index commits never overlap (one Dagster concurrency pool slot each); a batch that failed is built again."""

import shutil

import dagster as dg
import pytest

from assets.shared import DAY_WRITERS
from memlake.settings import load_settings, write_home_setting
from pipelines.jobs import ASSETS
from pipelines.runs import run_landing
from tests.conftest import SAMPLES
from tests.pipelines.test_disk_faults import lake_tables

# The pools whose steps must run one at a time, across runs too: the folds' and the index commits'.
SINGLE_WRITER_POOLS = {"memlake_lake_writers", "memlake_index_writers"}


def _home(tmp_path, name, monkeypatch, workers: int):
    home = tmp_path / name
    home.mkdir()
    monkeypatch.setenv("MEMLAKE_HOME", str(home))
    monkeypatch.delenv("DAGSTER_HOME", raising=False)  # a run points it at its home's instance folder
    write_home_setting(home, "embedding_model", "hash")  # the workers build their own resources from the home
    write_home_setting(home, "run_workers", str(workers))
    settings = load_settings(home)
    settings.ensure_dirs()
    # the samples' notes chat alone: eight conversations on eight days, enough for two day runs at a quarter of
    # the whole samples' time
    (settings.landing_dir / "demo").mkdir(parents=True)
    shutil.copy(SAMPLES / "demo" / "notes_chat.jsonl", settings.landing_dir / "demo")
    return settings


def _run(settings):
    return run_landing(settings)  # the home's own instance and resources, as `memlake run` uses


@pytest.fixture(scope="module")
def one_worker(tmp_path_factory):
    """The samples' notes chat built by one worker, once for the module: (outcome, lake tables), the reference the
    tests compare two workers' tables with (read only)."""
    with pytest.MonkeyPatch.context() as monkeypatch:  # MEMLAKE_HOME and DAGSTER_HOME restored after the module
        one = _home(tmp_path_factory.mktemp("one-worker"), "one", monkeypatch, workers=1)
        alone = _run(one)
        yield alone, lake_tables(one)


def _single_writer_ops() -> set[str]:
    return {a.node_def.name for a in ASSETS if isinstance(a, dg.AssetsDefinition) and a.op.pool in SINGLE_WRITER_POOLS}


def test_two_workers_build_the_days_in_two_runs_at_once_and_the_same_tables_as_one_worker(tmp_path, monkeypatch,
                                                                                          one_worker):
    alone, ones = one_worker
    assert alone.success, alone.failure
    assert len(alone.run_ids) == 1 and len(alone.days) >= 2  # one run; the samples span several days

    two = _home(tmp_path, "two", monkeypatch, workers=2)
    together = _run(two)
    assert together.success, together.failure
    assert together.days == alone.days

    instance = dg.DagsterInstance.get()  # the second home's (the run pointed DAGSTER_HOME there)
    runs = [instance.get_run_by_id(run_id) for run_id in together.run_ids]
    day_runs = [run for run in runs if run.tags.get("dagster/asset_partition_range_start")]
    assert len(day_runs) == 2  # the days split in two runs, in two processes
    assert len({run.tags["memlake/pid"] for run in day_runs}) == 2
    assert all(run.status == dg.DagsterRunStatus.SUCCESS for run in runs)

    twos = lake_tables(two)
    for name, frame in ones.items():
        differ = [c for c in frame.columns if frame.height != twos[name].height or not frame[c].equals(twos[name][c])]
        assert not differ, (name, differ)

    # no two steps of the single-writer pools ever ran at once, in any of the runs
    single = _single_writer_ops()
    spans = sorted((stat.start_time, stat.end_time, stat.step_key) for run in runs
                   for stat in instance.get_run_step_stats(run.run_id) if stat.step_key in single)
    assert len(spans) >= len(single)  # each at least once (the per-day indexes once per day run)
    for (_, end, step), (start, _, later) in zip(spans, spans[1:], strict=False):
        assert end <= start, f"{step} and {later} overlapped"


def test_every_pool_has_its_slots_before_any_run_meets_it(tmp_path, monkeypatch):
    """Left to dagster.yaml's default limit, a pool got its slots from the first run that met it, which counts and
    then adds: two day runs starting at once each added one, and two index commits ran together (CI, 2026-11-29)."""
    from pipelines.runs import ensure_dagster_home

    settings = _home(tmp_path, "home", monkeypatch, workers=3)
    ensure_dagster_home(settings)
    with dg.DagsterInstance.get() as instance:
        storage = instance.event_log_storage
        slots = {pool: storage.get_concurrency_info(pool).slot_count for pool in (*SINGLE_WRITER_POOLS, DAY_WRITERS)}
    assert slots == {"memlake_lake_writers": 1, "memlake_index_writers": 1, DAY_WRITERS: 3}


def test_a_batch_whose_folds_failed_has_its_days_built_again_by_the_next_run(tmp_path, monkeypatch, one_worker):
    two = _home(tmp_path, "two", monkeypatch, workers=2)

    def broken_fold(*args, **kwargs):
        raise OSError("the fold broke")

    with monkeypatch.context() as patched:  # the folds run in this process, after the day runs
        patched.setattr("assets.facts.fold", broken_fold)
        failed = _run(two)
    assert not failed.success and "the fold broke" in (failed.failure or "")
    assert len(failed.run_ids) == 4  # the manifest, the two day runs, the folds run that failed

    again = _run(two)  # nothing new in landing: the failed batch's days are what it builds
    assert again.success, again.failure
    assert again.retried == failed.run_id and again.days == failed.days and len(again.run_ids) == 4

    alone, ones = one_worker
    assert alone.success
    twos = lake_tables(two)
    for name, frame in ones.items():
        differ = [c for c in frame.columns if frame.height != twos[name].height or not frame[c].equals(twos[name][c])]
        assert not differ, (name, differ)
