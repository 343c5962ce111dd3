"""Ingest throughput with days built at once (`run_workers`): the same LoCoMo conversations built into a fresh home
with 1 worker, then with 2, each build in a fresh spawned process (its own model load, no cache carried over).

Per build: turns and conversations a second over the whole run (landing to every layer and index), the wall and
CPU seconds of the build (CPU: this process and the day runs' processes, user + system), and each step's seconds
per 1,000 turns. A step that ran in several day runs has its seconds summed over them (the work it did, not the
wall time it took). The machine's 1-minute load before and after each build says how shared it was.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import resource
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from memlake.lake import Lake
from memlake.schemas import TURNS
from memlake.settings import load_settings, write_home_setting
from memlake_bench import locomo
from memlake_bench.markdown import markdown_table
from memlake_bench.pipeline import HomePipeline


def _cpu_seconds() -> float:
    """User + system CPU of this process and of its children that have ended."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def build_with_workers(
    samples: Sequence[dict[str, Any]], home: Path, model: str, workers: int, pipeline: HomePipeline
) -> dict[str, Any]:
    """Build one home with `workers` (in the process that runs it): throughput, wall and CPU, step seconds."""
    home.mkdir(parents=True, exist_ok=True)
    write_home_setting(home, "run_workers", str(workers))
    load_before = round(os.getloadavg()[0], 2)
    cpu_before, started = _cpu_seconds(), time.perf_counter()
    figures = locomo.build(samples, home, model, pipeline, raw_rate=False)
    wall, cpu = time.perf_counter() - started, _cpu_seconds() - cpu_before
    turns = Lake.of(load_settings(home)).read(TURNS)
    conversations = turns.select("agent_id", "conversation_id").n_unique()
    per_thousand = 1000 / turns.height if turns.height else 0.0
    return {
        "workers": workers,
        "turns": turns.height,
        "conversations": conversations,
        "days": turns["day"].n_unique(),
        "wall_seconds": round(wall, 1),  # with the model load before the run (`locomo.build_landed`)
        "run_seconds": figures["run_seconds_all_layers"],
        "cpu_seconds": round(cpu, 1),
        "turns_per_second": round(turns.height / figures["run_seconds_all_layers"], 1),
        "conversations_per_second": round(conversations / figures["run_seconds_all_layers"], 3),
        "step_seconds_per_1000_turns": {step: round(seconds * per_thousand, 2)
                                        for step, seconds in figures["step_seconds"].items()},
        "load_average_1m_before": load_before,
        "load_average_1m_after": round(os.getloadavg()[0], 2),
    }


def ingest_with_workers(
    data: Path, root: Path, *, samples: int, workers: Sequence[int], model: str, pipeline: HomePipeline,
    log: Callable[[str], None] = print,
) -> list[dict[str, Any]]:
    """The first `samples` LoCoMo conversations built once per worker count, each in a fresh spawned process."""
    conversations = json.loads(data.read_bytes())[:samples]
    context = multiprocessing.get_context("spawn")  # no model, torch threads or table caches carried over
    results = []
    for count in workers:
        with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
            built = pool.submit(build_with_workers, conversations, root / f"ingest-{count}-workers", model, count,
                                pipeline).result()
        log(f"ingest with {count} worker(s): {built['turns_per_second']} turns/s, {built['run_seconds']} s run, "
            f"{built['cpu_seconds']} CPU s (load {built['load_average_1m_before']} -> "
            f"{built['load_average_1m_after']})")
        results.append(built)
    return results


def render_markdown(report: dict[str, Any]) -> str:
    """The ingest half of `memlake bench scale` for docs/benchmarks.md: a column per worker count."""
    builds = report.get("ingest") or []
    if not builds:
        return ""
    machine = report["machine"]
    rows = [[key, *(build[key] for build in builds)] for key in (
        "turns", "conversations", "days", "run_seconds", "cpu_seconds", "turns_per_second",
        "conversations_per_second", "load_average_1m_before", "load_average_1m_after")]
    steps = sorted({step for build in builds for step in build["step_seconds_per_1000_turns"]},
                   key=lambda step: -builds[0]["step_seconds_per_1000_turns"].get(step, 0.0))
    step_rows = [[step, *(build["step_seconds_per_1000_turns"].get(step, "-") for build in builds)] for step in steps]
    columns = ["measure", *(f"{build['workers']} worker(s)" for build in builds)]
    return "\n".join([
        "## Ingest with days built at once (`memlake bench scale --ingest-samples`)",
        "",
        f"Run {report['date']} on {machine.get('cpu')}, {machine.get('cores')} cores, {machine.get('memory_gb')} GB; "
        "each build a fresh spawned process and home (no embedding cache), `nice -n 5`. The machine was shared: "
        "read the 1-minute load beside each build (above the core count every timing is inflated, and a build "
        "with more processes takes a larger share of a contended machine).",
        "",
        markdown_table(columns, rows),
        "",
        "Step seconds per 1,000 turns (a step of several day runs: summed over them; with 2 workers the chunks step "
        "embeds its rows and the chunk index step only commits):",
        "",
        markdown_table(["step", *columns[1:]], step_rows),
        "",
    ])
