"""Shared fixtures: a fresh home per test, fast resources, and an in-process pipeline run."""

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

# Offline by construction, whatever the caller's environment says.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

TESTS = Path(__file__).resolve().parent  # tests/data and tests/expected are read from here, whatever folder asks
REPO = TESTS.parent
SAMPLES = REPO / "data" / "samples"
LOCOMO = REPO.parent / "shared" / "benchmarks" / "locomo" / "locomo10.json"


# The files of the longest tests (seconds of pytest on CI's 2 cores, 2026-11-29), run first. `make test` gives each
# of its two workers a file at a time in collection order (`--dist loadfile --no-loadscope-reorder`): xdist's own
# order, most tests first, left these one- to three-test files to the end, one worker busy with them alone.
HEAVY_FILES = (
    "tests/pipelines/test_parallel_days.py",  # ~100: days built in spawned processes, 2 workers
    "tests/pipelines/test_dev_ui_browser.py",  # ~93: `memlake dev` driven in chromium
    "tests/bench/test_bench_scale.py",  # ~90: ingest with 1 and 2 workers, the scale cases
    "tests/scale/test_replicas.py",  # ~39: two `memlake serve` replicas on Postgres and moto
    "tests/scale/test_scale_out.py",  # ~28: a home on Postgres and moto, a killed run
    "tests/scale/test_forget_on_store.py",  # ~21
    "tests/bench/test_bench_context.py",  # ~42: the LoCoMo home and its context blocks
    "tests/bench/test_bench_smoke.py",  # ~26
    "tests/pipelines/test_cli.py",  # ~21 a run of the samples, several
    "tests/pipelines/test_dev_server.py",  # ~22: `memlake dev` started
    "tests/bench/test_bench_serve.py",  # ~19
    "tests/pipelines/test_export_import.py",  # ~18 its homes
    "tests/service/test_proxy_memory.py",  # ~16
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The heavy files first, in the order above, then the others most tests first (xdist's own heuristic); a
    file's tests stay together and in their order, so its module fixtures are built once."""
    files = [item.nodeid.split("::", 1)[0] for item in items]
    counts: dict[str, int] = {}
    first: dict[str, int] = {}
    for index, name in enumerate(files):
        counts[name] = counts.get(name, 0) + 1
        first.setdefault(name, index)
    heavy = {name: rank for rank, name in enumerate(HEAVY_FILES)}

    def rank(index: int) -> tuple[int, int, int]:
        name = files[index]
        return (heavy.get(name, len(heavy)), 0 if name in heavy else -counts[name], first[name])

    order = sorted(range(len(items)), key=rank)  # stable: a file's tests keep their order
    items[:] = [items[i] for i in order]


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Settings for an empty home in tmp_path (MEMLAKE_HOME points there too)."""
    from memlake.settings import load_settings

    home = tmp_path / "home"
    monkeypatch.setenv("MEMLAKE_HOME", str(home))
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    s = load_settings(home)
    s.ensure_dirs()
    return s


@pytest.fixture
def fast_resources(settings) -> dict[str, object]:
    """The normal resources with the hashing embedder instead of the model."""
    from resources import HashEmbedderResource, build_resources

    resources = build_resources(settings)
    resources["embedder"] = HashEmbedderResource()
    return resources


@pytest.fixture
def run_pipeline(settings, fast_resources) -> Callable[..., object]:
    """Run the landing pipeline in process on an ephemeral Dagster instance."""
    import dagster as dg

    from pipelines.runs import run_landing

    instance = dg.DagsterInstance.ephemeral()

    def run(days: list[str] | None = None):
        return run_landing(settings, resources=fast_resources, instance=instance, days=days)

    run.instance = instance  # type: ignore[attr-defined]
    return run


@pytest.fixture
def fresh_breakers():
    """The core model's circuit breakers closed before and after the test (they are per process)."""
    from memlake.distill.client import reset_breakers  # deferred: openai and instructor cost ~1 s to import

    reset_breakers()
    yield
    reset_breakers()


def land(settings, agent_id: str, name: str, content: str | bytes) -> Path:
    """Drop a file into the agent's landing folder, as a user would."""
    path = settings.landing_dir / agent_id / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def land_samples(settings) -> None:
    for agent_dir in SAMPLES.iterdir():
        if agent_dir.is_dir():
            shutil.copytree(agent_dir, settings.landing_dir / agent_dir.name, dirs_exist_ok=True)


def kill_a_run_holding(home: Path) -> None:
    """What a `memlake run` killed mid-way leaves: its trace on the home (`memlake.run_lock`), its process gone."""
    killed = subprocess.run([sys.executable, "-c", (
        "import os, signal, pathlib\n"
        "from memlake.run_lock import one_run_at_a_time\n"
        f"with one_run_at_a_time(pathlib.Path({str(home)!r}), print):\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n")], env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert killed.returncode == -signal.SIGKILL
