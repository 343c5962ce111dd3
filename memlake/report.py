"""The ingest report `memlake run` prints: per format files, conversations, turns; messages skipped inside
ingested files; quarantined files."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection

import polars as pl

from memlake.lake import Lake
from memlake.landing import limit_changed
from memlake.parsers import ParseLimits
from memlake.schemas import LANDING_MANIFEST, TURNS


def ingest_summary(manifest: pl.DataFrame, turns: pl.DataFrame) -> pl.DataFrame:
    """One row per source format: files, conversations and turns in the lake."""
    manifest = manifest.filter(pl.col("status") == "ingested")
    files = manifest.group_by("source_format").agg(
        pl.col("source_file").n_unique().alias("files"),
        pl.struct("agent_id", "conversation_id").n_unique().alias("conversations"),
    )
    turn_counts = turns.group_by("source_format").agg(pl.len().cast(pl.Int64).alias("turns"))
    return (
        files.join(turn_counts, on="source_format", how="left")
        .with_columns(pl.col("turns").fill_null(0))
        .sort("source_format")
    )


def quarantined_files(manifest: pl.DataFrame) -> pl.DataFrame:
    return (
        manifest.filter(pl.col("status") == "quarantined")
        .select("source_file", "source_format", "reason", "quarantine_path")
        .sort("source_file")
    )


def retried_lines(manifest: pl.DataFrame, files: list[tuple[str, str]], limits: ParseLimits) -> list[str]:
    """What became of each file read again (`files`: landing path and sha256) under `limits`, one line each."""
    lines = []
    for source_file, sha256 in files:
        rows = manifest.filter((pl.col("source_file") == source_file) & (pl.col("source_sha256") == sha256))
        first = rows.row(0, named=True) if rows.height else None
        if first is None or limit_changed(first, limits):  # the run stopped before its manifest step
            lines.append(f"{source_file}: not read yet (the run stopped before landing; the next run reads it)")
        elif first["status"] == "ingested":
            lines.append(f"{source_file}: ingested, {rows.height} conversation(s)")
        elif first["status"] == "duplicate":
            lines.append(f"{source_file}: not ingested, the same bytes as an ingested file")
        else:
            lines.append(f"{source_file}: quarantined again: {first['reason']}")
    return lines


def skipped_messages(manifest: pl.DataFrame) -> dict[str, Counter[str]]:
    """Ingested files that left messages out (empty, system, hidden, tool calls...), with how many per reason."""
    per_file: dict[str, Counter[str]] = {}
    ingested = manifest.filter(pl.col("status") == "ingested").sort("source_file")
    for source_file, skipped in ingested.select("source_file", "skipped").iter_rows():
        for reason, count in (skipped or {}).items():
            if count:
                per_file.setdefault(source_file, Counter())[reason] += count
    return per_file


def skipped_line(source_file: str, reasons: Counter[str]) -> str:
    """`x.json: 3 messages skipped (2 empty, 1 unknown role)`."""
    total = sum(reasons.values())
    most_first = sorted(reasons.items(), key=lambda item: (-item[1], item[0]))
    why = ", ".join(f"{count} {reason.replace('_', ' ')}" for reason, count in most_first)
    return f"{source_file}: {total} message{'s' if total != 1 else ''} skipped ({why})"


def render_ingest_report(lake: Lake, files: Collection[str] | None = None) -> str:
    """The report `memlake run` prints. With `files` (the landing paths this run read): what this run ingested,
    found duplicate, skipped and quarantined, then the lake's totals over every run, labelled so; a run over
    unchanged data says it ingested nothing new. Without `files`: every file the lake has seen."""
    manifest, turns = lake.read(LANDING_MANIFEST), lake.read(TURNS)
    lines = []
    if files is not None:
        lake_files, held = ingest_summary(manifest, turns), quarantined_files(manifest).height
        manifest = manifest.filter(pl.col("source_file").is_in(list(files)))
        turns = turns.filter(pl.col("source_file").is_in(list(files)))
    summary = ingest_summary(manifest, turns)
    if files is not None and summary.height == 0:
        lines.append("Ingested by this run: nothing new")
    else:
        lines.append("Ingested by this run, by format:" if files is not None else "Ingested, by format:")
        lines.append(f"  {'format':<12} {'files':>6} {'conversations':>14} {'turns':>7}")
        for row in summary.iter_rows(named=True):
            lines.append(
                f"  {row['source_format']:<12} {row['files']:>6} {row['conversations']:>14} {row['turns']:>7}"
            )
        lines.append(
            f"  {'total':<12} {summary['files'].sum():>6} {summary['conversations'].sum():>14} "
            f"{summary['turns'].sum():>7}"
        )
    duplicates = manifest.filter(pl.col("status") == "duplicate")["source_file"].unique().sort()
    if duplicates.len():
        lines.append(f"Duplicates (the same bytes as an ingested file, not ingested again): {duplicates.len()} file(s)")
        lines.extend(f"  {name}" for name in duplicates.to_list())
    skipped = skipped_messages(manifest)
    if skipped:
        lines.append(f"Messages skipped inside ingested files: {len(skipped)} file(s)")
        lines.extend(f"  {skipped_line(name, reasons)}" for name, reasons in skipped.items())
    bad = quarantined_files(manifest)
    lines.append(f"Quarantined: {bad.height} file(s)")
    for row in bad.iter_rows(named=True):
        lines.append(f"  {row['source_file']}: {row['reason']}  -> {row['quarantine_path']}")
    if files is not None:
        lines.append(f"In the lake, over every run: {lake_files['files'].sum()} file(s), "
                     f"{lake_files['conversations'].sum()} conversation(s), {lake_files['turns'].sum()} turn(s)"
                     + (f"; {held} file(s) quarantined" if held else ""))
    return "\n".join(lines)
