"""Size limits on landing files (issue 20, defect 5): over a limit, the file is quarantined naming the limit."""

from __future__ import annotations

import io
import json
import tracemalloc
import zipfile
from datetime import UTC, datetime

import pytest

from memlake.lake import Lake
from memlake.landing import update_manifest
from memlake.parsers import ParseError, parse_file
from memlake.schemas import LANDING_MANIFEST
from memlake.settings import load_settings
from tests.conftest import land

NOW = datetime(2025, 1, 1, tzinfo=UTC)


def claude_export(texts: list[str]) -> bytes:
    """A Claude conversations.json with one conversation of the given user messages."""
    messages = [{"uuid": f"m{i}", "sender": "human", "text": text, "created_at": "2024-03-06T10:00:00Z"}
                for i, text in enumerate(texts)]
    return json.dumps([{"uuid": "c1", "name": "t", "created_at": "2024-03-06T10:00:00Z",
                        "chat_messages": messages}]).encode()


def zipped(member: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("conversations.json", member)
    return buffer.getvalue()


def quarantine_reason(settings, name: str) -> str:
    update = update_manifest(settings, Lake.empty(LANDING_MANIFEST), now=NOW)
    rows = [r for r in update.rows if r["source_file"] == f"demo/{name}"]
    assert [r["status"] for r in rows] == ["quarantined"], rows
    return rows[0]["reason"]


def test_a_small_zip_holding_one_huge_message_is_quarantined_naming_max_message_chars(settings):
    # The reported case, scaled down: a few KB of zip, one message of 3 million characters.
    data = zipped(claude_export(["hello", "a" * 3_000_000]))
    assert len(data) < 20_000
    land(settings, "demo", "export.zip", data)

    reason = quarantine_reason(settings, "export.zip")

    assert "max_message_chars" in reason and "3,000,000" in reason


def test_a_conversation_with_more_messages_than_allowed_is_quarantined_naming_the_limit(tmp_path):
    settings = load_settings(tmp_path / "home", max_messages_per_conversation=5)
    land(settings, "demo", "long.json", claude_export([f"message {i}" for i in range(6)]))

    reason = quarantine_reason(settings, "long.json")

    assert "max_messages_per_conversation" in reason and "has 6 messages" in reason


def test_a_file_over_max_file_bytes_is_quarantined_and_one_under_it_is_ingested(tmp_path):
    settings = load_settings(tmp_path / "home", max_file_bytes=2_000)
    land(settings, "demo", "big.json", claude_export(["x" * 3_000]))
    land(settings, "demo", "small.json", claude_export(["y" * 100]))

    update = update_manifest(settings, Lake.empty(LANDING_MANIFEST), now=NOW)

    status = {r["source_file"]: (r["status"], r.get("reason") or "") for r in update.rows}
    assert status["demo/small.json"][0] == "ingested"
    assert status["demo/big.json"][0] == "quarantined"
    assert "max_file_bytes" in status["demo/big.json"][1]


def test_a_zip_bomb_is_refused_without_being_decompressed_into_memory(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive, \
            archive.open("conversations.json", "w") as member:
        for _ in range(64):
            member.write(b" " * (1 << 20))  # 64 MiB of blanks: a few hundred KB zipped
    settings = load_settings(tmp_path / "home", max_decompressed_bytes=4 << 20)
    path = land(settings, "demo", "bomb.zip", buffer.getvalue())

    tracemalloc.start()
    try:
        reason = quarantine_reason(settings, "bomb.zip")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert "max_decompressed_bytes" in reason and "67,108,864" in reason
    assert peak < 16 << 20, f"peak {peak:,} bytes: the member was read"
    assert path.stat().st_size < 1 << 20


def test_parse_file_with_default_limits_refuses_a_huge_message_with_a_parse_error(tmp_path):
    path = tmp_path / "conversations.json"
    path.write_bytes(claude_export(["a" * 3_000_000]))

    with pytest.raises(ParseError, match="max_message_chars") as caught:
        parse_file(path)

    assert caught.value.format_guess == "claude"
    assert caught.value.location is not None and "c1" in caught.value.location
