"""The benchmarks' shared fixture: LoCoMo's first conversation built with the hashing embedder once per test session,
for the smoke runs of `bench locomo` and `bench context` (both build this same home for `--limit 1`; each ran the
pipeline over its 419 turns on its own)."""

import json
from pathlib import Path

import pytest
from filelock import FileLock

from tests.conftest import LOCOMO


@pytest.fixture(scope="session")
def locomo_home(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """The home `--limit 1 --model hash` builds (with its saved ingest figures), for runs that pass it with `reuse`.
    Under xdist the workers share one build: the first to ask builds it while the other waits on the lock. Its
    readers only read it (a plain search or context block writes nothing)."""
    from memlake_bench.in_process import IN_PROCESS
    from memlake_bench.locomo import built_home

    base = tmp_path_factory.getbasetemp()
    shared = base if worker_id == "master" else base.parent  # the workers' folders' common parent
    home = shared / "locomo-1-hash" / "home"
    with FileLock(str(home.parent) + ".lock"):
        if not (home / "ingest.json").is_file():  # written last: a finished build
            home.mkdir(parents=True, exist_ok=True)
            built_home(json.loads(LOCOMO.read_text())[:1], home, "hash", False, IN_PROCESS, log=lambda _: None)
    return home
