"""Issue 20, follow-ups of defects 5 and 7: a file quarantined for a size limit is read again once that limit
is changed; an unknown role in a message table is a skipped message, not a quarantined file."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import dagster as dg
import polars as pl
import pytest
from typer.testing import CliRunner

from memlake.lake import Lake
from memlake.landing import list_landing, manifest_frame, update_manifest
from memlake.parsers import parse_file
from memlake.report import render_ingest_report
from memlake.run_plan import read_landing_state
from memlake.schemas import LANDING_MANIFEST
from memlake.settings import load_settings
from pipelines.cli import app
from pipelines.definitions import defs
from resources import LakeResource
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


# --- N2: a file quarantined for a limit is read again once the limit is changed ---


def test_memlake_run_reads_again_a_file_quarantined_for_max_file_bytes_once_the_limit_is_raised(
        settings, monkeypatch):
    """The user's case: MEMLAKE_MAX_FILE_BYTES=100 quarantines the file; a plain `memlake run` said "new files: 0"
    and left it quarantined with the old reason, whatever the limit now was."""
    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")
    land(settings, "demo", "chat.jsonl", jsonl_chat("I moved to Lisbon in March", "I work at Acme"))
    runner = CliRunner()
    monkeypatch.setenv("MEMLAKE_MAX_FILE_BYTES", "100")
    refused = runner.invoke(app, ["run", "--home", str(settings.home)])
    assert refused.exit_code == 0, refused.output
    assert "Quarantined: 1 file(s)" in refused.output and "max_file_bytes" in refused.output

    monkeypatch.delenv("MEMLAKE_MAX_FILE_BYTES")
    again = runner.invoke(app, ["run", "--home", str(settings.home)])

    assert again.exit_code == 0, again.output
    assert "read again (quarantined under a limit that has changed since): 1" in again.output
    assert "demo/chat.jsonl: ingested, 1 conversation(s)" in again.output
    assert "Quarantined: 0 file(s)" in again.output
    turns = runner.invoke(app, ["turns", "--agent", "demo", "--home", str(settings.home)])
    assert "Lisbon" in turns.output

    settled = runner.invoke(app, ["run", "--home", str(settings.home)])
    assert "read again" not in settled.output and "new files: 0" in settled.output


def test_a_file_quarantined_for_a_long_message_is_read_again_only_once_max_message_chars_changes(settings):
    land(settings, "demo", "long.jsonl", jsonl_chat("short", "x" * 500))
    strict = load_settings(settings.home, max_message_chars=100)
    first = manifest_after(strict, Lake.empty(LANDING_MANIFEST), FIRST)
    assert statuses(first) == [("demo/long.jsonl", "quarantined")]
    copy = settings.quarantine_dir / "demo" / "long.jsonl"
    assert copy.is_file()

    # the same limits, or another limit changed: the outcome could only be the same; nothing is read again
    assert manifest_after(strict, first, LATER).equals(first)
    other_limit = load_settings(settings.home, max_message_chars=100, max_messages_per_conversation=50)
    assert manifest_after(other_limit, first, LATER).equals(first)

    raised = update_manifest(load_settings(settings.home, max_message_chars=1000), first, now=LATER)
    assert statuses(manifest_frame(raised)) == [("demo/long.jsonl", "ingested")]
    assert [r["file"] for r in raised.retried] == ["demo/long.jsonl"]
    assert raised.touched_days == {"2024-03-01"}
    assert not copy.exists() and not copy.with_name("long.jsonl.reason.json").exists()  # quarantine: bad files only


def test_a_file_read_again_and_refused_again_gets_the_new_reason_and_is_not_read_a_third_time(settings):
    land(settings, "demo", "long.jsonl", jsonl_chat("short", "x" * 500))
    first = manifest_after(load_settings(settings.home, max_message_chars=100), Lake.empty(LANDING_MANIFEST), FIRST)

    still_low = load_settings(settings.home, max_message_chars=200)
    second = update_manifest(still_low, first, now=LATER)
    [row] = second.rows
    assert row["status"] == "quarantined" and "max_message_chars = 200" in row["reason"]
    assert [r["outcome"] for r in second.retried] == ["quarantined"]

    third = update_manifest(still_low, manifest_frame(second), now=LATER)
    assert third.retried == [] and third.new_files == []


def test_a_file_quarantined_for_bad_json_is_not_read_again_when_a_limit_changes(settings):
    land(settings, "demo", "broken.jsonl", '{"conversation_id": "c1", "role":\n')
    first = manifest_after(settings, Lake.empty(LANDING_MANIFEST), FIRST)
    assert statuses(first) == [("demo/broken.jsonl", "quarantined")]

    raised = update_manifest(load_settings(settings.home, max_file_bytes=10**10), first, now=LATER)

    assert raised.retried == [] and raised.new_files == []
    Lake(settings.lake_dir).write(LANDING_MANIFEST, first)
    assert read_landing_state(load_settings(settings.home, max_file_bytes=10**10)).new_files == ()


def test_the_next_run_plans_the_days_of_a_file_it_will_read_again(settings):
    """`memlake run` and the landing sensor decide from the run plan: a file to read again is in it, with its
    days, so the run builds them."""
    land(settings, "demo", "long.jsonl", jsonl_chat("short", "x" * 500))
    lake = Lake(settings.lake_dir)
    lake.write(LANDING_MANIFEST, manifest_after(load_settings(settings.home, max_message_chars=100),
                                                Lake.empty(LANDING_MANIFEST), FIRST))

    state = read_landing_state(settings)

    assert [f.relative for f in state.new_files] == ["demo/long.jsonl"]
    assert [f.relative for f in state.retried_files] == ["demo/long.jsonl"]
    assert state.new_days == {"2024-03-01"}
    assert read_landing_state(settings, seen=[state.new_files[0].key]).new_files == ()  # already asked for


def test_the_landing_sensor_asks_for_a_run_reading_again_a_file_it_asked_for_before(settings):
    """The sensor's cursor holds the key of every file it asked for; one quarantined by a limit since changed is
    asked for again, in a landing run over its days."""
    land(settings, "demo", "long.jsonl", jsonl_chat("short", "x" * 500))
    first = manifest_after(load_settings(settings.home, max_message_chars=100), Lake.empty(LANDING_MANIFEST), FIRST)
    Lake(settings.lake_dir).write(LANDING_MANIFEST, first)
    [key] = [f.key for f in list_landing(settings)]
    sensor = defs.resolve_sensor_def("landing_sensor")

    with dg.instance_for_test() as instance:
        context = dg.build_sensor_context(instance=instance, cursor=json.dumps([key]), definitions=defs,
                                          resources={"lake": LakeResource(home=str(settings.home))})
        result = sensor(context)

    [request] = result.run_requests
    assert request.job_name == "landing_job" and request.tags["memlake/new_files"] == "1"
    assert request.tags["dagster/asset_partition_range_start"] == "2024-03-01"


def test_ingest_of_the_bytes_of_a_quarantined_file_says_it_is_quarantined_and_why(settings, tmp_path):
    land(settings, "demo", "long.jsonl", jsonl_chat("short", "x" * 500))
    lake = Lake(settings.lake_dir)
    lake.write(LANDING_MANIFEST, manifest_after(load_settings(settings.home, max_message_chars=100),
                                                Lake.empty(LANDING_MANIFEST), FIRST))
    copy = tmp_path / "renamed.jsonl"
    copy.write_text(jsonl_chat("short", "x" * 500))

    result = CliRunner().invoke(app, ["ingest", str(copy), "--agent", "demo", "--home", str(settings.home)])

    assert result.exit_code == 0, result.output
    assert "0 new file(s), 0 already there, 1 quarantined" in result.output
    assert "renamed.jsonl: these bytes are quarantined: " in result.output
    assert "max_message_chars" in result.output


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
