"""What the search tests share: small chats of two agents and a home built from them through the real pipeline.

`build_home` lands them and runs the pipeline (manifest, turns, chunks, chunk_index) into a tmp home, with
the hashing embedder; `Memory.search` reads it back. The folder's `home` fixture (conftest.py) and the CLI's
search tests build their home with it.
"""

import dagster as dg

from memlake.api import Memory
from tests.conftest import land
from tests.transcripts.helpers import jsonl, msg

ALICE = [
    msg("orders", 0, "user", "My order ORD-58213 still has not arrived.", "2024-03-01"),
    msg("orders", 1, "assistant", "I am sorry, I will chase the courier today.", "2024-03-01"),
    msg("tea", 0, "user", "I drink oolong tea every morning, never coffee.", "2024-03-05"),
    msg("tea", 1, "assistant", "Oolong is a lovely choice.", "2024-03-05"),
    msg("code", 0, "user", "parse_ledger_v2 crashes on empty files.", "2024-06-10"),
    msg("code", 1, "assistant", "Guard the empty case before parsing.", "2024-06-10"),
    msg("march", 0, "user", "The team offsite is in Porto.", "2024-03-02"),
    msg("march", 1, "assistant", "Noted.", "2024-03-02"),
    msg("june", 0, "user", "The team offsite is in Porto.", "2024-06-02"),
    msg("june", 1, "assistant", "Noted.", "2024-06-02"),
]


BOB = [
    msg("secret", 0, "user", "Bob's secret launch code is ZEBRA-991 and he loves oolong tea.", "2024-03-01"),
]


def hash_memory(settings) -> Memory:
    return Memory(settings=settings.model_copy(update={"embedding_model": "hash"}))


def build_home(tmp_path_factory):
    """A home holding ALICE's and BOB's chats, run through the pipeline; tests that use it only read it."""
    from memlake.settings import load_settings
    from pipelines.runs import run_landing
    from resources import HashEmbedderResource, build_resources

    settings = load_settings(tmp_path_factory.mktemp("search") / "home")
    settings.ensure_dirs()
    land(settings, "alice", "chat.jsonl", jsonl(*ALICE))
    land(settings, "bob", "chat.jsonl", jsonl(*BOB))
    resources = {**build_resources(settings), "embedder": HashEmbedderResource()}
    outcome = run_landing(settings, resources=resources, instance=dg.DagsterInstance.ephemeral())
    assert outcome.success, outcome
    assert {"transcripts/chunks", "search/chunk_index"} <= set(outcome.materialized)
    return settings
