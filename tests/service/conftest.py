"""One `memlake serve` for the service tests: a home of three agents, each with canaries (a secret said in a chat
and one remembered as a fact), run through the pipeline with the hashing embedder; tokens for some of them; an
echo model upstream. Started once per session as a real process on a free loopback port."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import httpx2
import pytest

from memlake_bench.serve import start_server
from tests.conftest import REPO, land
from tests.service.echo_upstream import EchoUpstream
from tests.transcripts.helpers import jsonl, msg

AGENTS = ("alice", "bob", "carol", "dave")  # dave: the schema fuzz writes there, nobody else reads it
# one word each, so full-text search finds them; a chat canary and a fact canary per agent
CANARIES = {agent: (f"LOCKER{agent.upper()}4471", f"PASSPHRASE{agent.upper()}0913") for agent in AGENTS}


def chat(agent: str) -> str:
    said, remembered = CANARIES[agent]
    return jsonl(
        msg(f"{agent}-lockers", 0, "user", f"My gym locker code is {said}, please keep it.", "2024-03-01"),
        msg(f"{agent}-lockers", 1, "assistant", "Noted, I will remember your locker code.", "2024-03-01"),
        msg(f"{agent}-tea", 0, "user", "I drink oolong tea every morning and I live in Porto.", "2024-03-05"),
        msg(f"{agent}-tea", 1, "assistant", "Oolong in Porto sounds lovely.", "2024-03-05"),
    )


@dataclass
class Served:
    url: str
    home: Path
    tokens: dict[str, str]  # name -> secret: "alice", "bob", "alice+carol", "fuzz" (dave)
    grants: dict[str, tuple[str, ...]]  # name -> agents
    upstream: EchoUpstream
    process: subprocess.Popen  # type: ignore[type-arg]

    def client(self, token: str | None = None, **headers: str) -> httpx2.Client:
        auth = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx2.Client(base_url=self.url, headers={**auth, **headers}, timeout=60)


def build_home(root: Path) -> Path:
    """The three agents' chats through the pipeline, and a remembered fact each."""
    from memlake.api import Memory
    from memlake.settings import load_settings, write_home_setting
    from pipelines.runs import run_landing
    from resources import HashEmbedderResource, build_resources

    (root / "home").mkdir()
    write_home_setting(root / "home", "embedding_model", "hash")  # the server reads it from the home too
    settings = load_settings(root / "home")
    settings.ensure_dirs()
    for agent in AGENTS:
        land(settings, agent, "chat.jsonl", chat(agent))
    resources = {**build_resources(settings), "embedder": HashEmbedderResource()}  # type: ignore[call-arg]
    outcome = run_landing(settings, resources=resources, instance=dg.DagsterInstance.ephemeral())
    assert outcome.success, outcome
    memory = Memory(settings=settings)
    for agent in AGENTS:
        memory.remember(agent, f"My passphrase is {CANARIES[agent][1]}.", tags=["secret"])
    return settings.home


def start_served(home: Path, upstream: EchoUpstream) -> tuple[str, subprocess.Popen]:  # type: ignore[type-arg]
    env = {**os.environ, "PYTHONPATH": str(REPO), "MEMLAKE_HOME": str(home), "MEMLAKE_EMBEDDING_MODEL": "hash",
           "MEMLAKE_UPSTREAM_BASE_URL": upstream.base_url, "MEMLAKE_UPSTREAM_API_KEY": "upstream-secret",
           "MEMLAKE_UPSTREAM_MODEL_MAP": "memlake-echo=echo"}
    return start_server(home, env)


def stop(process: subprocess.Popen) -> str:  # type: ignore[type-arg]
    process.terminate()
    try:
        out, _ = process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        out, _ = process.communicate()
    return out.decode("utf-8", "replace")


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    from service.tokens import TokenStore

    home = build_home(tmp_path_factory.mktemp("served"))
    store = TokenStore(home)
    grants = {"alice": ("alice",), "bob": ("bob",), "alice+carol": ("alice", "carol"), "fuzz": ("dave",)}
    tokens = {name: store.add(list(agents))[0] for name, agents in grants.items()}
    upstream = EchoUpstream()
    with upstream:
        url, process = start_served(home, upstream)
        yield Served(url, home, tokens, grants, upstream, process)
        log = stop(process)
    for said, remembered in CANARIES.values():  # progress and errors are logged, memory text never
        assert said not in log and remembered not in log, log[-2000:]
