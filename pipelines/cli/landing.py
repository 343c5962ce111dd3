"""`memlake ingest`, `export`, `import`, `ingest-samples`: what goes into a home's landing folder, and an
agent's memory out of it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from memlake.api import Memory
from memlake.atomic_files import copy_atomically
from memlake.lake import Lake
from memlake.landing import quarantine_reasons, sha256_file
from memlake.schemas import LANDING_MANIFEST, agent_folder
from memlake.settings import load_settings
from pipelines.cli.shared import REPO_DIR, AgentOption, HomeOption

SAMPLES_DIR = REPO_DIR / "data" / "samples"


def _copy_into_landing(files: list[Path], landing_agent_dir: Path) -> list[Path]:
    """Copy `files` into the agent's landing folder, under a new name when the name is taken; a file whose
    bytes are already there (under any name) is not copied again."""
    landing_agent_dir.mkdir(parents=True, exist_ok=True)
    by_size: dict[int, list[Path]] = {}  # only files of the same size are read to compare
    for path in landing_agent_dir.rglob("*"):
        if path.is_file() and not path.name.startswith("."):  # hidden: a temporary, or a file landing never reads
            by_size.setdefault(path.stat().st_size, []).append(path)
    copied = []
    for source in files:
        target = landing_agent_dir / source.name
        data = source.read_bytes()
        if any(p.read_bytes() == data for p in by_size.get(len(data), [])):
            continue
        stem, suffix, n = target.stem, target.suffix, 1
        while target.exists():  # never overwrite a landing file
            target = landing_agent_dir / f"{stem}.{n}{suffix}"
            n += 1
        copy_atomically(source, target)  # whole or not at all: a retry after a full disk lands this same name
        copied.append(target)
        by_size.setdefault(len(data), []).append(target)
    return copied


def ingest(
    files: Annotated[list[Path], typer.Argument(exists=True, dir_okay=False, help="export files to ingest")],
    agent: AgentOption,
    home: HomeOption = None,
) -> None:
    """Copy export files into <home>/landing/<agent>/ (the next run picks them up)."""
    hidden = [source.name for source in files if source.name.startswith(".")]
    if hidden:  # landing does not read hidden files: copying one would land nothing
        raise ValueError(f"{', '.join(hidden)}: a file name starting with '.' is not read from landing; "
                         "rename it first")
    settings = load_settings(home)
    copied = _copy_into_landing(files, agent_folder(settings.landing_dir, agent))
    for path in copied:
        typer.echo(f"landed {path}")
    # bytes quarantined before: a run reads them again only once the limit that refused them changes
    quarantined = quarantine_reasons(Lake.of(settings).read(LANDING_MANIFEST), agent)
    copied_bytes = {sha256_file(path) for path in copied}
    held = 0
    for source in files:
        sha256 = sha256_file(source)
        if sha256 in quarantined:
            typer.echo(f"{source.name}: these bytes are quarantined: {quarantined[sha256]}")
            held += sha256 not in copied_bytes
    already = len(files) - len(copied) - held
    typer.echo(f"{len(copied)} new file(s), {already} already there" + (f", {held} quarantined" if held else ""))


def export_memory(
    agent: AgentOption,
    path: Annotated[Path, typer.Argument(help="a new folder, or with --archive a new .tar.gz, .tgz or .zip file")],
    archive: Annotated[bool, typer.Option("--archive", help="one archive file (its name's ending says which)")] = (
        False
    ),
    home: HomeOption = None,
) -> None:
    """Export an agent's memory: Parquet per table (its rows only, what it forgot left out) and manifest.json."""
    manifest = Memory(home).export(agent, path, archive=archive)
    rows = sum(table["rows"] for table in manifest["tables"].values())
    typer.echo(f"exported agent {agent}: {len(manifest['tables'])} tables, {rows:,} rows, to {path}")


def import_memory(
    path: Annotated[Path, typer.Argument(help="the folder or archive `memlake export` wrote")],
    agent: AgentOption,
    merge: Annotated[bool, typer.Option("--merge", help="add to the memory the agent has here already")] = False,
    home: HomeOption = None,
) -> None:
    """Import an export as AGENT into this home (a new one is made): its conversations land as one file and its
    overrides, forgets, splits and accesses join the inputs logs; `memlake run` then derives everything again."""
    from memlake.agent_export import import_agent  # deferred: the fact fold, ~50 ms

    done = import_agent(load_settings(home), path, agent, merge=merge)
    entries = ", ".join(f"{count} {name.split('/')[1]}" for name, count in done["entries"].items() if count)
    typer.echo(f"imported agent {done['source_agent']} as {agent}: {done['conversations']} conversation(s), "
               f"{done['turns']} turn(s)" + (f"; log entries: {entries}" if entries else ""))
    if done["unmatched_forgets"]:
        typer.echo(f"warning: {done['unmatched_forgets']} forgotten fact(s) are not described in the export and "
                   "could not be re-keyed: check `memlake facts` after the run and forget them again if needed")
    typer.echo("run `memlake run` to build its memory")


def ingest_samples(home: HomeOption = None) -> None:
    """Copy the shipped sample exports (data/samples/<agent>/…) into landing."""
    settings = load_settings(home)
    total = 0
    for agent_dir in sorted(p for p in SAMPLES_DIR.iterdir() if p.is_dir()):
        total += len(_copy_into_landing(sorted(p for p in agent_dir.iterdir() if p.is_file()),
                                        agent_folder(settings.landing_dir, agent_dir.name)))
    typer.echo(f"samples: {total} new file(s) in {settings.landing_dir}")
