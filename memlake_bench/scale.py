"""Search at scale over synthetic chunks: latency p50/p95 and the reader's peak memory; and, when asked, ingest
throughput on LoCoMo with 1 and 2 workers (`memlake_bench.scale_ingest`) and the reader's search p50/p95 with the
lake and indexes on an object store vs local disk (`memlake_bench.scale_storage`).

Cases: `single:ROWS` (one agent) and `agents:AGENTS:ROWS` (rows spread evenly).
Rows are synthetic: clustered unit vectors (384-d, like the default model) and
Zipf-distributed pseudo-words, one session chunk per 20 turn chunks, written
straight to a LanceDB chunk table with the same schema and indexes the
pipeline builds (full text, bitmap on agent_id and kind, BTree on the key, IVF-flat above ANN_MIN_ROWS).
No embedding model is involved: queries carry their vector.

The reader runs in a fresh subprocess (`python -m memlake_bench.scale reader`),
so its peak RSS is the memory a search process needs, snapshots included (an
agent's rows held in memory by a long-lived reader, loaded on its first search:
the load times are reported apart). It also reports the recall@10 of the ANN
index against an exact scan, and the time of an exact scan in memory.
"""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from memlake.chunks import chunk_id
from memlake.schemas import CHUNK_INDEX, CHUNKS
from memlake.search import CHUNK_SPEC, Searcher, SearchParams
from memlake.settings import Settings
from memlake.vectors import Filters, VectorStore, index_schema
from memlake_bench.machine import machine, python_speed_ms
from memlake_bench.pipeline import HomePipeline
from memlake_bench.scale_ingest import ingest_with_workers
from memlake_bench.scale_storage import latency_by_store

DIM = 384
BATCH = 100_000
SESSION_EVERY = 20
VOCAB = 20_000
CENTERS = 2_000


def _words(rng: np.random.Generator) -> list[str]:
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "da", "fe", "gu", "ha", "ji"]
    picks = rng.integers(0, len(syllables), size=(VOCAB, 3))
    return [f"{''.join(syllables[i] for i in row)}{n}" for n, row in enumerate(picks)]


def synthetic_batch(
    rng: np.random.Generator, start: int, count: int, agents: int, total: int, words: list[str], centers: np.ndarray
) -> pa.Table:
    """Rows `start .. start+count` of a synthetic chunk table spread over `agents` agents."""
    per_agent = max(1, total // agents)
    index = np.arange(start, start + count)
    agent = np.minimum(index // per_agent, agents - 1)
    position = index - agent * per_agent
    conversation = position // SESSION_EVERY
    is_session = (position % SESSION_EVERY) == SESSION_EVERY - 1
    cluster = rng.integers(0, CENTERS, size=count)
    vectors = centers[cluster] + 0.35 * rng.standard_normal((count, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ranks = np.minimum(rng.zipf(1.3, size=(count, 18)) - 1, VOCAB - 1)
    texts = [" ".join(words[w] for w in row) for row in ranks]
    base = datetime(2024, 1, 1, tzinfo=UTC)
    rows = {
        "chunk_id": [
            chunk_id(f"agent{a}", f"c{c}", "session" if s else "turn", int(p), int(p))
            for a, c, s, p in zip(agent, conversation, is_session, position, strict=True)
        ],
        "agent_id": [f"agent{a}" for a in agent],
        "conversation_id": [f"c{c}" for c in conversation],
        "kind": np.where(is_session, "session", "turn").tolist(),
        "message_ids": [[f"m{p}"] for p in position],
        "turn_start": position.astype(np.int32),
        "turn_end": position.astype(np.int32),
        "role": np.where(position % 2 == 0, "user", "assistant").tolist(),
        "speaker": [None] * count,
        "created_at": [base + timedelta(minutes=int(p)) for p in position],
        "text": texts,
        "embed_text": texts,
        "token_count": np.full(count, 18, dtype=np.int32),
        "text_sha256": [""] * count,
        "importance": [None] * count,
        "day": ["2024-01-01"] * count,
        "embedder": ["synthetic"] * count,
    }
    schema = index_schema(CHUNKS.schema, DIM).with_metadata({"memlake.embedder": "synthetic"})
    columns = []
    for f in schema:
        if f.name == "vector":
            columns.append(pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1), pa.float32()), DIM))
        else:
            columns.append(pa.array(rows[f.name], type=f.type))
    return pa.Table.from_arrays(columns, schema=schema)


def build_case(
    path: Path, agents: int, total: int, seed: int = 7, log: Callable[[str], None] = print
) -> dict[str, Any]:
    """Write a synthetic chunk index of `total` rows over `agents` agents; time the writes and indexes."""
    rng = np.random.default_rng(seed)
    words = _words(rng)
    centers = rng.standard_normal((CENTERS, DIM)).astype(np.float32)
    store = VectorStore(path)
    schema = index_schema(CHUNKS.schema, DIM).with_metadata({"memlake.embedder": "synthetic"})
    table = store.db.create_table(CHUNK_INDEX, schema=schema, mode="overwrite")
    started = time.perf_counter()
    for start in range(0, total, BATCH):
        table.add(synthetic_batch(rng, start, min(BATCH, total - start), agents, total, words, centers))
        log(f"  wrote {min(start + BATCH, total):,} rows")
    write_seconds = time.perf_counter() - started
    started = time.perf_counter()
    store.ensure_indexes(CHUNK_INDEX)
    index_seconds = time.perf_counter() - started
    indexes = sorted(i.index_type for i in store.open(CHUNK_INDEX).list_indices())
    return {"rows": total, "agents": agents, "write_seconds": round(write_seconds, 1),
            "index_seconds": round(index_seconds, 1), "indexes": indexes, "words": words[:2000]}


def queries_for(path: Path, agents: int, n: int, words: list[str], seed: int = 11) -> list[dict[str, Any]]:
    """Queries near stored rows: a stored vector plus noise, and three words of that row's text."""
    rng = np.random.default_rng(seed)
    table = VectorStore(path).open(CHUNK_INDEX)
    out = []
    for _ in range(n):
        agent = f"agent{int(rng.integers(0, agents))}"
        sample = table.search().where(f"agent_id = '{agent}'").select(["text", "vector"]).limit(50).to_arrow()
        row = int(rng.integers(0, sample.num_rows))
        vector = np.asarray(sample.column("vector")[row].as_py(), dtype=np.float32)
        vector = vector + 0.3 * rng.standard_normal(DIM).astype(np.float32) / np.sqrt(DIM)
        text_words = sample.column("text")[row].as_py().split()
        picked = [text_words[int(i)] for i in rng.integers(0, len(text_words), size=3)]
        out.append({"agent_id": agent, "vector": (vector / np.linalg.norm(vector)).tolist(), "text": " ".join(picked)})
    return out


def reader(path: Path, queries_file: Path) -> dict[str, Any]:
    """Run the queries as a fresh search process would; latencies, ANN recall and peak RSS."""
    queries = json.loads(queries_file.read_text())
    settings = Settings()
    store = VectorStore(path, snapshot_rows=settings.search_snapshot_rows)
    searcher = Searcher(store, None)
    params = SearchParams.from_settings(settings, k=10)
    rss_open = _peak_rss_kb()
    for q in queries[:5]:  # warm-up: open the table, load index metadata (and these agents' snapshots)
        searcher.search(CHUNK_SPEC, q["text"], q["agent_id"], params, query_vector=np.asarray(q["vector"]))
    timings: dict[str, list[float]] = {
        "hybrid": [], "hybrid_again": [], "vector_auto": [], "vector_ann": [], "vector_exact": [],
        "vector_exact_memory": [], "vector_ivf_memory": [], "full_text": []
    }
    loads: dict[str, float] = {}
    overlap, overlap_auto, overlap_memory, overlap_ivf = [], [], [], []
    deep: dict[str, list[float]] = {"ann": [], "ivf_memory": []}  # recall of 100-deep lists, as fusion reads
    turn_only = Filters(kinds=("turn",))
    speed_before = python_speed_ms()
    for q in queries:  # first search of each agent includes loading its snapshot (unless warmed up above)
        started = time.perf_counter()
        searcher.search(CHUNK_SPEC, q["text"], q["agent_id"], params, query_vector=np.asarray(q["vector"]))
        timings["hybrid"].append(time.perf_counter() - started)
    for q in queries:  # the same searches again: every agent's snapshot is loaded now (if it fits)
        started = time.perf_counter()
        searcher.search(CHUNK_SPEC, q["text"], q["agent_id"], params, query_vector=np.asarray(q["vector"]))
        timings["hybrid_again"].append(time.perf_counter() - started)
    # the same fixed Python loop timed before and after the two hybrid passes: the machine's speed meanwhile
    speeds = (speed_before, python_speed_ms())
    for q in queries:  # the parts, and what the ANN index misses
        vector = np.asarray(q["vector"], dtype=np.float32)
        snapshot = store.snapshot(CHUNK_INDEX, q["agent_id"])
        if snapshot is not None:
            loads[q["agent_id"]] = snapshot.load_seconds
            keep = snapshot.mask(turn_only)
            started = time.perf_counter()  # the exact scan a snapshot does for an agent below ANN_MIN_ROWS
            nearest, _ = snapshot.nearest(vector, 10, keep)
            timings["vector_exact_memory"].append(time.perf_counter() - started)
            if snapshot.ivf_centroids is not None:  # what search uses above ANN_MIN_ROWS
                started = time.perf_counter()
                listed, _ = snapshot.search_ivf(vector, 10, keep)
                timings["vector_ivf_memory"].append(time.perf_counter() - started)
                truth_100 = set(snapshot.nearest(vector, 100, keep)[0].tolist())
                for name, found in (("ivf_memory", snapshot.search_ivf(vector, 100, keep)[0]),
                                    ("ann", snapshot.search_ann(vector, 100, turn_only)[0])):
                    deep[name].append(len(truth_100 & set(found.tolist())) / 100)
        started = time.perf_counter()  # what search uses: ANN only for an agent with ANN_MIN_ROWS rows
        auto = store.search_vector(CHUNK_INDEX, q["agent_id"], vector, 10, turn_only, columns=["chunk_id"])
        timings["vector_auto"].append(time.perf_counter() - started)
        started = time.perf_counter()
        ann = store.search_vector(CHUNK_INDEX, q["agent_id"], vector, 10, turn_only, columns=["chunk_id"], exact=False)
        timings["vector_ann"].append(time.perf_counter() - started)
        started = time.perf_counter()
        exact = store.search_vector(CHUNK_INDEX, q["agent_id"], vector, 10, turn_only, columns=["chunk_id"], exact=True)
        timings["vector_exact"].append(time.perf_counter() - started)
        started = time.perf_counter()
        store.search_text(CHUNK_INDEX, q["agent_id"], q["text"], 10, turn_only, columns=["chunk_id"])
        timings["full_text"].append(time.perf_counter() - started)
        truth = set(exact["chunk_id"].to_list())
        overlap.append(len(truth & set(ann["chunk_id"].to_list())) / max(1, len(truth)))
        overlap_auto.append(len(truth & set(auto["chunk_id"].to_list())) / max(1, len(truth)))
        if snapshot is not None:
            in_memory = set(snapshot.rows.column("chunk_id").take(nearest).to_pylist())
            overlap_memory.append(len(truth & in_memory) / max(1, len(truth)))
            if snapshot.ivf_centroids is not None:
                by_ivf = set(snapshot.rows.column("chunk_id").take(listed).to_pylist())
                overlap_ivf.append(len(truth & by_ivf) / max(1, len(truth)))
    ms = 1000.0
    out: dict[str, Any] = {"queries": len(queries), "k": 10}
    for name, values in timings.items():
        if values:
            out[f"{name}_ms_p50"] = round(float(np.percentile(values, 50)) * ms, 2)
            out[f"{name}_ms_p95"] = round(float(np.percentile(values, 95)) * ms, 2)
    out["python_speed_ms"] = list(speeds)
    out["ann_recall@10_vs_exact"] = round(float(np.mean(overlap)), 4)  # ANN forced, even for small agents
    out["auto_recall@10_vs_exact"] = round(float(np.mean(overlap_auto)), 4)
    if overlap_memory:  # the in-memory exact scan against LanceDB's exact scan: 1.0 unless ties differ
        out["exact_memory_recall@10_vs_exact"] = round(float(np.mean(overlap_memory)), 4)
    if overlap_ivf:
        out["ivf_memory_recall@10_vs_exact"] = round(float(np.mean(overlap_ivf)), 4)
        out["ann_recall@100_vs_exact"] = round(float(np.mean(deep["ann"])), 4)
        out["ivf_memory_recall@100_vs_exact"] = round(float(np.mean(deep["ivf_memory"])), 4)
    out["agent_uses_ann"] = store.use_ann(CHUNK_INDEX, queries[0]["agent_id"])
    out["snapshot_rows_setting"] = store.snapshot_rows
    out["snapshot_agents"] = len(loads)  # agents searched whose rows fit in the reader's snapshots
    if loads:
        out["snapshot_load_ms_p50"] = round(float(np.percentile(list(loads.values()), 50)) * ms, 2)
        out["snapshot_load_ms_max"] = round(max(loads.values()) * ms, 2)
    out["snapshot_rows_held"] = store.snapshot_rows_held()
    out["peak_rss_mb"] = round(_peak_rss_kb() / 1024, 1)
    out["rss_after_imports_mb"] = round(rss_open / 1024, 1)
    return out


def _peak_rss_kb() -> int:
    """This process's peak resident memory (VmHWM): unlike ru_maxrss it does not carry the
    parent's peak across fork/exec."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


@dataclass(frozen=True)
class IngestCase:
    """LoCoMo's first `samples` conversations, built once per count of `workers` (`run_workers`)."""

    data: Path
    samples: int
    workers: tuple[int, ...]
    model: str
    pipeline: HomePipeline


@dataclass(frozen=True)
class StorageCase:
    """LoCoMo's first `samples` conversations built on local disk and on a loopback object store; `queries`
    searched on each."""

    data: Path
    samples: int
    model: str
    pipeline: HomePipeline
    queries: int


def parse_cases(sizes: str) -> list[tuple[str, int, int]]:
    cases = []
    for item in filter(None, (item.strip() for item in sizes.split(","))):  # "" = no synthetic case
        parts = item.split(":")
        if parts[0] == "single":
            cases.append((item.strip(), 1, int(parts[1])))
        elif parts[0] == "agents":
            cases.append((item.strip(), int(parts[1]), int(parts[2])))
        else:
            raise ValueError(f"bad case {item!r}: single:ROWS or agents:AGENTS:ROWS")
    return cases


def run_scale(
    out: Path | None,
    *,
    sizes: str = "single:100000,agents:1000:1000000",
    queries: int = 200,
    home: Path | None = None,
    log: Callable[[str], None] = print,
    ingest: IngestCase | None = None,
    storage: StorageCase | None = None,
) -> dict[str, Any]:
    """Every case: build, then measure in a fresh reader subprocess; with `ingest`, LoCoMo's ingest throughput with
    each worker count first (`memlake_bench.scale_ingest`); with `storage`, the reader's search on an object store
    vs local disk (`memlake_bench.scale_storage`). Writes `out` as JSON."""
    results = []
    ingested: list[dict[str, Any]] = []
    stored: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="memlake-scale-") as tmp:
        root = home or Path(tmp)
        if ingest is not None:
            ingested = ingest_with_workers(ingest.data, root, samples=ingest.samples, workers=ingest.workers,
                                           model=ingest.model, pipeline=ingest.pipeline, log=log)
        if storage is not None:
            stored = latency_by_store(storage.data, root, samples=storage.samples, model=storage.model,
                                      pipeline=storage.pipeline, queries=storage.queries, log=log)
        for label, agents, total in parse_cases(sizes):
            path = root / label.replace(":", "_")
            log(f"scale {label}: building {total:,} rows over {agents} agent(s)")
            built = build_case(path, agents, total, log=log)
            words = built.pop("words")
            qfile = path / "queries.json"
            qfile.write_text(json.dumps(queries_for(path, agents, queries, words)))
            proc = subprocess.run(
                [sys.executable, "-m", "memlake_bench.scale", "reader", str(path), str(qfile)],
                capture_output=True, text=True, check=True,
            )
            measured = json.loads(proc.stdout.strip().splitlines()[-1])
            results.append({"case": label, **built, **measured})
            log(f"  {results[-1]}")
            shutil.rmtree(path, ignore_errors=True)
    report = {
        "benchmark": "scale",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "note": "synthetic clustered 384-d vectors and Zipf pseudo-words; latency excludes the query embedding",
        "cases": results,
        "ingest": ingested,
        "storage": stored,
    }
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2) + "\n")
    return report


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "reader":
        print(json.dumps(reader(Path(sys.argv[2]), Path(sys.argv[3]))))
    else:
        raise SystemExit("usage: python -m memlake_bench.scale reader PATH QUERIES")
