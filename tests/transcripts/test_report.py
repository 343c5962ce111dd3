"""The ingest report `memlake run` prints (issue 20, defect 7: messages skipped inside an ingested file)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from memlake.lake import Lake
from memlake.landing import manifest_frame, update_manifest
from memlake.report import render_ingest_report
from memlake.schemas import LANDING_MANIFEST
from tests.conftest import land


def claude_message(uuid: str, sender: str, text: str) -> dict[str, str]:
    return {"uuid": uuid, "sender": sender, "text": text, "created_at": "2024-03-06T10:00:00Z"}


def test_the_report_says_how_many_messages_an_ingested_file_skipped_and_why(settings):
    conversations = [
        {"uuid": "c1", "name": "t", "created_at": "2024-03-06T10:00:00Z",
         "chat_messages": [claude_message("m1", "human", "I moved to Lyon"), claude_message("m2", "human", " "),
                           claude_message("m3", "robot", "beep")]},
        {"uuid": "c2", "name": "t", "created_at": "2024-03-07T10:00:00Z",
         "chat_messages": [claude_message("m4", "human", "hello"), claude_message("m5", "assistant", "")]},
    ]
    land(settings, "demo", "skips.json", json.dumps(conversations))
    land(settings, "demo", "clean.json", json.dumps([
        {"uuid": "c3", "name": "t", "created_at": "2024-03-06T10:00:00Z",
         "chat_messages": [claude_message("m6", "human", "all fine")]}]))
    lake = Lake(settings.lake_dir)
    update = update_manifest(settings, Lake.empty(LANDING_MANIFEST), now=datetime(2025, 1, 1, tzinfo=UTC))
    lake.write(LANDING_MANIFEST, manifest_frame(update))

    report = render_ingest_report(lake)

    assert "demo/skips.json: 3 messages skipped (2 empty, 1 unknown role)" in report
    assert "demo/clean.json" not in report
