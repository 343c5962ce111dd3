"""In-process runs of the pipeline, for `memlake run`, `memlake reindex`, `memlake distill`, the benchmarks
(`memlake_bench.in_process`) and tests.

`run_landing` takes the landing sensor's decision (`memlake.run_plan`: which files are new, which days they
and unfinished runs touch) and materializes the manifest, those days and everything downstream in one Dagster
run (with no day touched, the facts downstream when override or forget entries came in since their last fold),
recorded in the home's Dagster instance so it shows up in the UI; with `run_workers` > 1, in several runs: the
manifest, then the days split in that many runs launched at once (a process each), then the folds (`run_days_at_once`).
`run_reindex` rebuilds the search indexes of
every day in the lake from the lake alone; `run_distill` distils one agent's conversations on demand.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import socket
import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
from dagster._core.definitions.unresolved_asset_job_definition import UnresolvedAssetJobDefinition
from dagster._daemon.asset_daemon import get_auto_materialize_paused, set_auto_materialize_paused
from dagster._utils.error import SerializableErrorInfo

from assets.episodes import EPISODES_KEY
from assets.maintenance import REPORTS_KEY
from assets.partitions import DAYS, days_of_run, register_days
from assets.shared import DAY_WRITERS, INDEX_WRITERS, LAKE_WRITERS, said_run_totals
from memlake.atomic_files import write_text_atomically
from memlake.disk_faults import disk_fault_in_text
from memlake.erase import erase_forgotten_landing
from memlake.lake import Lake
from memlake.landing import IgnoredFile
from memlake.landing_inbox import take_inbox
from memlake.maintenance.sweep import SweepReport
from memlake.run_lock import one_run_at_a_time, process_alive
from memlake.run_plan import plan_run, read_landing_state
from memlake.schemas import REPORTS, TURNS
from memlake.settings import Settings
from pipelines.jobs import (
    ASSETS,
    CHECKS,
    SWEEP_JOBS,
    days_job,
    folds_job,
    landing_job,
    manifest_facts_job,
    manifest_job,
    pending_job,
    rechunk_job,
    reindex_job,
    sweep_run_config,
)
from pipelines.run_status import BATCH_TAG, HOST_TAG, LANDING_TRIGGER, PID_TAG, TRIGGER_TAG, landing_run_going
from resources import build_resources

DAGSTER_HEADER = "# Written by memlake."
DAGSTER_YAML = f"""\
{DAGSTER_HEADER} Telemetry off; lake writers, and index writers, each run one at a time (every pool's limit is 1
# but the day writers', which memlake sets on the instance to the home's `run_workers`).
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
# With `dagster_postgres_url` set, runs, events and schedules live in PostgreSQL: several machines share one
# instance. The URL is read from the environment (ensure_dagster_home puts it there), so no password is written;
# with psycopg2 named, the driver dagster-postgres is built on (SQLAlchemy 2.1 would pick psycopg 3 otherwise).
POSTGRES_STORAGE_URL_VARIABLE = "DAGSTER_POSTGRES_STORAGE_URL"
POSTGRES_STORAGE = f"""\
storage:
  postgres:
    postgres_url:
      env: {POSTGRES_STORAGE_URL_VARIABLE}
"""


def with_psycopg2(url: str) -> str:
    """`url` with the psycopg2 driver named: postgresql://... or postgres://... -> postgresql+psycopg2://..."""
    scheme, _, rest = url.partition("://")
    return f"postgresql+psycopg2://{rest}" if scheme in ("postgresql", "postgres") else url


def dagster_yaml(settings: Settings) -> str:
    """The dagster.yaml memlake writes for this home: SQLite under the home, or PostgreSQL when configured."""
    return DAGSTER_YAML + (POSTGRES_STORAGE if settings.dagster_postgres_url else "")


DAEMON_GONE_SECONDS = 120  # a daemon heartbeat older than this: `memlake dev` is not running (it beats every ~30 s)


def ensure_dagster_home(settings: Settings) -> Path:
    """Point DAGSTER_HOME at the home's instance folder and give it memlake's dagster.yaml."""
    dagster_home = settings.dagster_home
    dagster_home.mkdir(parents=True, exist_ok=True)
    config = dagster_home / "dagster.yaml"
    written = config.read_text() if config.exists() else None
    wanted = dagster_yaml(settings)
    # written anew when an older memlake, or other settings, wrote it; a file someone else wrote is theirs
    if written is None or (written.startswith(DAGSTER_HEADER) and written != wanted):
        write_text_atomically(config, wanted)
    os.environ["DAGSTER_HOME"] = str(dagster_home)
    if settings.dagster_postgres_url:  # Dagster reads it from here, in this process and those it starts
        os.environ[POSTGRES_STORAGE_URL_VARIABLE] = with_psycopg2(settings.dagster_postgres_url)
    os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")
    _automation_shown_on()
    _pool_limits(settings.run_workers)
    return dagster_home


def _pool_limits(workers: int) -> None:
    """Each pool's slots, set on the instance before a run takes one, as `dagster instance concurrency set` does:
    the day writers' take `run_workers` steps at once, the others one. dagster.yaml's default limit is not one per
    pool, and Dagster applies it when a run first meets a pool: it counts the pool's slots, then adds what is
    missing, so two runs starting at once each gave the index writers' pool a slot, and two index commits ran
    together."""
    limits = {LAKE_WRITERS: 1, INDEX_WRITERS: 1, DAY_WRITERS: workers}
    with dg.DagsterInstance.get() as instance:
        storage = instance.event_log_storage
        for pool, limit in limits.items():
            if storage.get_concurrency_info(pool).slot_count != limit:
                storage.set_concurrency_slots(pool, limit)


def _automation_shown_on() -> None:
    """The UI's "Auto-materialize on/off" pill reads the pre-sensor asset daemon's pause flag, which a new instance
    has set; memlake's automation is the `memlake_automation` sensor, which that flag does not stop (on by default),
    so the pill said off while the sensor launched runs (issue 40). The flag is set to what is true, once."""
    with dg.DagsterInstance.get() as instance:
        if get_auto_materialize_paused(instance):
            set_auto_materialize_paused(instance, False)


# An in-process run prints INFO and above: Dagster's DEBUG lines are one per step event (a hundred a run).
CONSOLE_INFO = {"console": {"config": {"log_level": "INFO"}}}


@dataclass
class RunOutcome:
    """What one in-process run did."""

    success: bool
    new_files: list[str] = field(default_factory=list)
    # quarantined by a limit that has changed since, and read again: (landing path, sha256)
    retried_files: list[tuple[str, str]] = field(default_factory=list)
    ignored: list[IgnoredFile] = field(default_factory=list)  # landing paths left unread, with the reason
    days: list[str] = field(default_factory=list)
    run_id: str | None = None
    run_ids: list[str] = field(default_factory=list)  # every Dagster run it took (days built at once: several)
    materialized: list[str] = field(default_factory=list)
    rechunked: list[str] = field(default_factory=list)  # days whose chunks were built again (a new recipe)
    refolded: bool = False  # no day touched, but the facts were folded again (new log entries, new profile rules)
    retried: str | None = None  # the run that did not finish, whose days (or fold) this one did again
    checks: dict[str, bool] = field(default_factory=dict)  # check -> passed
    failed_checks: list[str] = field(default_factory=list)
    check_notes: dict[str, str] = field(default_factory=dict)  # failed check -> what it says failed (the rows)
    failure: str | None = None  # why a failed run failed, in one line (a full disk: which, and where)


def _job_for(days: set[str], refold: bool) -> UnresolvedAssetJobDefinition:
    if days:  # the facts are downstream of the days: they are folded again with them
        return landing_job
    return manifest_facts_job if refold else manifest_job


def run_landing(
    settings: Settings,
    resources: dict[str, object] | None = None,
    instance: dg.DagsterInstance | None = None,
    days: list[str] | None = None,
    progress: Progress | None = None,
) -> RunOutcome:
    """Ingest what is new in landing (or rebuild `days`), and everything downstream, in one run; a run of
    this kind that did not finish (failed, cancelled, killed) has its days built again first."""
    settings.ensure_dirs()
    take_inbox(settings)  # conversations sent to any host's replica of a shared store (memlake.landing_inbox)
    erase_forgotten_landing(settings)  # and what a forget on another host's replica could not erase here
    instance = instance or _home_instance(settings)
    release_stale_slots(instance)  # before the last run's status is read: a killed one is marked failed here
    lake = Lake.of(settings)
    # the days of the last run if it did not finish: its turns may be written and its indexes not
    unfinished = _unfinished(instance, instance.get_dynamic_partitions(DAYS)) if days is None else None
    state = read_landing_state(settings, unfinished_days=None if unfinished is None else unfinished[1])
    plan = plan_run(state)
    touched = set(days) if days is not None else set(plan.days)
    refold = not touched and plan.refold
    if settings.run_workers > 1 and len(touched) > 1:
        outcome = run_days_at_once(settings, touched, lake.partitions(TURNS), resources, instance, progress)
    else:
        outcome = _run(settings, _job_for(touched, refold), touched, lake.partitions(TURNS), LANDING_TRIGGER,
                       resources, instance, progress)
    outcome.new_files = [f.relative for f in plan.new_files if f not in plan.retried_files]
    outcome.retried_files = [(f.relative, f.sha256) for f in plan.retried_files]
    outcome.ignored = list(state.ignored)
    outcome.refolded = refold
    outcome.retried = unfinished[0] if unfinished is not None else None
    stale = set(plan.rechunk_days) - touched if outcome.success else set()
    if stale:  # days whose chunks an older chunker or other chunk settings built: theirs, then the indexes
        again = _run(settings, rechunk_job, stale, lake.partitions(TURNS), "memlake run: chunks of another "
                     "recipe", resources, instance, progress)
        outcome.rechunked = again.days
        outcome.run_ids += again.run_ids
        outcome.success = again.success
        outcome.failure = again.failure
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
    progress: Progress | None = None,
) -> RunOutcome:
    """Rebuild the search indexes (chunks, episodes, facts) of every day the lake has, from the lake alone;
    with `rechunk`, `transcripts/chunks` of every day first, from the turns and today's chunk settings."""
    days = set(Lake.of(settings).partitions(TURNS))
    if not days:  # asked before anything is created: a mistyped home stays absent
        raise NothingToIndex(f"the lake at {Lake.of(settings).store.uri} has no turns: run `memlake run` first")
    settings.ensure_dirs()
    instance = instance or _home_instance(settings)
    release_stale_slots(instance)
    job = rechunk_job if rechunk else reindex_job
    return _run(settings, job, days, days, "memlake reindex", resources, instance, progress)


def run_landing_alone(
    settings: Settings,
    say: Callable[[str], None],
    resources: dict[str, object] | None = None,
    progress: Progress | None = None,
) -> RunOutcome:
    """`memlake run`: `run_landing` once no other `memlake run` (nor a landing run the sensor launched) is
    going on the home; it then does only what the other left. Saying whom it waits for."""
    with one_run_at_a_time(settings.home, say) as home_run:
        wait_for_sensor_runs(settings, say)
        outcome = run_landing(settings, resources, progress=progress)
        if outcome.success:  # else the trace stays: the next `memlake run` does this one's days again
            home_run.finished()
    return outcome


class NothingToIndex(ValueError):
    """A reindex of a lake with no days."""


def wait_for_sensor_runs(settings: Settings, say: Callable[[str], None], poll_seconds: float = 2.0) -> None:
    """Wait while a landing run the sensor launched (under `memlake dev`) is queued or running: a `memlake
    run` beside it would ingest the same files and build the same days a second time."""
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


def _unfinished(instance: dg.DagsterInstance, known: list[str]) -> tuple[str, list[str]] | None:
    """The last `memlake run` if it did not finish (failed, cancelled, or killed: `release_stale_slots` marks a
    killed one failed): a run's id, and its days. Days built at once are one batch of runs, unfinished unless its
    folds ended well (a run of it failed, or it was killed before its folds)."""
    last = instance.get_runs(filters=dg.RunsFilter(tags={TRIGGER_TAG: LANDING_TRIGGER}), limit=1)
    if not last:
        return None
    batch = last[0].tags.get(BATCH_TAG)
    runs = instance.get_runs(filters=dg.RunsFilter(tags={BATCH_TAG: batch})) if batch else last
    ended_well = [run for run in runs if run.status == dg.DagsterRunStatus.SUCCESS
                  and (not batch or run.job_name == folds_job.name)]
    failed = [run for run in runs if run.status in (dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED)]
    if (failed or batch) and not ended_well:
        days = sorted({day for run in runs for day in days_of_run(run.tags, known)})
        return (failed or runs)[0].run_id, days
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


# Told each step of a run as it ends: (step key, steps ended, steps in the run).
Progress = Callable[[str, int, int], None]
STEP_ENDS = {"STEP_SUCCESS", "STEP_FAILURE", "STEP_SKIPPED"}


def execute_job(
    job: UnresolvedAssetJobDefinition,
    resources: dict[str, object],
    instance: dg.DagsterInstance,
    tags: dict[str, str],
    run_config: dict[str, object],
    progress: Progress | None = None,
) -> dg.ExecuteInProcessResult:
    """One in-process run of `job`, one of the code location's jobs: the UI shows the run under that job's
    name and links it to the job (`dg.materialize` names every run `__ephemeral_asset_job__`). `progress`
    is told each step as it ends, by a logger of the run's events."""
    loggers = {**dg.default_loggers(), **({} if progress is None else {"memlake_progress": _progress_logger(progress)})}
    definitions = dg.Definitions(assets=ASSETS, asset_checks=CHECKS, jobs=[job], resources=resources,
                                 loggers=loggers)
    resolved = definitions.resolve_job_def(job.name)
    if progress is not None:  # a job's steps are its nodes (memlake's assets map no dynamic outputs)
        total = len(resolved.graph.nodes)
        logged = dict(run_config.get("loggers") or {})  # type: ignore[call-overload]
        run_config = {**run_config, "loggers": {**logged, "memlake_progress": {"config": {"total": total}}}}
    return resolved.execute_in_process(run_config=run_config, instance=instance, tags=tags, raise_on_error=False)


def _progress_logger(progress: Progress) -> dg.LoggerDefinition:
    """A Dagster logger that tells `progress` each step of the run as it ends, out of `total` steps."""

    def build(context: dg.InitLoggerContext) -> logging.Logger:
        total = int(context.logger_config["total"])
        ended: set[str] = set()

        class StepEnds(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                event = getattr(record, "dagster_meta", {}).get("dagster_event")
                if event is None or event.event_type_value not in STEP_ENDS or event.step_key in ended:
                    return
                ended.add(event.step_key)
                progress(event.step_key, len(ended), max(total, len(ended)))

        logger = logging.Logger("memlake_progress", level=logging.DEBUG)
        logger.addHandler(StepEnds())
        return logger

    return dg.LoggerDefinition(build, config_schema={"total": int})


def run_days_at_once(
    settings: Settings,
    days: set[str],
    lake_days: Iterable[str],
    resources: dict[str, object] | None,
    instance: dg.DagsterInstance,
    progress: Progress | None = None,
) -> RunOutcome:
    """`run_landing` with `run_workers` > 1: the manifest, then `days` split in `run_workers` shares, each built by
    a run of `days_job` in a process of its own, all at once (the day writers' pool takes that many steps; the
    index commits still one at a time), then the folds in one run. One batch: a run of it that did not end well
    has the next `memlake run` build all its days again. Each process builds its resources from the home
    (Dagster's resources do not pickle: `resources` serve this process's runs only) and loads its own embedding
    model."""
    if instance.is_ephemeral:
        raise ValueError("days built at once need the home's Dagster instance (runs in other processes share it)")
    batch = uuid.uuid4().hex
    lake_days = list(lake_days)
    register_days(instance, days, lake_days)  # here, once, before the processes look them up
    outcome = _run(settings, manifest_job, set(), lake_days, LANDING_TRIGGER, resources, instance, progress, batch)
    if not outcome.success:
        return outcome
    shares = split_days(days, settings.run_workers)
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: no torch threads or locks forked
    with ProcessPoolExecutor(max_workers=len(shares), mp_context=context) as pool:
        futures = [pool.submit(_days_run, settings, share, lake_days, batch) for share in shares]
        day_runs = [future.result() for future in futures]
    runs = [outcome, *day_runs]
    if all(run.success for run in day_runs):
        runs.append(_run(settings, folds_job, set(), lake_days, LANDING_TRIGGER, resources, instance, progress,
                         batch))
    return _together(runs, days)


def split_days(days: Iterable[str], workers: int) -> list[list[str]]:
    """`days` in at most `workers` shares of consecutive days, as even as can be (a run's range then holds
    only its own days)."""
    ordered = sorted(days)
    count = min(workers, len(ordered))
    size, extra = divmod(len(ordered), count) if count else (0, 0)
    shares, start = [], 0
    for i in range(count):
        end = start + size + (1 if i < extra else 0)
        shares.append(ordered[start:end])
        start = end
    return shares


def _days_run(settings: Settings, days: list[str], lake_days: list[str], batch: str) -> RunOutcome:
    """One share of the days, in a process of `run_days_at_once`'s pool, on the home's instance."""
    instance = _home_instance(settings)
    return _run(settings, days_job, set(days), lake_days, LANDING_TRIGGER, None, instance, batch=batch)


def _together(runs: list[RunOutcome], days: set[str]) -> RunOutcome:
    """The outcome of a batch of runs, as of one: failed if one failed (its cause), every table and check."""
    failed = [run for run in runs if not run.success]
    checks = {name: passed for run in runs for name, passed in run.checks.items()}
    return RunOutcome(
        success=not failed,
        failure=failed[0].failure if failed else None,
        days=sorted(days),
        run_id=failed[0].run_id if failed else runs[-1].run_id,  # the one to look at: the failed, else the folds
        run_ids=[run_id for run in runs for run_id in run.run_ids],
        materialized=sorted({key for run in runs for key in run.materialized}),
        checks=checks,
        failed_checks=sorted(name for name, passed in checks.items() if not passed),
        check_notes={name: note for run in runs for name, note in run.check_notes.items()},
    )


def _run(
    settings: Settings,
    job: UnresolvedAssetJobDefinition,
    days: set[str],
    lake_days: Iterable[str],
    trigger: str,
    resources: dict[str, object] | None,
    instance: dg.DagsterInstance,
    progress: Progress | None = None,
    batch: str | None = None,
) -> RunOutcome:
    """One in-process run of `job` over `days`, recorded in `instance`; `lake_days` (the days the lake
    has) are registered as partitions too; `batch` names the runs of one `run_days_at_once`."""
    result = execute_job(
        job,
        resources or build_resources(settings),
        instance,
        tags={**register_days(instance, days, lake_days), TRIGGER_TAG: trigger, PID_TAG: str(os.getpid()),
              HOST_TAG: socket.gethostname(), **({BATCH_TAG: batch} if batch else {})},
        run_config={"loggers": CONSOLE_INFO},
        progress=progress,
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
        failure=failure_cause(result),
        days=sorted(days),
        run_id=result.run_id,
        run_ids=[result.run_id],
        materialized=sorted(
            {e.asset_key.to_user_string() for e in result.get_asset_materialization_events() if e.asset_key}
        ),
        checks=checks,
        failed_checks=sorted(name for name, passed in checks.items() if not passed),
        check_notes=notes,
    )


def failure_cause(result: dg.ExecuteInProcessResult) -> str | None:
    """Why the run failed, in one line: a full or read-only disk where any failed step met one (`no space left
    on device: <path>`), else the first failed step and the innermost error of its chain; None if none failed.
    Dagster's log has the traces; this is the line a person reads first."""
    errors = [(event.step_key, event.step_failure_data.error) for event in result.get_step_failure_events()
              if event.step_failure_data.error is not None]
    for _, error in errors:
        for link in _error_chain(error):
            fault = disk_fault_in_text(link.message)
            if fault is not None:
                return str(fault)
    if not errors:
        return None
    step, error = errors[0]
    innermost = _error_chain(error)[-1]
    said = innermost.message.strip()
    return f"step {step}: {said.splitlines()[0] if said else innermost.cls_name}"


def _error_chain(error: SerializableErrorInfo) -> list[SerializableErrorInfo]:
    chain = [error]
    while (chain[-1].cause or chain[-1].context) is not None and len(chain) < 20:
        chain.append(chain[-1].cause or chain[-1].context)
    return chain


@dataclass
class DistillOutcome:
    """What `memlake distill` did."""

    success: bool
    days: list[str] = field(default_factory=list)
    run_id: str | None = None
    stats: dict[str, Any] = field(default_factory=dict)
    failure: str | None = None  # why it failed, in one line


def run_distill(
    settings: Settings,
    agent_id: str,
    conversation_id: str | None = None,
    force: bool = False,
    resources: dict[str, object] | None = None,
    instance: dg.DagsterInstance | None = None,
    as_of: datetime | None = None,
) -> DistillOutcome:
    """Distil an agent's conversations now (as of now unless told), and rebuild what depends on them."""
    store = Lake.of(settings)
    frame = store.read(TURNS).filter(pl.col("agent_id") == agent_id)
    if conversation_id is not None:
        frame = frame.filter(pl.col("conversation_id") == conversation_id)
    days = sorted(set(frame["day"].to_list()))
    if not days:
        return DistillOutcome(success=True)
    instance = instance or _home_instance(settings)
    run_config = {
        "loggers": CONSOLE_INFO,
        "ops": {
            "episodes": {
                "config": {
                    "agent_id": agent_id,
                    "conversation_id": conversation_id,
                    "force": force,
                    "as_of": (as_of or datetime.now(UTC)).isoformat(),
                }
            }
        }
    }
    result = execute_job(pending_job, resources or build_resources(settings), instance,
                         tags={**register_days(instance, days), TRIGGER_TAG: "memlake distill"},
                         run_config=run_config)
    stats: dict[str, Any] = {}
    for event in result.get_asset_materialization_events():
        materialization = event.event_specific_data.materialization  # type: ignore[union-attr]
        if materialization.asset_key == EPISODES_KEY:
            stats = {k: v.value for k, v in materialization.metadata.items()}
    # over several days, the distiller's counts are the run's: said in its log, not on each day
    stats.update(said_run_totals((entry.message for entry in instance.all_logs(result.run_id)),
                                 EPISODES_KEY.to_user_string()))
    return DistillOutcome(success=result.success, days=days, run_id=result.run_id, stats=stats,
                          failure=failure_cause(result))


@dataclass
class SweepOutcome:
    """What `memlake maintain` ran: the Dagster run, the sweep's report and the memory-health checks."""

    success: bool
    run_id: str
    report: SweepReport | None = None
    checks: dict[str, tuple[bool, str]] = field(default_factory=dict)  # check name -> (passed, what it saw)
    failure: str | None = None  # why it failed, in one line


def run_maintenance(
    settings: Settings,
    kind: str,
    as_of: datetime,
    resources: dict[str, object] | None = None,
    instance: dg.DagsterInstance | None = None,
) -> SweepOutcome:
    """One maintenance sweep of `kind` as of `as_of`, in process and recorded in the home's Dagster instance."""
    if kind not in SWEEP_JOBS:
        raise ValueError(f"no sweep of kind {kind!r}: the kinds are {', '.join(SWEEP_JOBS)}")
    settings.ensure_dirs()
    instance = instance or _home_instance(settings)
    result = execute_job(SWEEP_JOBS[kind], resources or build_resources(settings), instance,
                         tags={TRIGGER_TAG: "memlake maintain"},
                         run_config={"loggers": CONSOLE_INFO, **sweep_run_config(kind, as_of.isoformat())})
    outcome = SweepOutcome(success=result.success, run_id=result.run_id, failure=failure_cause(result))
    for event in result.get_asset_materialization_events():
        materialization = event.event_specific_data.materialization  # type: ignore[union-attr]
        if materialization.asset_key == REPORTS_KEY:
            sweep = materialization.metadata["sweep_id"].value
            rows = Lake.of(settings).read(REPORTS).filter(pl.col("sweep_id") == sweep)
            outcome.report = SweepReport.from_row(rows.row(0, named=True)) if rows.height else None
    for evaluation in result.get_asset_check_evaluations():
        outcome.checks[evaluation.check_name] = (evaluation.passed, evaluation.description or "")
    return outcome
