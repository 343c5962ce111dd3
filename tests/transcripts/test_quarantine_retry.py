"""Issue 20, follow-ups of defects 5 and 7: a file quarantined for a size limit is read again once that limit
is changed; an unknown role in a message table is a skipped message, not a quarantined file."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import polars as pl
import pytest

from memlake.lake import Lake
from memlake.landing import manifest_frame, update_manifest
from memlake.parsers import parse_file
from memlake.report import render_ingest_report
from memlake.schemas import LANDING_MANIFEST
from tests.conftest import land

FIRST = datetime(2025, 1, 1, tzinfo=UTC)
LATER = datetime(2025, 1, 2, tzinfo=UTC)


def jsonl_chat(*texts: str, role: str = "user") -> str:
    return "".join(json.dumps({"conversation_id": "c1", "role": role, "content": text,
                               "created_at": f"2024-03-0{i + 1}T10:00:00Z"}) + "\n" for i, text in enumerate(texts))


def manifest_after(settings, previous: pl.DataFrame, now: datetime) -> pl.DataFrame:
    """The manifest one landing pass over `settings`' home writes, from `previous`."""
    return manifest_frame(update_manifest(settings, previous, now=now))


def statuses(manifest: pl.DataFrame) -> list[tuple[str, str]]:
    return sorted(manifest.select("source_file", "status").unique().iter_rows())


# --- N4: an unknown role in a message table is a skipped message ---


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("chat.jsonl", jsonl_chat("I moved to Lisbon") + jsonl_chat("abracadabra", role="wizard").replace(
            "2024-03-01", "2024-03-02")),
        ("chat.csv", "conversation_id,role,content,created_at\n"
                     "c1,user,I moved to Lisbon,2024-03-01T10:00:00Z\n"
                     "c1,narrator,Once upon a time,2024-03-02T10:00:00Z\n"),
    ],
)
def test_a_message_with_an_unknown_role_is_skipped_and_counted_not_the_file_quarantined(settings, tmp_path,
                                                                                           name, text):
    path = tmp_path / name
    path.write_text(text)
    [conversation] = parse_file(path).conversations
    assert [m.content for m in conversation.messages] == ["I moved to Lisbon"]
    assert conversation.skipped == {"unknown_role": 1}

    land(settings, "demo", name, text)
    lake = Lake(settings.lake_dir)
    lake.write(LANDING_MANIFEST, manifest_after(settings, Lake.empty(LANDING_MANIFEST), FIRST))
    report = render_ingest_report(lake)
    assert f"demo/{name}: 1 message skipped (1 unknown role)" in report
    assert "Quarantined: 0 file(s)" in report
