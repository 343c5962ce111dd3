"""Readers on many machines: two `memlake serve` processes, each with a home and settings of its own (two hosts, on
loopback), on one store (`storage_uri` on an S3-compatible server) and one Dagster instance (PostgreSQL). A run
committed on one host is answered by the other host's replica within a bound measured here; ingests, remembers and
forgets sent to both replicas at once are all kept (the inputs logs and the ingests not yet taken are on the store:
every host's run reads every replica's), none lost or doubled, and the next run on either host builds every one."""

import os
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import polars as pl
import pytest

from memlake.inputs import read_log
from memlake.lake import Lake
from memlake.schemas import FACTS, FORGET, OVERRIDES, TURNS
from memlake_bench.serve import start_server
from pipelines.runs import POSTGRES_STORAGE_URL_VARIABLE, run_landing
from tests.forget_scan import occurrences
from tests.scale.homes import object_store_environment, sample_home
from tests.scale.object_storage import bucket_filesystem

BUCKET = "memlake-replicas"
AGENT = "demo"
# What a reader on another host may take to see a committed run: it reads the store's change mark on every request,
# so the bound is one request's time on a loaded 2-core machine, not a cache's lifetime.
READ_AFTER_COMMIT_BOUND_SECONDS = 5.0


@pytest.fixture
def hosts(tmp_path, monkeypatch, postgres_url, s3_endpoint):
    """Two hosts' homes on one store and one instance: host A has the notes chat landed, host B nothing; a
    `memlake serve` replica on each."""
    monkeypatch.delenv(POSTGRES_STORAGE_URL_VARIABLE, raising=False)
    bucket_filesystem(s3_endpoint).create_dir(BUCKET)
    object_store_environment(monkeypatch, s3_endpoint)
    shared = {"storage_uri": f"s3://{BUCKET}/team", "dagster_postgres_url": postgres_url, "embedding_model": "hash"}
    a = sample_home(tmp_path, "host-a", monkeypatch, landing="notes chat", **shared)
    b = sample_home(tmp_path, "host-b", monkeypatch, landing="nothing", **shared)
    environment = {key: value for key, value in os.environ.items() if key not in {"MEMLAKE_HOME", "DAGSTER_HOME"}}
    environment["PYTHONPATH"] = os.getcwd()
    with ThreadPoolExecutor(2) as pool:
        started = list(pool.map(lambda home: start_server(home.home, environment, "--workers", "1"), (a, b)))
    try:
        yield (a, started[0][0]), (b, started[1][0])
    finally:
        for _, process in started:
            process.terminate()
            process.wait(timeout=30)


def _search(url: str, query: str) -> list[dict]:
    answer = httpx.get(f"{url}/v1/memory/search", params={"q": query, "agent_id": AGENT, "k": 10}, timeout=60)
    return answer.json()["rows"] if answer.status_code == 200 else []


def _facts(url: str) -> list[dict]:
    answer = httpx.get(f"{url}/v1/memory/facts", params={"agent_id": AGENT}, timeout=60)
    assert answer.status_code == 200, answer.text
    return answer.json()["rows"]


def test_a_run_on_one_host_is_read_on_the_other_and_writes_to_both_replicas_at_once_are_all_kept(hosts, monkeypatch):
    (a, url_a), (b, url_b) = hosts
    monkeypatch.setenv("MEMLAKE_HOME", str(a.home))
    query = "notes"
    assert _search(url_b, query) == []  # nothing built yet: host B's replica has no memory of the agent

    built = run_landing(a)  # host A's `memlake run`: the home's own instance (Postgres) and resources
    assert built.success, built.failure
    committed = time.monotonic()
    while not (hits := _search(url_b, query)):
        assert time.monotonic() - committed < READ_AFTER_COMMIT_BOUND_SECONDS, "host B never saw the run"
        time.sleep(0.05)
    seen_after = time.monotonic() - committed
    print(f"host B answered with host A's run {seen_after:.2f} s after it committed")
    turns = Lake.of(a).read(TURNS)
    assert {hit["conversation_id"] for hit in hits} <= set(turns["conversation_id"])
    assert _facts(url_b) == _facts(url_a)

    # writes to both replicas at once: each remembers six notes, and each forgets one conversation
    notes = {url: [f"The locker code for gym bag {name}{i} is {4100 + i}" for i in range(6)]
             for url, name in ((url_a, "A"), (url_b, "B"))}
    forgotten = dict(zip((url_a, url_b), sorted(turns["conversation_id"].unique())[:2], strict=True))
    kept_text = set(turns.filter(~pl.col("conversation_id").is_in(list(forgotten.values())))["content"])
    said_only_in_forgotten = [text for text in turns.filter(pl.col("conversation_id").is_in(
        list(forgotten.values())))["content"] if len(text) > 30 and text not in kept_text]
    assert said_only_in_forgotten

    sent = {url: [f"{name}-trip-{i}" for i in range(3)] for url, name in ((url_a, "a"), (url_b, "b"))}

    def writes(url: str) -> tuple[list[int], list[str]]:
        codes = [httpx.post(f"{url}/v1/memory/ingest", json={
            "agent_id": AGENT, "conversation_id": conversation, "turns": [
                {"user": f"Booked the ferry for {conversation}.", "assistant": "Noted."}]}, timeout=120).status_code
            for conversation in sent[url]]
        remembered = []
        for note in notes[url]:
            answer = httpx.post(f"{url}/v1/memory/remember", json={"agent_id": AGENT, "content": note}, timeout=120)
            codes.append(answer.status_code)
            remembered += [row["fact_id"] for row in answer.json()["rows"] if row["change"] == "new fact"]
        codes.append(httpx.post(f"{url}/v1/memory/forget", json={"agent_id": AGENT,
                                                                 "conversation_id": forgotten[url]},
                                timeout=300).status_code)
        return codes, remembered

    with ThreadPoolExecutor(2) as pool:
        done = list(pool.map(writes, (url_a, url_b)))
    assert [code for codes, _ in done for code in codes] == ([202] * 3 + [200] * 7) * 2
    every_fact = sorted(fact_id for _, remembered in done for fact_id in remembered)
    assert len(set(every_fact)) == len(every_fact) == 12  # a new fact per note, none merged into another
    for url in (url_a, url_b):  # each replica reads every replica's writes
        shown = [fact["fact_id"] for fact in _facts(url)]
        assert sorted(fact_id for fact_id in shown if fact_id in every_fact) == every_fact
    for table in (OVERRIDES, FORGET):  # one log, read alike from both hosts' homes
        assert _log(a, table).rows() == _log(b, table).rows()
    assert sorted(_log(a, FORGET)["target"]) == sorted(forgotten.values())

    folded = run_landing(a)  # host A's run: host B's entries and ingests too
    assert folded.success, folded.failure
    for text in said_only_in_forgotten:  # host A's landing file no longer holds what host B's replica forgot
        assert not occurrences(a.home, text), text
    facts = Lake.of(b).read(FACTS).filter((pl.col("agent_id") == AGENT) & pl.col("superseded_by").is_null())
    assert sorted(f for f in facts["fact_id"] if f in every_fact) == every_fact  # each once, none lost
    turns_now = Lake.of(b).read(TURNS)
    left = set(turns_now["conversation_id"])
    assert not left & set(forgotten.values()) and left  # both forgets held, the rest kept
    ingested = turns_now.filter(pl.col("conversation_id").str.contains("-trip-"))
    # every conversation sent to either replica, each once (a turn is its user's and its assistant's message)
    assert sorted(ingested["conversation_id"]) == sorted(c for c in sent[url_a] + sent[url_b] for _ in range(2))


def _log(settings, table) -> pl.DataFrame:
    return read_log(settings, table).sort(table.key[0])
