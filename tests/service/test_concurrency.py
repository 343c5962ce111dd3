"""Reads served side by side: many clients at once, for several agents, each get their own right answer, and a
slow read does not hold up the others (the service once served one request at a time behind a lock)."""

from __future__ import annotations

import itertools
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx2
import pytest
from starlette.testclient import TestClient

from memlake.api import Memory
from service.app import create_app
from tests.service.conftest import CANARIES, Served

READERS = ("alice", "bob", "carol")  # dave is the schema fuzz's: its memory changes under other tests
QUERIES = ("gym locker code", "What is my passphrase?", "oolong tea in Porto", "what do I drink every morning")
AS_OF = "2030-01-01"  # recency counts back from it: a fixed moment, so that two askings score alike


def ask(client: Any, token: str, agent: str, kind: str, query: str) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}", "X-Memlake-Agent-Id": agent}
    if kind == "search":
        response = client.get("/v1/memory/search", params={"q": query, "as_of": AS_OF}, headers=headers)
    else:
        response = client.post("/v1/memory/context", json={"query": query, "as_of": AS_OF}, headers=headers)
    assert response.status_code == 200, response.text
    body = response.json()
    return {"rows": body["rows"]} if kind == "search" else {"text": body["text"], "provenance": body["provenance"]}


@pytest.fixture(scope="module")
def expected(served: Served) -> dict[tuple[str, str, str], dict[str, Any]]:
    """Every (agent, kind, query) asked one at a time of the served process."""
    with served.client() as client:
        return {(agent, kind, query): ask(client, served.tokens[agent if agent != "carol" else "alice+carol"],
                                          agent, kind, query)
                for agent, kind, query in itertools.product(READERS, ("search", "context"), QUERIES)}


def token_of(served: Served, agent: str) -> str:
    return served.tokens[agent if agent != "carol" else "alice+carol"]


def test_concurrent_reads_of_several_agents_each_get_their_own_answer(served: Served, expected) -> None:
    """A fresh service (cold caches: the first requests fill the store, the model, the fact fold, the block
    cache at once) asked by 12 clients at once, every agent and query mixed: each answer is the one asked for."""
    asks = list(expected) * 3
    memory = Memory(served.home)
    with TestClient(create_app(memory, warm=False)) as client:
        def one(key: tuple[str, str, str]) -> tuple[tuple[str, str, str], dict[str, Any]]:
            agent, kind, query = key
            return key, ask(client, token_of(served, agent), agent, kind, query)

        with ThreadPoolExecutor(12) as pool:
            answers = list(pool.map(one, asks))
    for key, answer in answers:
        assert answer == expected[key], key
        others = [secret for agent in READERS if agent != key[0] for secret in CANARIES[agent]]
        assert not any(secret in str(answer) for secret in others), key
    assert any(CANARIES["bob"][0] in str(a) for k, a in answers if k[0] == "bob")  # the answers hold memory


def test_a_slow_read_does_not_hold_up_another_agents_read(served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    memory = Memory(served.home)
    search = memory.search
    slow_started, other_answered = threading.Event(), threading.Event()

    def search_slowly_for_alice(query: str, agent_id: str, *args: Any, **kwargs: Any) -> Any:
        if agent_id == "alice":
            slow_started.set()
            other_answered.wait(timeout=15)  # a read that takes long (a cold agent, a large one)
        return search(query, agent_id, *args, **kwargs)

    monkeypatch.setattr(memory, "search", search_slowly_for_alice)
    with TestClient(create_app(memory, warm=False)) as client:
        slow = threading.Thread(target=ask, args=(client, served.tokens["alice"], "alice", "search", "locker"))
        slow.start()
        assert slow_started.wait(timeout=30)
        started = time.monotonic()
        answer = ask(client, served.tokens["bob"], "bob", "search", "gym locker code")
        waited = time.monotonic() - started
        other_answered.set()
        slow.join(timeout=30)
    assert any(CANARIES["bob"][0] in row["text"] for row in answer["rows"])
    assert waited < 10, f"bob's search waited {waited:.1f} s for alice's"


def test_serve_with_two_worker_processes_answers_each_agent(served: Served, expected) -> None:
    from memlake_bench.serve import start_server
    from tests.service.conftest import stop

    url, process = start_server(served.home, None, "--workers", "2")
    lines: list[str] = []
    # the log read as it comes: the second worker may start well after /healthz answers on a loaded machine
    reader = threading.Thread(target=lambda: lines.extend(line.decode("utf-8", "replace") for line in process.stdout),
                              daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 180
        while sum("Started server process" in line for line in lines) < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        with ThreadPoolExecutor(6) as pool, httpx2.Client(base_url=url, timeout=60) as client:  # the two workers'
            answers = dict(zip(expected, pool.map(lambda key: ask(client, token_of(served, key[0]), *key), expected),
                               strict=True))
    finally:
        stop(process)
        reader.join(timeout=30)
    assert answers == expected
    assert sum("Started server process" in line for line in lines) == 2, "".join(lines)[-2000:]


def test_a_write_waits_for_a_write_of_another_worker_process(served: Served) -> None:
    """Each write reads the agent's facts, then appends: with `--workers 2` (the default on 2 cores) the
    writes of the two processes go one at a time too."""
    import subprocess
    import sys

    from service.calls import WRITES_LOCK, Service
    from service.config import ServiceSettings

    holder = subprocess.Popen(  # another worker process, in the middle of a write for a second
        [sys.executable, "-c", "import sys, time; from filelock import FileLock; lock = FileLock(sys.argv[1]); "
         "lock.acquire(); print('holding', flush=True); time.sleep(1.0)", str(served.home / WRITES_LOCK)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        started = time.monotonic()
        written_at = Service(Memory(served.home), ServiceSettings()).write(time.monotonic)
    finally:
        holder.wait(timeout=30)
    assert written_at - started > 0.5, "the write did not wait for the other process's"
