"""In-process runs of the pipeline, for `memlake run`, the benchmarks and tests.

`run_landing` asks the landing sensor's question (which files are new, which
days they touch) and materializes the manifest, those days and everything
downstream in one Dagster run (with no day touched, the facts downstream when
override or forget entries came in since their last fold), recorded in the home's Dagster instance so it
shows up in the UI. `run_reindex` rebuilds the search indexes of every day in
the lake from the lake alone.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg
from dagster._core.storage.dagster_run import DagsterRun

from memlake.chunks import chunk_recipe, stale_chunk_days
from memlake.facts.overrides import entries_unfolded
from memlake.facts.profile import profiles_outdated
from memlake.lake import Lake
from memlake.landing import IgnoredFile, manifest_keys, new_landing_files, plan_days, scan_landing, unbuilt_days
from memlake.run_lock import one_run_at_a_time, process_alive
from memlake.schemas import LANDING_MANIFEST, TURNS
from memlake.settings import Settings
from pipelines.partitions import DAYS, days_of_run, register_days

DAGSTER_HEADER = "# Written by memlake."
DAGSTER_YAML = f"""\
{DAGSTER_HEADER} Telemetry off; lake writers, and index writers, each run one at a time.
# A run that ended (cancelled, failed) gives its pool slots back at once (run monitoring, under `memlake dev`).
telemetry:
  enabled: false
concurrency:
  pools:
    default_limit: 1
run_monitoring:
  enabled: true
  free_slots_after_run_end_seconds: 0
"""
PID_TAG, HOST_TAG = "memlake/pid", "memlake/host"  # the process an in-process run runs in
TRIGGER_TAG = "memlake/trigger"
DAEMON_GONE_SECONDS = 120  # a daemon heartbeat older than this: `memlake dev` is not running (it beats every ~30 s)
LANDING_TRIGGER = "memlake run"


def ensure_dagster_home(settings: Settings) -> Path:
    """Point DAGSTER_HOME at the home's instance folder and give it memlake's dagster.yaml."""
    dagster_home = settings.dagster_home
    dagster_home.mkdir(parents=True, exist_ok=True)
    config = dagster_home / "dagster.yaml"
    written = config.read_text() if config.exists() else None
    # written anew when an older memlake wrote it; a file someone else wrote is theirs
    if written is None or (written.startswith(DAGSTER_HEADER) and written != DAGSTER_YAML):
        config.write_text(DAGSTER_YAML)
    os.environ["DAGSTER_HOME"] = str(dagster_home)
    os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")
    return dagster_home


# An in-process run prints INFO and above: Dagster's DEBUG lines are one per step event (a hundred a run).
CONSOLE_INFO = {"console": {"config": {"log_level": "INFO"}}}


@dataclass
class RunOutcome:
    """What one in-process run did."""

    success: bool
    new_files: list[str] = field(default_factory=list)
    ignored: list[IgnoredFile] = field(default_factory=list)  # landing paths left unread, with the reason
    days: list[str] = field(default_factory=list)
    run_id: str | None = None
    materialized: list[str] = field(default_factory=list)
    rechunked: list[str] = field(default_factory=list)  # days whose chunks were built again (a new recipe)
    refolded: bool = False  # no day touched, but the facts were folded again (new log entries, new profile rules)
    retried: str | None = None  # the run that did not finish, whose days (or fold) this one did again
    checks: dict[str, bool] = field(default_factory=dict)  # check -> passed
    failed_checks: list[str] = field(default_factory=list)
    check_notes: dict[str, str] = field(default_factory=dict)  # failed check -> what it says failed (the rows)


def _selection_for(days: set[str], refold: bool) -> dg.AssetSelection:
    from pipelines.definitions import facts_selection, landing_job_selection, manifest_job_selection

    if days:  # the facts are downstream of the days: they are folded again with them
        return landing_job_selection
    return manifest_job_selection | facts_selection if refold else manifest_job_selection


def run_landing(
    settings: Settings,
    resources: dict[str, object] | None = None,
    instance: dg.DagsterInstance | None = None,
    days: list[str] | None = None,
) -> RunOutcome:
    """Ingest what is new in landing (or rebuild `days`), and everything downstream, in one run; a run of
    this kind that did not finish (failed, cancelled, killed) has its days built again first."""
    settings.ensure_dirs()
    instance = instance or _home_instance(settings)
    release_stale_slots(instance)  # before the last run's status is read: a killed one is marked failed here
    lake = Lake(settings.lake_dir)
    manifest = lake.read(LANDING_MANIFEST)
    fresh = new_landing_files(settings, manifest_keys(manifest))
    ignored = scan_landing(settings)[1]
    unfinished = _unfinished(instance) if days is None else None
    # with no days asked for: the days new files touch, those an earlier run recorded but did not build, and
    # those of the last run if it did not finish (its turns may be written and its indexes not)
    touched = set(days) if days is not None else plan_days(settings, fresh, manifest) | unbuilt_days(lake, manifest)
    if unfinished is not None:
        touched |= set(days_of_run(unfinished.tags, instance.get_dynamic_partitions(DAYS)))
    refold = not touched and (
        unfinished is not None or entries_unfolded(settings, lake) or profiles_outdated(lake))
    outcome = _run(settings, _selection_for(touched, refold), touched, lake.partitions(TURNS), LANDING_TRIGGER,
                   resources, instance)
    outcome.new_files = [f.relative for f in fresh]
    outcome.ignored = ignored
    outcome.refolded = refold
    outcome.retried = unfinished.run_id if unfinished is not None else None
    stale = set(stale_chunk_days(lake, chunk_recipe(settings))) if outcome.success else set()
    if stale:  # days whose chunks an older chunker or other chunk settings built: theirs, then the indexes
        from pipelines.definitions import rechunk_selection

        again = _run(settings, rechunk_selection, stale, lake.partitions(TURNS), "memlake run: chunks of another "
                     "recipe", resources, instance)
        outcome.rechunked = again.days
        outcome.success = again.success
        outcome.materialized = sorted(set(outcome.materialized) | set(again.materialized))
        outcome.checks.update(again.checks)
        outcome.check_notes = {**outcome.check_notes, **again.check_notes}
        outcome.failed_checks = sorted(name for name, passed in outcome.checks.items() if not passed)
    return outcome


def run_reindex(
    settings: Settings,
    resources: dict[str, object] | None = None,
    instance: dg.DagsterInstance | None = None,
    rechunk: bool = False,
) -> RunOutcome:
    """Rebuild the search indexes (chunks, episodes, facts) of every day the lake has, from the lake alone;
    with `rechunk`, `transcripts/chunks` of every day first, from the turns and today's chunk settings."""
    from pipelines.definitions import rechunk_selection, reindex_selection

    days = set(Lake(settings.lake_dir).partitions(TURNS))
    if not days:  # asked before anything is created: a mistyped home stays absent
        raise NothingToIndex(f"the lake at {settings.lake_dir} has no turns: run `memlake run` first")
    settings.ensure_dirs()
    instance = instance or _home_instance(settings)
    release_stale_slots(instance)
    selection = rechunk_selection if rechunk else reindex_selection
    return _run(settings, selection, days, days, "memlake reindex", resources, instance)


def run_landing_alone(
    settings: Settings,
    say: Callable[[str], None],
    resources: dict[str, object] | None = None,
) -> RunOutcome:
    """`memlake run`: `run_landing` once no other `memlake run` (nor a landing run the sensor launched) is
    going on the home; it then does only what the other left. Saying whom it waits for."""
    with one_run_at_a_time(settings.home, say) as home_run:
        wait_for_sensor_runs(settings, say)
        outcome = run_landing(settings, resources)
        if outcome.success:  # else the trace stays: the next `memlake run` does this one's days again
            home_run.finished()
    return outcome


class NothingToIndex(ValueError):
    """A reindex of a lake with no days."""


def wait_for_sensor_runs(settings: Settings, say: Callable[[str], None], poll_seconds: float = 2.0) -> None:
    """Wait while a landing run the sensor launched (under `memlake dev`) is queued or running: a `memlake
    run` beside it would ingest the same files and build the same days a second time."""
    from pipelines.definitions import landing_job
    from pipelines.sensors import landing_run_going

    instance = _home_instance(settings)
    said = False
    while True:
        going = landing_run_going(instance, landing_job.name)
        if going is None:
            return
        beats = [beat.timestamp for beat in instance.get_daemon_heartbeats().values()]
        if not beats or time.time() - max(beats) > DAEMON_GONE_SECONDS:
            # marked going, but no daemon has been alive to run it (`memlake dev` was killed): not worth a wait
            say(f"landing run {going.run_id} is marked as going, but no Dagster daemon is "
                "running: not waiting for it")
            return
        if not said:
            say(f"waiting for landing run {going.run_id} (started by the landing sensor) to end")
            said = True
        time.sleep(poll_seconds)


def _home_instance(settings: Settings) -> dg.DagsterInstance:
    ensure_dagster_home(settings)
    return dg.DagsterInstance.get()


def _unfinished(instance: dg.DagsterInstance) -> DagsterRun | None:
    """The last `memlake run` if it did not finish: failed, cancelled, or killed (`release_stale_slots` marks a
    killed one failed)."""
    last = instance.get_runs(filters=dg.RunsFilter(tags={TRIGGER_TAG: LANDING_TRIGGER}), limit=1)
    if last and last[0].status in (dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED):
        return last[0]
    return None


def release_stale_slots(instance: dg.DagsterInstance) -> list[str]:
    """Give back the pool slots of runs that can no longer use them: a run that ended (cancelled before its
    steps let go) or an in-process run whose process is gone (killed). Else every later run waits for
    them for ever. Such a run still marked started is marked failed. Returns the runs whose slots went."""
    storage = instance.event_log_storage
    freed = []
    for run_id in sorted(storage.get_concurrency_run_ids()):
        run = instance.get_run_by_id(run_id)
        if run is not None and not run.is_finished:
            pid, host = run.tags.get(PID_TAG), run.tags.get(HOST_TAG)
            if not pid or host != socket.gethostname() or process_alive(int(pid)):
                continue  # running, or run by a process this one cannot see (a daemon's: run monitoring's)
            instance.report_run_failed(run, f"its process ({pid}) ended before the run did: its slots are freed")
        storage.free_concurrency_slots_for_run(run_id)
        freed.append(run_id)
    return freed


def _run(
    settings: Settings,
    selection: dg.AssetSelection,
    days: set[str],
    lake_days: Iterable[str],
    trigger: str,
    resources: dict[str, object] | None,
    instance: dg.DagsterInstance,
) -> RunOutcome:
    """One in-process run of `selection` over `days`, recorded in `instance`; `lake_days` (the days the lake
    has) are registered as partitions too."""
    from pipelines.definitions import ASSETS, CHECKS, default_resources

    result = dg.materialize(
        [*ASSETS, *CHECKS],
        selection=selection,
        resources=resources or default_resources(settings),
        instance=instance,
        tags={**register_days(instance, days, lake_days), TRIGGER_TAG: trigger, PID_TAG: str(os.getpid()),
              HOST_TAG: socket.gethostname()},
        raise_on_error=False,
        run_config={"loggers": CONSOLE_INFO},
    )
    checks = {
        f"{evaluation.asset_key.to_user_string()}:{evaluation.check_name}": evaluation.passed
        for evaluation in result.get_asset_check_evaluations()
    }
    notes = {
        f"{evaluation.asset_key.to_user_string()}:{evaluation.check_name}": evaluation.description
        for evaluation in result.get_asset_check_evaluations()
        if not evaluation.passed and evaluation.description
    }
    return RunOutcome(
        success=result.success,
        days=sorted(days),
        run_id=result.run_id,
        materialized=sorted(
            {e.asset_key.to_user_string() for e in result.get_asset_materialization_events() if e.asset_key}
        ),
        checks=checks,
        failed_checks=sorted(name for name, passed in checks.items() if not passed),
        check_notes=notes,
    )
