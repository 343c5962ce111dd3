"""The `memlake` command: a thin shell over `Memory` and the pipeline runner. A module per command group
(`landing`, `build`, `reads`, `facts`, `service`, `graph`, `bench`), what they share in `shared`; this module
puts them on one app, in the order `memlake --help` lists them, and turns a mistake into one `error:` line."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import typer
from pydantic import ValidationError
from typer.exceptions import TyperException

from memlake.disk_faults import disk_fault
from pipelines.cli import bench, build, facts, graph, landing, reads, service

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Long-term memory for AI agents.")

# (name, function) of each command, in the order `memlake --help` lists them; the groups after them
COMMANDS: list[tuple[str, Callable[..., None]]] = [
    ("ingest", landing.ingest),
    ("export", landing.export_memory),
    ("import", landing.import_memory),
    ("ingest-samples", landing.ingest_samples),
    ("run", build.run),
    ("reindex", build.reindex),
    ("adapt", build.adapt),
    ("dev", build.dev),
    ("agents", reads.agents),
    ("turns", reads.turns),
    ("maintain", build.maintain),
    ("context", reads.context),
    ("search", reads.search),
    ("remember", facts.remember),
    ("reject", facts.reject),
    ("forget", facts.forget),
    ("facts", facts.facts),
    ("history", facts.history),
    ("profile", facts.profile),
    ("distill", build.distill),
    ("serve", service.serve),
    ("mcp", service.mcp),
]
for name, command in COMMANDS:
    app.command(name)(command)
app.add_typer(service.token_app, name="token")
app.add_typer(graph.graph_app, name="graph")
app.add_typer(bench.bench_app, name="bench")


def main() -> None:
    """The `memlake` command. A mistake in what was asked (an id, a date, a scope, a setting) is one `error:`
    line and exit code 2, not a traceback; a full or read-only disk is one `error:` line with the path and exit
    code 1; MEMLAKE_DEBUG=1 shows the traceback."""
    try:
        code = app(standalone_mode=False)
    except typer.Abort:  # Ctrl-C, or no to a question
        typer.echo("aborted", err=True)
        sys.exit(1)
    except TyperException as exc:  # click's usage errors (a missing option, a file not there): one line too
        if not hasattr(exc, "format_message"):
            raise
        ctx = getattr(exc, "ctx", None)
        typer.echo(f"error: {exc.format_message()} (see {ctx.command_path if ctx else 'memlake'} --help)", err=True)
        sys.exit(getattr(exc, "exit_code", 2))
    except Exception as exc:
        if os.environ.get("MEMLAKE_DEBUG"):
            raise
        fault = disk_fault(exc)
        if fault is not None:  # the machine's state, not a mistake in what was asked: exit code 1
            remedy = "make it writable" if fault.read_only else "free some space"
            typer.echo(f"error: {fault} ({remedy}, then run it again: what was there is kept)", err=True)
            sys.exit(1)
        if not isinstance(exc, ValueError):
            raise
        if isinstance(exc, ValidationError):  # a setting: its name and what is wrong, on one line
            message = "; ".join(f"setting {'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        else:
            message = str(exc)
        typer.echo(f"error: {message}", err=True)
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)
