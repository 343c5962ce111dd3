"""What every command module of `memlake` shares: the --home, --quiet and --agent options, the pipeline's
runs (imported when a command runs one), and the lines a read prints when it found nothing."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Annotated, NoReturn

import typer

from memlake.api import Memory, check_agent_id

REPO_DIR = Path(__file__).resolve().parents[2]  # the repository

HomeOption = Annotated[Path | None, typer.Option("--home", help="memlake home (default: $MEMLAKE_HOME or ./data)")]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="no progress bar (none either when the output "
                                           "is not a terminal)")]
# Every --agent is checked against the agent id rule as it is read, before a command looks anything up.
AgentOption = Annotated[str, typer.Option("--agent", help="agent id", callback=check_agent_id)]


def runs() -> ModuleType:
    """`pipelines.runs`, for the commands that run the pipeline."""
    from pipelines import runs  # deferred: Dagster costs ~2 s to import, and the read commands never need it

    return runs


def unknown_agent(memory: Memory, agent: str) -> None:
    """For a read that found nothing: an agent with no memory here (`Memory.has_memory`) is probably a mistyped
    id, so say which agents have memory and exit 1."""
    if memory.has_memory(agent):
        return
    typer.echo(f"agent {agent!r} has no memory here; agents: {', '.join(memory.agents()) or 'none yet'}", err=True)
    raise typer.Exit(1)


def unknown_conversation(memory: Memory, agent: str, conversation: str | None) -> None:
    """For a read of one conversation that found nothing: a conversation the agent does not have is probably a
    mistyped id, so say so and exit 1."""
    if conversation is not None and memory.turns(agent, conversation).height == 0:
        typer.echo(f"agent {agent!r} has no conversation {conversation!r}", err=True)
        raise typer.Exit(1)


def json_line(row: dict) -> str:  # type: ignore[type-arg]
    """A row as one JSON line; times in ISO 8601 (2024-05-01T10:00:00+00:00), as every reader parses them."""
    return json.dumps(row, default=lambda value: value.isoformat() if hasattr(value, "isoformat") else str(value))


def run_failed(run_id: str | None, cause: str | None) -> NoReturn:
    """The last line of a failed run, and exit code 1: why, in one line (Dagster's log above keeps the trace)."""
    typer.echo(f"error: run {run_id} failed: {cause or 'see the log above'}", err=True)
    raise typer.Exit(1)
