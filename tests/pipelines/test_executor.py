"""A run Dagster launches from memlake's code location (as the landing sensor's runs are, beside `memlake serve`)
yields the cores to reads as `memlake run` does: its process runs at the `run_nice` niceness."""

import os
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest

from tests.conftest import REPO

# memlake's code location with one more asset, which says what niceness its run's process has
PROBE_LOCATION = """
import os

import dagster as dg

from pipelines.definitions import defs


@dg.asset
def niceness_probe() -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"niceness": os.nice(0), "pid": os.getpid()})


probe_defs = dg.Definitions.merge(defs, dg.Definitions(
    assets=[niceness_probe], jobs=[dg.define_asset_job("niceness_probe_job", [niceness_probe])]))
"""
# runs launched at once by the instance's run launcher (a process per run), not queued for a daemon
LAUNCH_AT_ONCE = """run_coordinator:
  module: dagster._core.run_coordinator
  class: DefaultRunCoordinator
telemetry:
  enabled: false
"""


def launched_run_niceness(tmp_path: Path, env: dict[str, str]) -> tuple[int, int]:
    """(niceness, pid) of the process of a run `dagster job launch` started through the instance's run
    launcher, as the daemon starts a sensor's run."""
    dagster_home = tmp_path / "dagster_home"
    dagster_home.mkdir()
    (dagster_home / "dagster.yaml").write_text(LAUNCH_AT_ONCE)
    (tmp_path / "probe.py").write_text(PROBE_LOCATION)
    env = {**env, "DAGSTER_HOME": str(dagster_home), "PYTHONPATH": str(REPO)}
    dagster = Path(sys.executable).with_name("dagster")
    launched = subprocess.run([str(dagster), "job", "launch", "-f", str(tmp_path / "probe.py"), "-a", "probe_defs",
                               "-j", "niceness_probe_job"], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300)
    assert launched.returncode == 0, launched.stderr[-3000:]
    with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
        deadline = time.monotonic() + 120
        while not (runs := instance.get_runs()) or not runs[0].is_finished:
            assert time.monotonic() < deadline, "the launched run did not finish"
            time.sleep(0.5)
        assert runs[0].status == dg.DagsterRunStatus.SUCCESS, launched.stderr[-3000:]
        event = instance.get_latest_materialization_event(dg.AssetKey("niceness_probe"))
    assert event is not None and event.asset_materialization is not None
    metadata = event.asset_materialization.metadata
    return metadata["niceness"].value, metadata["pid"].value  # type: ignore[return-value]


def test_a_launched_run_lowers_its_cpu_priority_to_run_nice(settings, tmp_path):
    """The landing sensor's runs took the cores from `memlake serve` at full priority while `memlake run` yielded
    them: a launched run now lowers itself to `run_nice` (never raising a niceness it was started under)."""
    started_under = os.nice(0)
    if started_under >= 18:
        pytest.skip("this test process runs at niceness 18 or more: no lower priority to see")
    run_nice = min(19, max(started_under + 2, 10))
    env = {**os.environ, "MEMLAKE_HOME": str(settings.home), "MEMLAKE_RUN_NICE": str(run_nice)}
    niceness, pid = launched_run_niceness(tmp_path, env)
    assert pid != os.getpid()  # the run's own process, not this one
    assert niceness == run_nice
