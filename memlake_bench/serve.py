"""`memlake bench serve`: search and context latency through `memlake serve` on loopback, at 1, 8 and 32
concurrent clients, with the error count, beside the same calls made in process (the ratio is what HTTP and the
service add), while a pipeline run materializes in a second process.

The server is a `memlake serve` process of its own on a free port, so the clients' threads do not share its
interpreter. Queries are the LoCoMo questions of the home's agents (a home of other chats: the first words of
its user turns), each asked once: every kind and client count gets its own slice of them, so no answer comes
from a cache an earlier run filled. The pipeline run is `memlake run` over a copy of the home's landing files in
a fresh home (every layer built again from nothing: parsing, chunking, embedding, distilling, indexing), started
again whenever it ends, for as long as the clients ask; the served home is never written.

Beside them, the floor: a server of the same uvicorn workers whose one route embeds the question with the
home's embedder and nothing else, asked the search questions at the same client counts under the same load.
A search embeds its question first, so no search through HTTP can be faster than that route on this machine.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
import polars as pl

from memlake.api import Memory
from memlake.cpu import one_blas_thread
from memlake.embedding import configured_embedder
from memlake.settings import load_settings
from memlake_bench.locomo import questions
from memlake_bench.machine import machine, python_speed_ms

CLIENTS = (1, 8, 32)
KINDS = ("search", "context")
FLOOR = "embedding alone"  # the floor's calls: the question's embedding, nothing else, through the same HTTP stack
QUERY_WORDS = 8
TARGETS_MS = {"search": 30.0, "context": 50.0}  # p95 at 8 clients on the LoCoMo home (issue 26)
TARGET_CLIENTS = 8
# Warm-up: every agent is asked this (no measured call asks it), this many times per worker process: a request
# reaches whichever worker accepts it, and an agent's first read in a worker loads its snapshot and facts
# (30-160 ms; the first context call ~1 s, the lake's tables), which the measured calls should not pay.
WARM_QUESTION = "what did we talk about last time?"
WARM_ROUNDS = 4

Call = tuple[str, str]  # (agent, query)


def locomo_queries(memory: Memory, data: Path) -> list[Call]:
    """The LoCoMo questions of the agents the home has, each once, the agents taken in turn."""
    agents = set(memory.agents())
    per: dict[str, list[str]] = {}
    for q in questions(json.loads(data.read_bytes())):
        if q.agent_id in agents and q.question not in per.setdefault(q.agent_id, []):
            per[q.agent_id].append(q.question)
    return _in_turn(per)


def turn_queries(memory: Memory, per_agent: int = 200) -> list[Call]:
    """The first words of each agent's user turns, each once, the agents taken in turn."""
    per: dict[str, list[str]] = {}
    for agent in memory.agents():
        turns = memory.turns(agent).filter(pl.col("role") == "user")["content"].to_list()
        words = dict.fromkeys(" ".join(text.split()[:QUERY_WORDS]) for text in turns if len(text.split()) >= 3)
        per[agent] = list(words)[:per_agent]
    return _in_turn(per)


def _in_turn(per: dict[str, list[str]]) -> list[Call]:
    longest = max((len(qs) for qs in per.values()), default=0)
    return [(agent, qs[i]) for i in range(longest) for agent, qs in sorted(per.items()) if i < len(qs)]


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
    return _answering(port, "memlake serve", [sys.executable, "-m", "pipelines.cli", "serve", "--home", str(home),
                                              "--port", str(port), *args], env or dict(os.environ))


def floor_app() -> Any:
    """The floor's server: `GET /embed?q=` embeds the question with the embedder of the home `MEMLAKE_HOME`
    names, as a search does first, and answers one number; `/healthz` as the service's."""
    from fastapi import FastAPI  # deferred: only the floor's server process builds it

    one_blas_thread()  # as `memlake serve`'s workers
    embedder = configured_embedder(load_settings(Path(os.environ["MEMLAKE_HOME"])))
    if embedder is None:
        raise RuntimeError("the home has no embedding model: the floor measures a question's embedding")
    app = FastAPI()

    @app.get("/embed")
    async def embed(q: str) -> dict[str, float]:
        return {"first": float(embedder.embed([q])[0][0])}

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    return app


def start_floor_server(home: Path, workers: int) -> tuple[str, subprocess.Popen]:  # type: ignore[type-arg]
    """The floor's server (`floor_app`) on `workers` uvicorn worker processes, as `memlake serve` runs."""
    port = free_port()
    return _answering(port, "the floor's server", [
        sys.executable, "-m", "uvicorn", "memlake_bench.serve:floor_app", "--factory", "--host", "127.0.0.1", "--port",
        str(port), "--workers", str(workers), "--log-level", "warning"], {**os.environ, "MEMLAKE_HOME": str(home)})


def _answering(port: int, name: str, command: list[str], env: dict[str, str]) -> tuple[str, subprocess.Popen]:  # type: ignore[type-arg]
    """`command` started, once it answers `/healthz` on `port`: its URL and the process."""
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited: {process.stdout.read().decode()[-3000:]}")  # type: ignore[union-attr]
        try:
            if httpx2.get(f"{url}/healthz", timeout=1).status_code == 200:
                return url, process
        except httpx2.HTTPError:
            time.sleep(0.3)
    process.kill()
    raise RuntimeError(f"{name} did not answer within 180 s")


class PipelineLoad:
    """`memlake run` in a second process over a copy of the served home's landing files, in a fresh home each
    time, started again whenever it ends, until `stop`: the work a pipeline run puts on the machine, without
    writing the home that is served."""

    WHAT = ("memlake run (every layer, from nothing) over a copy of the served home's landing files in a fresh "
            "home, in a second process, started again whenever it ended; the served home is not written")

    def __init__(self, home: Path) -> None:
        self.home = home
        self.root = Path(tempfile.mkdtemp(prefix="memlake-bench-serve-pipeline-"))
        self.started = self.finished = self.failed = 0
        self.seconds: list[float] = []
        self._process: subprocess.Popen | None = None  # type: ignore[type-arg]
        self._began = 0.0
        self._stop = threading.Event()
        self._watch = threading.Thread(target=self._keep_running, name="bench-pipeline", daemon=True)

    def start(self) -> None:
        self._launch()
        self._watch.start()

    def _launch(self) -> None:
        target = self.root / f"home-{self.started}"
        target.mkdir()
        shutil.copytree(self.home / "landing", target / "landing")
        if (self.home / "memlake.toml").is_file():
            shutil.copy2(self.home / "memlake.toml", target / "memlake.toml")
        if (self.home / "models").is_dir():  # a model adapted to the home, named relative to it
            (target / "models").symlink_to(self.home / "models")
        env = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "MEMLAKE_HOME")}
        self._process = subprocess.Popen([sys.executable, "-m", "pipelines.cli", "run", "--home", str(target)],
                                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._began = time.monotonic()
        self.started += 1

    def _keep_running(self) -> None:
        while not self._stop.wait(0.5):
            process = self._process
            if process is not None and process.poll() is not None:
                self.seconds.append(round(time.monotonic() - self._began, 1))
                self.finished += 1
                self.failed += process.returncode != 0
                shutil.rmtree(self.root / f"home-{self.started - 1}", ignore_errors=True)
                self._launch()

    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def stop(self) -> dict[str, Any]:
        self._stop.set()
        self._watch.join(timeout=10)
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
        shutil.rmtree(self.root, ignore_errors=True)
        return {"what": self.WHAT, "runs_started": self.started, "runs_finished": self.finished,
                "runs_failed": self.failed, "seconds_of_finished_runs": self.seconds}


def _over_http(url: str, token: str | None, kind: str, calls: list[Call], clients: int) -> dict[str, Any]:
    """Every call once, by `clients` threads each with its own connection: latency of each, and the errors."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    slices = [calls[i::clients] for i in range(clients)]

    def client(mine: list[Call]) -> tuple[list[float], list[str]]:
        latencies, errors = [], []
        with httpx2.Client(base_url=url, headers=headers, timeout=120) as http:
            for agent, query in mine:
                started = time.perf_counter()
                try:
                    if kind == "search":
                        response = http.get("/v1/memory/search", params={"q": query, "agent_id": agent})
                    elif kind == FLOOR:
                        response = http.get("/embed", params={"q": query})
                    else:
                        response = http.post("/v1/memory/context", json={"query": query, "agent_id": agent})
                    if response.status_code != 200:
                        errors.append(f"{response.status_code}: {response.text[:200]}")
                except httpx2.HTTPError as exc:
                    errors.append(f"{type(exc).__name__}: {exc}")
                latencies.append((time.perf_counter() - started) * 1000)
        return latencies, errors

    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(client, slices))
    elapsed = time.perf_counter() - started
    latencies = [ms for part, _ in results for ms in part]
    errors = [e for _, part in results for e in part]
    return {**_percentiles(latencies), "errors": len(errors), "first_errors": errors[:3],
            "requests_per_s": round(len(latencies) / elapsed, 1)}


def _floor(home: Path, workers: int, runs: dict[tuple[str, int], list[Call]], load: PipelineLoad | None,
           log: Callable[[str], None]) -> dict[str, Any]:
    """The search questions of each client count, embedded and nothing else, through the floor's server."""
    url, process = start_floor_server(home, workers)
    try:
        _over_http(url, None, FLOOR, runs["search", 1][:8 * workers], 4)  # every worker's model, warm
        floor = {}
        for clients in CLIENTS:
            running = load is None or load.running()
            result = _over_http(url, None, FLOOR, runs["search", clients], clients)
            result["pipeline_running"] = load is not None and running and load.running()
            floor[f"{FLOOR}@{clients}"] = result
            log(f"{FLOOR} over HTTP, {clients} clients: {result}")
        return floor
    finally:
        process.terminate()
        process.wait(timeout=30)


def _in_process(memory: Memory, kind: str, calls: list[Call]) -> dict[str, Any]:
    call: Callable[[str, str], Any] = memory.search if kind == "search" else memory.context
    latencies = []
    for agent, query in calls:
        started = time.perf_counter()
        call(query, agent)
        latencies.append((time.perf_counter() - started) * 1000)
    return _percentiles(latencies)


def run_serve_bench(home: Path, out: Path, *, data: Path | None = None, token: str | None = None,
                    calls_per_run: int = 200, pipeline: bool = True, workers: int = 1,
                    log: Callable[[str], None] = print) -> dict[str, Any]:
    """The benchmark over an existing home (`data`: the LoCoMo questions file, when the home is LoCoMo's);
    writes `out` (JSON) and returns the report."""
    one_blas_thread()  # the in-process calls run as the server runs them
    memory = Memory(home)
    queries = locomo_queries(memory, data) if data is not None else []
    source = f"LoCoMo questions ({data.name})" if queries and data is not None else "first words of user turns"
    queries = queries or turn_queries(memory)
    measured = [(agent, query) for agent, query in queries if query != WARM_QUESTION]
    if len(measured) < len(CLIENTS) * len(KINDS):
        raise ValueError("the home has too few agents' questions or user turns to ask: run `memlake run` first")
    # each kind its own questions too: a server remembers the questions it embedded (`QuestionMemo`)
    per_run = min(calls_per_run, len(measured) // (len(CLIENTS) * len(KINDS)))
    warm = [(agent, WARM_QUESTION) for agent in sorted({agent for agent, _ in measured})]
    slices = [(kind, clients) for kind in KINDS for clients in CLIENTS]
    runs = {run: measured[i * per_run:(i + 1) * per_run] for i, run in enumerate(slices)}
    report: dict[str, Any] = {
        "benchmark": "serve", "date": datetime.now(UTC).isoformat(timespec="seconds"), "machine": machine(),
        "home": str(home), "agents": len({agent for agent, _ in queries}), "queries": source,
        "distinct_queries": len(queries), "calls_per_run": per_run, "server_workers": workers, "in_process": {},
        "http": {},
        "targets_p95_ms_at_8_clients": TARGETS_MS, "python_speed_ms": [python_speed_ms()],
    }
    load = PipelineLoad(home) if pipeline else None
    if load is not None:
        load.start()
    try:
        for agent, query in warm:  # the model, the indexes, the fact fold
            memory.search(query, agent)
            memory.context(query, agent)
        for kind in KINDS:  # the calls of the 1-client run, in this process
            report["in_process"][kind] = _in_process(memory, kind, runs[kind, 1])
        log(f"in process: {report['in_process']}")
        url, process = start_server(home, None, "--workers", str(workers))
        try:
            for kind in KINDS:
                _over_http(url, token, kind, warm * (WARM_ROUNDS * workers), 4)  # every worker's connections and caches
                for clients in CLIENTS:
                    running = load is None or load.running()
                    result = _over_http(url, token, kind, runs[kind, clients], clients)
                    result["pipeline_running"] = load is not None and running and load.running()
                    result["ratio_p50_to_in_process"] = round(result["p50_ms"] / report["in_process"][kind]["p50_ms"],
                                                              2)
                    report["http"][f"{kind}@{clients}"] = result
                    log(f"{kind} over HTTP, {clients} clients: {result}")
        finally:
            process.terminate()
            process.wait(timeout=30)
        report["floor"] = _floor(home, workers, runs, load, log)
    finally:
        report["pipeline"] = load.stop() if load is not None else {"what": "none (--no-pipeline)"}
    report["python_speed_ms"].append(python_speed_ms())
    report["load_average_1m_after"] = round(os.getloadavg()[0], 2)
    report["errors"] = sum(r["errors"] for r in report["http"].values())
    report["met"] = {kind: report["http"][f"{kind}@{TARGET_CLIENTS}"]["p95_ms"] <= target
                     for kind, target in TARGETS_MS.items() if f"{kind}@{TARGET_CLIENTS}" in report["http"]}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    return report
