"""`memlake bench serve`: search and context latency through `memlake serve` on loopback, at 1, 8 and 32
concurrent clients, with the error count, beside the same calls made in process (the ratio is what HTTP, the
service and its one lock around `Memory` add).

The server is a `memlake serve` process of its own on a free port, so the clients' threads do not share its
interpreter. Queries are the first words of the home's user turns, every agent's in turn.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx2
import polars as pl

from memlake.api import Memory
from memlake.bench.machine import machine

CLIENTS = (1, 8, 32)
QUERY_WORDS = 8


def bench_queries(memory: Memory, per_agent: int = 25) -> list[tuple[str, str]]:
    """(agent, query) pairs: the first words of each agent's user turns, the agents taken in turn."""
    per: list[list[tuple[str, str]]] = []
    for agent in memory.agents():
        turns = memory.turns(agent).filter(pl.col("role") == "user")["content"].to_list()
        words = [" ".join(text.split()[:QUERY_WORDS]) for text in turns if len(text.split()) >= 3]
        per.append([(agent, query) for query in words[:per_agent]])
    mixed = [pair for group in zip(*per, strict=False) for pair in group] if per else []
    if not mixed:
        raise ValueError("the home has no user turns to ask about: run `memlake run` first")
    return mixed


def _percentiles(latencies_ms: list[float]) -> dict[str, float]:
    ordered = sorted(latencies_ms)
    return {"p50_ms": round(statistics.median(ordered), 2),
            "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 2), "n": len(ordered)}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(home: Path, env: dict[str, str] | None = None, *args: str) -> tuple[str, subprocess.Popen]:  # type: ignore[type-arg]
    """A `memlake serve` process on a free loopback port, once it answers: its URL and the process (its log,
    stdout and stderr together, on `process.stdout`)."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "pipelines.cli", "serve", "--home", str(home), "--port",
                                str(port), *args], env=env or dict(os.environ), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"memlake serve exited: {process.stdout.read().decode()[-3000:]}")  # type: ignore[union-attr]
        try:
            if httpx2.get(f"{url}/healthz", timeout=1).status_code == 200:
                return url, process
        except httpx2.HTTPError:
            time.sleep(0.3)
    process.kill()
    raise RuntimeError("memlake serve did not answer within 180 s")


def _over_http(url: str, token: str | None, kind: str, calls: list[tuple[str, str]], clients: int
               ) -> dict[str, Any]:
    """Every call once, by `clients` threads each with its own connection: latency of each, and the errors."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    slices = [calls[i::clients] for i in range(clients)]

    def client(mine: list[tuple[str, str]]) -> tuple[list[float], int]:
        latencies, errors = [], 0
        with httpx2.Client(base_url=url, headers=headers, timeout=120) as http:
            for agent, query in mine:
                started = time.perf_counter()
                if kind == "search":
                    response = http.get("/v1/memory/search", params={"q": query, "agent_id": agent})
                else:
                    response = http.post("/v1/memory/context", json={"query": query, "agent_id": agent})
                latencies.append((time.perf_counter() - started) * 1000)
                errors += response.status_code != 200
        return latencies, errors

    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(client, slices))
    elapsed = time.perf_counter() - started
    latencies = [ms for part, _ in results for ms in part]
    return {**_percentiles(latencies), "errors": sum(e for _, e in results),
            "requests_per_s": round(len(latencies) / elapsed, 1)}


def _in_process(memory: Memory, kind: str, calls: list[tuple[str, str]]) -> dict[str, Any]:
    call: Callable[[str, str], Any] = memory.search if kind == "search" else memory.context
    latencies = []
    for agent, query in calls:
        started = time.perf_counter()
        call(query, agent)
        latencies.append((time.perf_counter() - started) * 1000)
    return _percentiles(latencies)


def run_serve_bench(home: Path, out: Path, *, token: str | None = None, rounds: int = 2,
                    log: Callable[[str], None] = print) -> dict[str, Any]:
    """The benchmark over an existing home; writes `out` (JSON) and returns the report."""
    memory = Memory(home)
    queries = bench_queries(memory)
    calls = queries * rounds
    for agent, query in queries[:3]:  # warm: the model, the indexes, the fact fold
        memory.search(query, agent)
        memory.context(query, agent)
    report: dict[str, Any] = {"machine": machine(), "home": str(home), "queries": len(queries), "calls": len(calls),
                              "in_process": {kind: _in_process(memory, kind, calls) for kind in ("search", "context")},
                              "http": {}}
    log(f"in process: {report['in_process']}")
    url, process = start_server(home)
    try:
        for kind in ("search", "context"):
            _over_http(url, token, kind, queries[:8], 4)  # warm the server's connections and caches
            for clients in CLIENTS:
                result = _over_http(url, token, kind, calls, clients)
                result["ratio_p50_to_in_process"] = round(result["p50_ms"] / report["in_process"][kind]["p50_ms"], 2)
                report["http"][f"{kind}@{clients}"] = result
                log(f"{kind} over HTTP, {clients} clients: {result}")
    finally:
        process.terminate()
        process.wait(timeout=30)
    report["load_average_1m_after"] = round(os.getloadavg()[0], 2)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    return report
