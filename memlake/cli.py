"""The `memlake` command: a thin shell over `Memory` and the pipeline runner."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
from pathlib import Path
from typing import Annotated

import typer

from memlake.api import Memory, check_agent_id
from memlake.settings import load_settings

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Long-term memory for AI agents.")

HomeOption = Annotated[Path | None, typer.Option("--home", help="memlake home (default: $MEMLAKE_HOME or ./data)")]
AgentOption = Annotated[str, typer.Option("--agent", help="agent id")]

SAMPLES_DIR = Path(__file__).resolve().parent.parent / "data" / "samples"


def _copy_into_landing(files: list[Path], landing_agent_dir: Path) -> list[Path]:
    landing_agent_dir.mkdir(parents=True, exist_ok=True)
    copied = []
    for source in files:
        target = landing_agent_dir / source.name
        if target.exists() and target.read_bytes() == source.read_bytes():
            continue
        stem, suffix, n = target.stem, target.suffix, 1
        while target.exists():  # never overwrite a landing file
            target = landing_agent_dir / f"{stem}.{n}{suffix}"
            n += 1
        shutil.copy2(source, target)
        copied.append(target)
    return copied


@app.command()
def ingest(
    files: Annotated[list[Path], typer.Argument(exists=True, dir_okay=False, help="export files to ingest")],
    agent: AgentOption,
    home: HomeOption = None,
) -> None:
    """Copy export files into <home>/landing/<agent>/ (the next run picks them up)."""
    settings = load_settings(home)
    copied = _copy_into_landing(files, settings.landing_dir / check_agent_id(agent))
    for path in copied:
        typer.echo(f"landed {path}")
    typer.echo(f"{len(copied)} new file(s), {len(files) - len(copied)} already there")


@app.command("ingest-samples")
def ingest_samples(home: HomeOption = None) -> None:
    """Copy the shipped sample exports (data/samples/<agent>/…) into landing."""
    settings = load_settings(home)
    total = 0
    for agent_dir in sorted(p for p in SAMPLES_DIR.iterdir() if p.is_dir()):
        total += len(_copy_into_landing(sorted(p for p in agent_dir.iterdir() if p.is_file()),
                                        settings.landing_dir / agent_dir.name))
    typer.echo(f"samples: {total} new file(s) in {settings.landing_dir}")


@app.command()
def run(home: HomeOption = None) -> None:
    """Ingest new landing files and rebuild everything downstream, in one in-process Dagster run."""
    from memlake.lake import Lake
    from memlake.report import render_ingest_report
    from pipelines.runner import run_landing

    settings = load_settings(home)
    outcome = run_landing(settings)
    typer.echo(f"run {outcome.run_id}: {'ok' if outcome.success else 'FAILED'}")
    typer.echo(f"new files: {len(outcome.new_files)}; days rebuilt: "
               f"{outcome.days[0] + '..' + outcome.days[-1] if outcome.days else 'none'} ({len(outcome.days)})")
    for check in outcome.failed_checks:
        typer.echo(f"check failed: {check}")
    typer.echo(render_ingest_report(Lake(settings.lake_dir)))
    if not outcome.success:
        raise typer.Exit(1)


@app.command()
def dev(
    host: Annotated[str, typer.Option(help="interface to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port of the UI")] = 3000,
    home: HomeOption = None,
) -> None:
    """The Dagster UI and daemon (landing sensor, schedules) on this home."""
    from pipelines.runner import ensure_dagster_home

    settings = load_settings(home)
    settings.ensure_dirs()
    ensure_dagster_home(settings)
    os.environ["MEMLAKE_HOME"] = str(settings.home)
    # A parent started in the background may ignore these; dagster dev must not.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    workspace = Path(__file__).resolve().parent.parent / "workspace.yaml"
    dagster = Path(sys.executable).with_name("dagster")
    os.execv(str(dagster), [str(dagster), "dev", "-w", str(workspace), "-h", host, "-p", str(port)])


@app.command()
def agents(home: HomeOption = None) -> None:
    """List the agents that have memory."""
    for agent_id in Memory(home).agents():
        typer.echo(agent_id)


@app.command()
def turns(
    agent: AgentOption,
    conversation: Annotated[str | None, typer.Option(help="only this conversation")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines")] = False,
    home: HomeOption = None,
) -> None:
    """Print an agent's turns."""
    frame = Memory(home).turns(agent, conversation)
    if as_json:
        for row in frame.iter_rows(named=True):
            typer.echo(json.dumps(row, default=str))
        return
    for row in frame.iter_rows(named=True):
        typer.echo(f"[{row['created_at']:%Y-%m-%d %H:%M}] {row['conversation_id']} {row['role']}: {row['content']}")


if __name__ == "__main__":
    app()
