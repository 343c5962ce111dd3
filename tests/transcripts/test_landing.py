"""Who a landing file belongs to, and what the landing scan does with every file it finds."""

import json
import os
from datetime import UTC, datetime

import polars as pl
import pytest

from memlake.lake import Lake
from memlake.landing import update_manifest
from memlake.schemas import LANDING_MANIFEST
from tests.conftest import land

NOW = datetime(2025, 1, 1, tzinfo=UTC)


def chat(agent_id: str | None = None, conversation: str = "c1") -> str:
    rows = [{"conversation_id": conversation, "message_id": f"{conversation}-m{i}", "role": role, "content": text,
             "created_at": f"2024-03-01T10:0{i}:00Z", **({"agent_id": agent_id} if agent_id else {})}
            for i, (role, text) in enumerate([("user", "I live in Berlin."), ("assistant", "Lovely city.")])]
    return "".join(json.dumps(r) + "\n" for r in rows)


def manifest_of(settings):
    update = update_manifest(settings, Lake.empty(LANDING_MANIFEST), now=NOW)
    return update, pl.DataFrame(update.rows, infer_schema_length=None)


def test_rows_naming_another_agent_in_an_agents_folder_are_refused_and_the_file_quarantined(settings):
    """`agent_id: victim` in a file dropped under fz_extra/ went into victim's memory."""
    land(settings, "fz_extra", "takeover.jsonl", chat(agent_id="victim"))
    land(settings, "fz_extra", "own.jsonl", chat(agent_id="fz_extra", conversation="c2"))

    update, rows = manifest_of(settings)

    assert "victim" not in rows["agent_id"].to_list()
    refused = rows.filter(pl.col("source_file") == "fz_extra/takeover.jsonl").row(0, named=True)
    assert refused["status"] == "quarantined" and refused["agent_id"] == "fz_extra"
    assert "names agent 'victim'" in refused["reason"] and "landing root" in refused["reason"]
    assert (settings.home / refused["quarantine_path"]).is_file()
    own = rows.filter(pl.col("source_file") == "fz_extra/own.jsonl").row(0, named=True)
    assert own["status"] == "ingested" and own["agent_id"] == "fz_extra"


def test_at_the_landing_root_the_rows_agent_id_decides(settings):
    land(settings, ".", "several.jsonl", chat(agent_id="alice") + chat(agent_id="bob", conversation="c2"))

    _, rows = manifest_of(settings)

    assert rows.select("agent_id", "status").sort("agent_id").rows() == [("alice", "ingested"), ("bob", "ingested")]


@pytest.mark.parametrize("folder", ["-rf", "CON", "a..b", "okid\n", "nul.txt"])
def test_an_agent_folder_whose_name_is_not_an_agent_id_is_quarantined_with_the_rule(settings, folder):
    land(settings, folder, "chat.jsonl", chat())

    _, rows = manifest_of(settings)

    assert rows["status"].to_list() == ["quarantined"]
    assert f"invalid agent id {folder!r} (the folder's name)" in rows["reason"][0]


def test_hidden_files_and_folders_and_odd_links_are_listed_as_ignored_with_why(settings, tmp_path):
    """A hidden file or folder and a dangling symlink were skipped with no trace."""
    land(settings, "alice", "chat.jsonl", chat())
    land(settings, "alice", ".chat.jsonl", chat(conversation="c2"))
    land(settings, ".hidden", "chat.jsonl", chat(conversation="c3"))
    outside = tmp_path / "secret.jsonl"
    outside.write_text(chat(conversation="c4"))
    (settings.landing_dir / "alice" / "outside.jsonl").symlink_to(outside)
    (settings.landing_dir / "alice" / "gone.jsonl").symlink_to(settings.home / "nowhere.jsonl")
    kept = settings.home / "exports" / "kept.jsonl"
    kept.parent.mkdir()
    kept.write_text(chat(conversation="c5"))
    (settings.landing_dir / "alice" / "kept.jsonl").symlink_to(kept)  # a link inside the home is read
    (settings.landing_dir / "bob").symlink_to(tmp_path)  # a linked folder is not followed
    os.mkfifo(settings.landing_dir / "alice" / "pipe")

    update, rows = manifest_of(settings)

    assert sorted(rows.select("source_file", "status").rows()) == [
        ("alice/chat.jsonl", "ingested"), ("alice/kept.jsonl", "ingested")]
    ignored = {i["file"]: i["reason"] for i in update.ignored}
    assert sorted(ignored) == [".hidden", "alice/.chat.jsonl", "alice/gone.jsonl", "alice/outside.jsonl",
                               "alice/pipe", "bob"]
    assert "hidden folder" in ignored[".hidden"] and "hidden file" in ignored["alice/.chat.jsonl"]
    assert "dangling symlink" in ignored["alice/gone.jsonl"]
    assert "outside the home" in ignored["alice/outside.jsonl"] and "outside the home" in ignored["bob"]
    assert "not a regular file" in ignored["alice/pipe"]
    assert not (settings.quarantine_dir / "alice" / "outside.jsonl").exists()  # its bytes are not copied in
