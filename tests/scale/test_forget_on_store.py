"""Forget and export on a home whose lake, indexes and inputs logs are in object storage (`storage_uri`): a
forgotten conversation's text, and a whole agent's remembered words, are in no object of the store (every object
read as bytes, Parquet as rows, every LanceDB version as rows: tests/forget_scan.py) and in no file of the home,
after the forget and after the next run; an export of the agent from that home holds what it kept."""

import json

from memlake.storage import index_store
from pipelines.runs import POSTGRES_STORAGE_URL_VARIABLE
from tests.conftest import land
from tests.forget_canary import CANARY, cli, conversations_jsonl
from tests.forget_scan import occurrences, store_occurrences
from tests.scale.homes import object_store_environment, sample_home
from tests.scale.object_storage import bucket_filesystem

BUCKET = "memlake-forget"
SAID_CANARY = "WOMBAT-5512-CANARY"  # remembered through the API: it lives in the overrides log


def test_forget_leaves_no_text_in_any_object_of_the_store_and_an_export_holds_what_was_kept(
        tmp_path, monkeypatch, s3_endpoint):
    monkeypatch.delenv(POSTGRES_STORAGE_URL_VARIABLE, raising=False)
    bucket = bucket_filesystem(s3_endpoint)
    bucket.create_dir(BUCKET)
    object_store_environment(monkeypatch, s3_endpoint)
    settings = sample_home(tmp_path, "home", monkeypatch, landing="nothing", storage_uri=f"s3://{BUCKET}/team",
                           embedding_model="hash")
    land(settings, "A", "export.jsonl", conversations_jsonl({
        "bank": [("user", f"My account number is {CANARY} and I work at Initech."), ("assistant", "Got it.")],
        "trip": [("user", "I live in Lisbon and I love hiking in Sintra."), ("assistant", "Lovely.")],
    }, day=1))
    home = settings.home
    cli("run", home=home)
    cli("remember", f"My locker code is {SAID_CANARY}", "--agent", "A", home=home)
    indexes = index_store(settings)

    def left(canary: str) -> dict:
        return {**store_occurrences(bucket, f"{BUCKET}/team", indexes.uri, indexes.options, canary),
                **occurrences(home, canary)}

    found = left(CANARY)  # the scanner sees the canary on the store: lake rows, index versions
    assert any("/lake/transcripts/" in name for name in found) and any(n.startswith("lancedb/") for n in found)
    assert any("/inputs/overrides/" in name for name in left(SAID_CANARY)), "the remembered words are on the store"

    cli("forget", "--agent", "A", "--conversation", "bank", "--yes", home=home)
    assert left(CANARY) == {}, "after the forget"
    cli("run", home=home)
    assert left(CANARY) == {}, "after the next run"

    exported = tmp_path / "export-of-A"
    cli("export", "--agent", "A", str(exported), home=home)
    manifest = json.loads((exported / "manifest.json").read_text())
    assert manifest["tables"]["transcripts/turns"]["rows"] == 2  # the trip conversation: both turns, kept
    assert occurrences(exported, "Sintra") and occurrences(exported, SAID_CANARY)
    assert not occurrences(exported, CANARY)

    cli("forget", "--agent", "A", "--all", "--yes", home=home)
    assert left(SAID_CANARY) == {} and left("Sintra") == {}, "a whole agent's words after its forget"
