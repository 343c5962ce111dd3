"""`memlake run`, `reindex`, `adapt`, `dev`, `maintain`, `distill`: the commands that run the pipeline (or a
part of it) over a home."""

from __future__ import annotations

import os
import signal
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import polars as pl
import typer

from memlake.adapt import AdaptParams, base_model_of, home_pairs
from memlake.adapt import adapt as adapt_model
from memlake.api import Memory, check_agent_id
from memlake.cpu import yield_cores
from memlake.embedding import has_weights
from memlake.facts.quality import HELD_BACK, held_back_agents
from memlake.lake import Lake
from memlake.moments import as_utc
from memlake.parsers import ParseLimits
from memlake.report import render_ingest_report, retried_lines
from memlake.schemas import FACTS, LANDING_MANIFEST, PENDING
from memlake.settings import existing_home, load_settings, write_home_setting
from pipelines.cli.shared import REPO_DIR, AgentOption, HomeOption, QuietOption, run_failed, runs, unknown_agent
from pipelines.progress import ProgressBar


def _days(days: list[str]) -> str:
    """Days as a reader takes them: each one when few, else the first and last of how many (not a range:
    the days between are not all in it)."""
    if not days:
        return "none (0)"
    if len(days) <= 4:
        return f"{', '.join(days)} ({len(days)})"
    return f"{len(days)} days, {days[0]} to {days[-1]}"


def run(home: HomeOption = None, quiet: QuietOption = False) -> None:
    """Ingest new landing files and rebuild everything downstream, in one in-process Dagster run."""
    settings = load_settings(home)
    yield_cores(settings.run_nice)
    with ProgressBar("memlake run", "step", quiet) as bar:
        outcome = runs().run_landing_alone(settings, typer.echo, progress=bar.step)
    typer.echo(f"run {outcome.run_id}: " + ("ok" if outcome.success else f"FAILED: {outcome.failure or 'see above'}"))
    if outcome.retried:
        typer.echo(f"run {outcome.retried} did not finish (failed, cancelled or killed): its work is done again")
    typer.echo(f"new files: {len(outcome.new_files)}; days rebuilt: {_days(outcome.days)}")
    lake = Lake.of(settings)
    if outcome.retried_files:
        typer.echo(f"read again (quarantined under a limit that has changed since): {len(outcome.retried_files)}")
        for line in retried_lines(lake.read(LANDING_MANIFEST), outcome.retried_files, ParseLimits.of(settings)):
            typer.echo(f"  {line}")
    if outcome.ignored:
        typer.echo(f"ignored in landing (not read): {len(outcome.ignored)}")
        for unread in outcome.ignored:
            typer.echo(f"  {unread.relative}: {unread.reason}")
    if outcome.refolded:
        typer.echo("facts folded again with the override and forget entries written since the last run; "
                   "profiles and fact search rebuilt")
    if outcome.rechunked:
        days = len(outcome.rechunked)
        typer.echo(f"chunks built again (an older chunker or other chunk settings had built them): "
                   f"{outcome.rechunked[0]}..{outcome.rechunked[-1]} ({days} day{'s' if days != 1 else ''})")
    for check in outcome.failed_checks:
        note = outcome.check_notes.get(check)
        typer.echo(f"check failed: {check}" + (f": {note}" if note else ""))
    for agent, rows in held_back_agents(lake.stamp(FACTS, HELD_BACK)).items():
        typer.echo(f"facts of agent {agent!r} held back, its facts of the last good run kept (a fold rule broke; "
                   f"please report it): " + "; ".join(rows))
    waiting = lake.read(PENDING)
    if waiting.height:  # not distilled yet (the model failed or was not reachable): no episode, no facts
        agents = ", ".join(sorted(set(waiting["agent_id"].to_list())))
        typer.echo(f"pending: {waiting.height} conversation(s) of {agents} wait for the distiller (`memlake "
                   "distill --agent A` retries them and says why; under `memlake dev` the pending sensor does)")
    read_now = [*outcome.new_files, *(name for name, _ in outcome.retried_files)]
    typer.echo(render_ingest_report(lake, files=read_now))
    if not outcome.success:
        run_failed(outcome.run_id, outcome.failure)


def reindex(
    home: HomeOption = None,
    rechunk: Annotated[
        bool, typer.Option("--rechunk", help="first build every day's chunks again from the turns (new chunk kinds "
                           "or chunk settings)")
    ] = False,
    quiet: QuietOption = False,
) -> None:
    """Rebuild the search indexes (LanceDB) of every day from the lake alone: after losing lancedb/, or to
    embed again with another model (`MEMLAKE_EMBEDDING_MODEL`). Landing files are not read."""
    settings = existing_home(load_settings(home))  # a mistyped home is the mistake, not "no turns"
    yield_cores(settings.run_nice)
    try:
        with ProgressBar("memlake reindex", "step", quiet) as bar:
            outcome = runs().run_reindex(settings, rechunk=rechunk, progress=bar.step)
    except runs().NothingToIndex as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    typer.echo(f"run {outcome.run_id}: " + ("ok" if outcome.success else f"FAILED: {outcome.failure or 'see above'}"))
    typer.echo(f"days indexed: {_days(outcome.days)}; "
               f"rebuilt: {', '.join(outcome.materialized)}")
    if not outcome.success:
        run_failed(outcome.run_id, outcome.failure)


def adapt(
    home: HomeOption = None,
    agents: Annotated[
        list[str] | None, typer.Option("--agent", help="only these agents' conversations (repeatable; default: all)")
    ] = None,
    epochs: Annotated[int, typer.Option(help="passes over the question-reply pairs")] = 2,
    use: Annotated[
        bool, typer.Option("--use", help="put the adapted model in this home's memlake.toml and reindex with it")
    ] = False,
    quiet: QuietOption = False,
) -> None:
    """Adapt the embedding model to this home's conversations, offline and without labels: it learns from
    each question in a chat and the reply after it. Prints the new model's folder; with --use, this home
    then searches with it (its indexes are embedded again)."""

    settings = load_settings(home)
    base = base_model_of(settings.embedding_model, settings.home)
    if not has_weights(base):
        typer.echo(f"error: embedding model {base!r} has no weights to adapt", err=True)
        raise typer.Exit(1)
    overriding = [name for name in ("MEMLAKE_EMBEDDING_MODEL", "MEMLAKE_SETTINGS_FILE") if os.environ.get(name)]
    if use and overriding:
        typer.echo(f"error: --use writes {settings.home / 'memlake.toml'}, but {' and '.join(overriding)} "
                   "would still decide the model: unset it, or set the model there", err=True)
        raise typer.Exit(1)
    existing_home(settings)
    chosen = [check_agent_id(a) for a in agents or []]
    unknown = sorted(set(chosen) - set(Memory(settings=settings).agents_with_turns()))
    if unknown:
        raise ValueError(f"no turns of agent {', '.join(map(repr, unknown))} here to adapt on")
    pairs, turn_count = home_pairs(Lake.of(settings), chosen)
    try:
        with ProgressBar("adapting", "batch", quiet) as bar:  # opened at the first batch, once the total is known
            adapted = adapt_model(base, pairs, settings.models_dir, AdaptParams(epochs=epochs), settings.home,
                                  bar.update)
    except ValueError as exc:
        typer.echo(f"error: {exc} ({turn_count} turns)", err=True)
        raise typer.Exit(1) from exc
    done = f"trained in {adapted.seconds:.0f} s" if adapted.trained else "already there, unchanged"
    typer.echo(f"adapted model: {adapted.path} ({adapted.pairs} question-reply pairs, {turn_count} turns; {done})")
    # named relative to the home, so the home can move with its models
    name = adapted.path.relative_to(settings.home).as_posix()
    home_option = f" --home {home}" if home else ""
    if settings.embedding_model == name:
        typer.echo(f"this home already searches with it ({settings.home / 'memlake.toml'}): nothing to reindex")
        return
    if not use:
        typer.echo(f'to use it: memlake adapt --use{home_option}, or put embedding_model = "{name}" in '
                   f"{settings.home / 'memlake.toml'} and run memlake reindex{home_option}")
        return
    typer.echo(f'{write_home_setting(settings.home, "embedding_model", name)}: embedding_model = "{name}"')
    reindex(home=settings.home, rechunk=False, quiet=quiet)


def dev(
    host: Annotated[str, typer.Option(help="interface to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port of the UI")] = 3000,
    home: HomeOption = None,
) -> None:
    """The Dagster UI and daemon (the landing, pending and automation sensors) on this home."""
    settings = load_settings(home)
    settings.ensure_dirs()
    runs().ensure_dagster_home(settings)
    os.environ["MEMLAKE_HOME"] = str(settings.home)
    # A parent started in the background may ignore these; dagster dev must not.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # `dagster dev` advises `dg dev` instead, which needs a dg project and another package; users run `memlake
    # dev`, so the advice is noise on every start.
    filters = [os.environ.get("PYTHONWARNINGS"), "ignore:Function `dev_command` is superseded"]
    os.environ["PYTHONWARNINGS"] = ",".join(f for f in filters if f)
    workspace = REPO_DIR / "workspace.yaml"
    dagster = Path(sys.executable).with_name("dagster")
    os.execv(str(dagster), [str(dagster), "dev", "-w", str(workspace), "-h", host, "-p", str(port)])


def maintain(
    lint: Annotated[bool, typer.Option("--lint", help="the lint sweep (default: consolidation)")] = False,
    as_of: Annotated[str | None, typer.Option("--as-of", help="compute the sweep as of this time (ISO; "
                                                            "default now)")] = None,
    home: HomeOption = None,
) -> None:
    """Run a maintenance sweep now (consolidation, or lint) over every agent and print each step's counts."""
    settings = existing_home(load_settings(home))
    when = as_utc(as_of) if as_of is not None else datetime.now(UTC)  # a bad time: one `error:` line
    outcome = runs().run_maintenance(settings, "lint" if lint else "consolidation", when)
    report = outcome.report
    if report is None:
        typer.echo(f"run {outcome.run_id}: FAILED, no sweep written (see the run in `memlake dev`)", err=True)
        run_failed(outcome.run_id, outcome.failure)
    typer.echo(f"{report.sweep_id} (run {outcome.run_id}): {report.kind} as of {report.as_of.isoformat()}")
    width = max(len(name) for name in report.counts)
    for name, count in report.counts.items():
        typer.echo(f"  {name:<{width}}  {count}")
    typer.echo("seconds: " + ", ".join(f"{step} {seconds:.2f}" for step, seconds in report.durations.items()))
    if report.judge:
        typer.echo(f"judges: {report.judge}")
    for name, (passed, what) in sorted(outcome.checks.items()):
        typer.echo(f"check {name}: {'ok' if passed else 'WARN'} ({what})")
    if not outcome.success:
        raise typer.Exit(1)


def distill(
    agent: AgentOption,
    conversation: Annotated[str | None, typer.Option(help="only this conversation")] = None,
    force: Annotated[bool, typer.Option("--force", help="distil again even when the result is cached")] = False,
    home: HomeOption = None,
) -> None:
    """Distil an agent's conversations now (one model call each, cached) and say what it did."""


    settings = existing_home(load_settings(home))
    memory = Memory(settings=settings)
    unknown_agent(memory, agent)  # a mistyped agent is named as such, with the agents there are
    outcome = runs().run_distill(settings, check_agent_id(agent), conversation_id=conversation, force=force)
    if not outcome.days:
        typer.echo(f"no conversations of agent {agent}" + (f" with id {conversation}" if conversation else ""))
        raise typer.Exit(1)
    stats = outcome.stats
    pending = Lake.of(settings).read(PENDING).filter(pl.col("agent_id") == agent)
    typer.echo(f"run {outcome.run_id}: {'ok' if outcome.success else 'FAILED'}; distiller {stats.get('distiller')} "
               f"(prompt {stats.get('prompt_version')}); {stats.get('worked_on', 0)} conversation(s) on "
               f"{len(outcome.days)} day(s)")
    typer.echo(f"calls made: {stats.get('model_calls', 0)} (requests: {stats.get('model_requests', 0)}); "
               f"cache hits: {stats.get('cache_hits', 0)}; distilled: {stats.get('distilled', 0)}; "
               f"failed: {stats.get('failed', 0)}; pending left: {pending.height}")
    usage = stats.get("token_usage") or {}
    if usage.get("total_tokens"):
        typer.echo(f"tokens: {usage['prompt_tokens']} prompt + {usage['completion_tokens']} completion")
    for row in pending.iter_rows(named=True):
        typer.echo(f"  pending {row['conversation_id']}: {row['reason']} (attempts {row['attempts']})")
    if not outcome.success:
        run_failed(outcome.run_id, outcome.failure)
