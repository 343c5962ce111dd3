"""Ingest benchmark: turns a second end to end, texts embedded per turn, index size and peak memory, on LoCoMo
(short chat lines) and RealMem (long answers), each with the default chunking beside today's in the same run.

"Today's" is the chunking before long turns had a bound (`chunk_long_turn_keys = 0`: a key per sentence of
every turn, windows over every pair of turns). Each build runs in a fresh process (spawned), so its peak
resident memory (`resource.getrusage`) is its own and no model or table cache carries over from the last.
Turns a second end to end: turns over the seconds of the steps from landing to a searchable chunk index
(manifest, turns and their checks, chunks, chunk index); the whole run (episodes, facts, ... too) beside it. The
graph's build (its step: entities, relations, merges, mentions from turns, episodes and facts) per 1,000 turns too.
"""

from __future__ import annotations

import json
import multiprocessing
import resource
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memlake.settings import write_home_setting
from memlake_bench import locomo, realmem
from memlake_bench.machine import machine
from memlake_bench.markdown import markdown_table
from memlake_bench.pipeline import HomePipeline

# settings over the defaults: today's (the issue's: no bound on long turns, every window's and turn's text
# embedded), the default with every turn's text embedded, the default, the fast one (a sentence's vector read from
# its turn's pass: only turns and questions are embedded)
# The graph multi-asset's step in a run's step timings.
GRAPH_STEP = "graph"
CHUNKINGS: dict[str, dict[str, int | bool]] = {
    "today": {"chunk_long_turn_keys": 0, "chunk_pool_windows": False, "chunk_pool_turns": False},
    "own_turns": {"chunk_pool_turns": False}, "budget": {}, "fast": {"chunk_span_sentences": True},
}


@dataclass(frozen=True)
class Build:
    """One home to build: which data, which chunking, where."""

    dataset: str  # locomo or realmem
    data: Path
    selection: tuple[int, ...]  # LoCoMo: the first N samples (one number); RealMem: persona indexes (all if empty)
    chunking: str
    home: Path
    model: str


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0


def landing_writer(build: Build) -> Callable[[Path], Any]:
    if build.dataset == "locomo":
        samples = json.loads(build.data.read_bytes())[: build.selection[0] if build.selection else None]
        return lambda landing: locomo.write_landing(samples, landing)
    _, picked = realmem.read_personas(build.data, build.selection or None)
    return lambda landing: realmem.write_landing([(agent, dialogues) for _, agent, dialogues in picked], landing)


def build_home(build: Build, pipeline: HomePipeline) -> dict[str, Any]:
    """Build one home (in the process that runs it): the ingest figures, its index size and the peak memory."""
    build.home.mkdir(parents=True, exist_ok=True)
    for key, value in CHUNKINGS[build.chunking].items():
        write_home_setting(build.home, key, str(value))
    figures = locomo.build_landed(build.home, build.model, pipeline, landing_writer(build), raw_rate=False)
    turns, path_seconds = figures["turns"], figures["transcript_path_seconds"]
    return {
        "dataset": build.dataset,
        "chunking": build.chunking,
        "settings": CHUNKINGS[build.chunking],
        "turns": turns,
        "turns_per_second_end_to_end": round(turns / path_seconds, 1) if path_seconds else None,
        "turns_per_second_whole_run": round(turns / figures["run_seconds_all_layers"], 1),
        "texts_embedded_per_turn": round(figures["embedded_texts"] / turns, 2) if turns else None,
        "index_bytes": folder_bytes(build.home / "lancedb"),
        "chunks_bytes": folder_bytes(build.home / "lake" / "transcripts" / "chunks"),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),  # Linux: KB
        "graph_seconds_per_1000_turns": graph_seconds_per_1000_turns(figures["step_seconds"], turns),
        **figures,
    }


def graph_seconds_per_1000_turns(step_seconds: dict[str, float], turns: int) -> float | None:
    """The graph step's seconds per 1,000 turns (None with no turns); a run without the step is an error, so a
    renamed step cannot drop out of the figure unseen."""
    if GRAPH_STEP not in step_seconds:
        raise RuntimeError(f"step {GRAPH_STEP!r} not in the run; steps were {sorted(step_seconds)}")
    return round(step_seconds[GRAPH_STEP] / turns * 1000, 2) if turns else None


def selection_of(dataset: str, locomo_limit: int | None, personas: Sequence[int] | None) -> tuple[int, ...]:
    """What of `dataset` a build lands: LoCoMo's first `locomo_limit` samples (all if none), RealMem's personas
    (all if none). The personas never limit LoCoMo."""
    if dataset == "locomo":
        return (locomo_limit,) if locomo_limit else ()
    return tuple(personas or ())


def ratios(today: dict[str, Any], budget: dict[str, Any]) -> dict[str, float | None]:
    """The default chunking's figures over today's."""
    keys = ("turns_per_second_end_to_end", "turns_per_second_whole_run", "texts_embedded_per_turn", "index_bytes",
            "peak_rss_mb", "chunks")
    return {k: round(budget[k] / today[k], 3) if today.get(k) and budget.get(k) is not None else None for k in keys}


def run_ingest(
    locomo_data: Path,
    realmem_data: Path,
    out: Path | None,
    *,
    datasets: Sequence[str] = ("locomo", "realmem"),
    locomo_limit: int | None = None,
    personas: Sequence[int] | None = None,
    model: str = "",
    home: Path | None = None,
    log: Callable[[str], None] = print,
    pipeline: HomePipeline,
) -> dict[str, Any]:
    """Build every (dataset, chunking) home, one spawned process each, and write `out` as JSON."""
    unknown = sorted(set(datasets) - {"locomo", "realmem"})
    if unknown:
        raise ValueError(f"unknown dataset {', '.join(unknown)}: locomo or realmem")
    results: dict[str, Any] = {}
    before = machine()  # the load average as the builds start
    context = multiprocessing.get_context("spawn")  # no torch threads or caches forked from this process
    with tempfile.TemporaryDirectory(prefix="memlake-ingest-") as tmp:
        root = home or Path(tmp)
        for dataset in datasets:
            data = locomo_data if dataset == "locomo" else realmem_data
            selection = selection_of(dataset, locomo_limit, personas)
            built = {}
            for chunking in CHUNKINGS:
                build = Build(dataset, data, selection, chunking, root / f"{dataset}-{chunking}", model)
                with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
                    built[chunking] = pool.submit(build_home, build, pipeline).result()
                log(f"{dataset} {chunking}: {built[chunking]['turns_per_second_end_to_end']} turns/s, "
                    f"{built[chunking]['texts_embedded_per_turn']} texts/turn")
            results[dataset] = {**built, "budget_over_today": ratios(built["today"], built["budget"])}
    report = {
        "benchmark": "ingest",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": before,
        "load_average_1m_after": machine()["load_average_1m"],
        "selection": {"locomo_samples": locomo_limit, "realmem_personas": list(personas or [])},
        **results,
    }
    report["markdown"] = render_markdown(report)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2, default=str) + "\n")
    return report


def render_markdown(report: dict[str, Any]) -> str:
    """The Markdown section of docs/benchmarks.md (kept in ingest.json, as benchmarks beside locomo do)."""
    machine_ = report["machine"]
    lines = ["## Ingest (LoCoMo, RealMem)", "",
             f"Run: `memlake bench ingest`, {report['date']}, {machine_.get('cores')} cores; 1-minute load "
             f"{machine_.get('load_average_1m')} at the start, {report['load_average_1m_after']} at the end (above 2 "
             "the machine was shared and every rate is low). Turns a second end to end: landing to a searchable "
             "chunk index. Each build is a fresh process and home (no embedding cache).", "",
             markdown_table(
                 ["data", "chunking", "turns", "turns/s end to end", "turns/s whole run", "texts embedded per turn",
                  "index MB", "peak RSS MB", "graph s per 1,000 turns"],
                 [[dataset, chunking, row["turns"], row["turns_per_second_end_to_end"],
                   row["turns_per_second_whole_run"], row["texts_embedded_per_turn"],
                   round(row["index_bytes"] / 1e6, 1), row["peak_rss_mb"], row.get("graph_seconds_per_1000_turns")]
                  for dataset in ("locomo", "realmem") for chunking in CHUNKINGS
                  if (row := report.get(dataset, {}).get(chunking))])]
    lines += ["", "`today`: a key per sentence of every turn and every window's and turn's text embedded "
              "(`chunk_long_turn_keys = 0`, `chunk_pool_windows = false`, `chunk_pool_turns = false`); `own_turns`: "
              "the default but every turn's own text embedded (`chunk_pool_turns = false`, the default until "
              "2026-11-26); `budget`: the default (long turns get at most `chunk_long_turn_keys` passage keys, which "
              "embed at most `chunk_long_turn_tokens` word pieces in all, a window's vector is its turns' mean, a "
              "turn with sentence keys the mean of its sentences'); `fast`: "
              "the default with `chunk_span_sentences` (a sentence's vector read from its turn's model pass). "
              "Graph s per 1,000 turns: the graph step's seconds (names and relations read from every person's "
              "turn, with episodes' and facts', resolved and written) over the turns, in thousands."]
    return "\n".join(lines + [""])
