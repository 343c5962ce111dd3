"""The reader's search latency with the home's lake and indexes on an object store vs on local disk: the same
LoCoMo conversations built into two homes, one with the home's own folders, one with `storage_uri` on an
S3-compatible server (`moto_server`) on loopback; then the same questions searched through `Memory` in a fresh
spawned process per home (its own table opens, no cache carried over).

Loopback, not a network: the object-store figures carry the S3 path's own cost (HTTP requests to a local server,
no page cache of the files), not a real store's round trips, which add a few to tens of milliseconds per request.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from memlake.lake import Lake
from memlake.schemas import CHUNKS, TURNS
from memlake.settings import load_settings, write_home_setting
from memlake_bench import locomo
from memlake_bench.loopback_s3 import bucket_filesystem, store_environment, throwaway_s3
from memlake_bench.markdown import markdown_table
from memlake_bench.pipeline import HomePipeline

BUCKET = "memlake-bench"
STORES = ("local disk", "object store (moto on loopback)")


def search_latency(home: Path, conversations: Sequence[dict[str, Any]], environment: Mapping[str, str],
                   queries: int) -> dict[str, Any]:
    """In a fresh process: the first search (tables opened, snapshots loaded), then `locomo.latency` over the
    conversations' questions (search alone, the query's vector embedded beforehand, and with its embedding)."""
    from memlake.api import Memory  # deferred: in the spawned process only
    from memlake.embedding import configured_embedder

    os.environ.update(environment)
    settings = load_settings(home)
    memory, embedder = Memory(settings=settings), configured_embedder(settings)
    questions = locomo.questions(conversations)
    first = questions[0]
    started = time.perf_counter()
    memory.search(first.question, first.agent_id, k=10, as_of=first.as_of, embedder=embedder)
    first_ms = (time.perf_counter() - started) * 1000
    return {"first_search_ms": round(first_ms, 1), **locomo.latency(memory, embedder, questions, n=queries)}


def latency_by_store(
    data: Path, root: Path, *, samples: int, model: str, pipeline: HomePipeline, queries: int = 200,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """LoCoMo's first `samples` conversations built on local disk and on the loopback object store; each home's
    rows (turns, chunks) and its search p50/p95 in a fresh process."""
    conversations = json.loads(data.read_bytes())[:samples]
    context = multiprocessing.get_context("spawn")
    measured: dict[str, Any] = {}
    with throwaway_s3() as endpoint:
        bucket_filesystem(endpoint).create_dir(BUCKET)
        environment = store_environment(endpoint)
        os.environ.update(environment)  # the build's processes (this one) reach the store too
        homes = {STORES[0]: root / "storage-local", STORES[1]: root / "storage-s3"}
        (homes[STORES[1]]).mkdir(parents=True, exist_ok=True)
        write_home_setting(homes[STORES[1]], "storage_uri", f"s3://{BUCKET}/home")
        for store, home in homes.items():
            started = time.perf_counter()
            locomo.build(conversations, home, model, pipeline, raw_rate=False)
            lake = Lake.of(load_settings(home))
            built = {"build_seconds": round(time.perf_counter() - started, 1), "turns": lake.read(TURNS).height,
                     "chunks": lake.read(CHUNKS).height}
            with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
                load_before = round(os.getloadavg()[0], 2)
                latency = pool.submit(search_latency, home, conversations, environment, queries).result()
            measured[store] = {**built, **latency, "load_average_1m_before": load_before,
                               "load_average_1m_after": round(os.getloadavg()[0], 2)}
            log(f"search on {store}: p50 {latency['search_ms_p50']} ms, p95 {latency['search_ms_p95']} ms "
                f"(first search {latency['first_search_ms']} ms; load {load_before})")
        for name in environment:
            os.environ.pop(name, None)
    return {"conversations": samples, "model": model or "the packaged model", "stores": measured}


def render_markdown(report: dict[str, Any]) -> str:
    """The storage half of `memlake bench scale` for docs/benchmarks.md: a column per store."""
    storage = report.get("storage") or {}
    if not storage:
        return ""
    stores = storage["stores"]
    machine = report["machine"]
    keys = ("turns", "chunks", "build_seconds", "first_search_ms", "queries", "search_ms_p50", "search_ms_p95",
            "with_embedding_ms_p50", "with_embedding_ms_p95", "python_speed_ms", "load_average_1m_before",
            "load_average_1m_after")
    rows = [[key, *(_cell(figures.get(key, "-")) for figures in stores.values())] for key in keys]
    return "\n".join([
        "## Reader search: object store vs local disk (`memlake bench scale --storage-samples`)",
        "",
        f"Run {report['date']} on {machine.get('cpu')}, {machine.get('cores')} cores, {machine.get('memory_gb')} "
        f"GB. LoCoMo's first {storage['conversations']} conversation(s) built into two homes with the embedding "
        f"model {storage['model']!r}: one on local disk, one with `storage_uri` on an S3-compatible server "
        "(`moto_server`) **on loopback, not a real network**: its figures are the object-store path's own cost "
        "(HTTP requests, no page cache of the files), and a real store adds its round trips on top. Each home's "
        "questions searched in a fresh process through `Memory.search` (k=10): `search_ms` with the query's "
        "vector embedded beforehand, `with_embedding_ms` end to end; `first_search_ms` opens the tables. The "
        "machine was shared: read the 1-minute load beside each.",
        "",
        markdown_table(["measure", *stores], rows),
        "",
    ])


def _cell(value: Any) -> Any:
    return " → ".join(str(v) for v in value) if isinstance(value, list) else value
