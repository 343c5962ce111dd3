"""Tests for memlake.parsers on small inline fixtures, one format at a time."""

from __future__ import annotations

import io
import json
import pickle
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from memlake.parsers import (
    FORMATS,
    ParsedFile,
    ParseError,
    detect_format,
    parse_file,
)

T0 = 1_709_700_000.0  # 2024-03-06T04:40:00Z


# --- fixture builders --------------------------------------------------------------------


def gpt_message(node_id: str, role: str, text: str | None, *, t: float | None = None, hidden: bool = False,
                content_type: str = "text", parts: list[Any] | None = None,
                recipient: str = "all") -> dict[str, Any]:
    """A ChatGPT message object."""
    return {
        "id": node_id,
        "author": {"role": role, "name": None, "metadata": {}},
        "create_time": t,
        "content": {"content_type": content_type, "parts": parts if parts is not None else [text]},
        "metadata": {"is_visually_hidden_from_conversation": True} if hidden else {},
        "recipient": recipient,
    }


def gpt_tree() -> dict[str, Any]:
    """A ChatGPT conversation with an edited question, a regenerated answer and skippable messages.

    root -> sys -> u1 (abandoned edit) -> a1
                -> u2 (the edit) -> a2_old (regenerated away)
                                 -> a2 -> hid (hidden) -> empty -> u3 -> a3 (multimodal)   <- current
    """
    nodes: dict[str, tuple[str | None, dict[str, Any] | None]] = {
        "root": (None, None),
        "sys": ("root", gpt_message("sys", "system", "", hidden=True)),
        "u1": ("sys", gpt_message("u1", "user", "ABANDONED question about satay", t=T0 + 1)),
        "a1": ("u1", gpt_message("a1", "assistant", "ABANDONED satay answer", t=T0 + 2)),
        "u2": ("sys", gpt_message("u2", "user", "Edited question", t=T0 + 3)),
        "a2_old": ("u2", gpt_message("a2_old", "assistant", "REGENERATED-AWAY answer", t=T0 + 4)),
        "a2": ("u2", gpt_message("a2", "assistant", "Final answer", t=T0 + 5)),
        "hid": ("a2", gpt_message("hid", "user", "hidden context", t=T0 + 6, hidden=True)),
        "empty": ("hid", gpt_message("empty", "assistant", "", t=T0 + 7)),
        "u3": ("empty", gpt_message("u3", "user", "Follow-up", t=T0 + 8)),
        "a3": ("u3", gpt_message("a3", "assistant", None, t=T0 + 9, content_type="multimodal_text",
                                 parts=[{"content_type": "image_asset_pointer"}, "Here is the picture"])),
    }
    mapping = {
        node_id: {"id": node_id, "parent": parent, "message": message,
                  "children": [c for c, (p, _) in nodes.items() if p == node_id]}
        for node_id, (parent, message) in nodes.items()
    }
    return {"id": "conv-1", "title": "Branchy", "create_time": T0, "update_time": T0 + 9,
            "current_node": "a3", "mapping": mapping}


def claude_conversation() -> dict[str, Any]:
    """A Claude conversation with thinking, tool use, and an old-style message without content."""
    return {
        "uuid": "claude-1",
        "name": "Tools and thoughts",
        "created_at": "2024-05-01T10:00:00.000000Z",
        "updated_at": "2024-05-01T10:05:00.000000Z",
        "chat_messages": [
            {"uuid": "m1", "sender": "human", "text": "What's the weather?",
             "created_at": "2024-05-01T10:00:01Z",
             "content": [{"type": "text", "text": "What's the weather?"}]},
            {"uuid": "m2", "sender": "assistant", "created_at": "2024-05-01T10:00:05+02:00",
             "text": "SECRET THOUGHTS\n\nIt is sunny.",
             "content": [
                 {"type": "thinking", "thinking": "SECRET THOUGHTS"},
                 {"type": "tool_use", "name": "weather", "input": {"q": "Lisbon"}},
                 {"type": "tool_result", "content": [{"type": "text", "text": "TOOL OUTPUT 23C"}]},
                 {"type": "text", "text": "It is sunny."},
             ]},
            {"uuid": "m3", "sender": "human", "text": "Old-style message",
             "created_at": "2024-05-01T10:01:00Z"},
            {"uuid": "m4", "sender": "assistant", "text": "", "created_at": "2024-05-01T10:01:05Z",
             "content": [{"type": "thinking", "thinking": "ONLY THINKING"}]},
            {"uuid": "m5", "sender": "assistant", "text": "", "created_at": "2024-05-01T10:01:06Z",
             "content": []},
        ],
    }


TABLE_ROWS: list[dict[str, Any]] = [
    {"agent_id": "a1", "conversation_id": "c1", "message_id": "m1", "role": "user", "content": "Hello",
     "created_at": "2024-03-01T10:00:00", "speaker": "Priya", "title": "First"},
    {"agent_id": "a2", "conversation_id": "c1", "message_id": "m1", "role": "user", "content": "Other agent",
     "created_at": "2024-03-01T11:00:00Z", "speaker": None, "title": None},
    {"agent_id": "a1", "conversation_id": "c1", "message_id": "m2", "role": "assistant", "content": "Hi!",
     "created_at": "2024-03-01T12:00:05+02:00", "speaker": None, "title": "ignored later title"},
    {"agent_id": "a1", "conversation_id": "c2", "message_id": "m1", "role": "tool", "content": "tool says",
     "created_at": "2024-03-02", "speaker": None, "title": None},
    {"agent_id": "a1", "conversation_id": "c2", "message_id": "m2", "role": "system", "content": " ",
     "created_at": "2024-03-02T00:00:01Z", "speaker": None, "title": None},
]


def write(path: Path, data: bytes | str) -> Path:
    """Write a fixture file and return its path."""
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def zipped(members: dict[str, bytes]) -> bytes:
    """A zip archive holding `members`."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def csv_text(rows: list[dict[str, Any]]) -> str:
    columns = list(rows[0])
    lines = [",".join(columns)]
    for row in rows:
        cells = ["" if row[c] is None else json.dumps(row[c]) if "," in str(row[c]) else str(row[c])
                 for c in columns]
        lines.append(",".join(cells))
    return "\n".join(lines) + "\n"


def parquet_bytes(table: pa.Table) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def assert_utc(parsed: ParsedFile) -> None:
    """Every time in `parsed` is timezone-aware UTC."""
    for conv in parsed.conversations:
        times = [conv.started_at, *(m.created_at for m in conv.messages)]
        for t in times:
            assert t is None or t.tzinfo is UTC


# --- ChatGPT -----------------------------------------------------------------------------


def test_chatgpt_keeps_only_the_visible_branch(tmp_path: Path) -> None:
    parsed = parse_file(write(tmp_path / "conversations.json", json.dumps([gpt_tree()])))
    assert parsed.source_format == "chatgpt" and parsed.archive is None
    [conv] = parsed.conversations
    assert conv.conversation_id == "conv-1" and conv.title == "Branchy" and conv.agent_id is None
    assert [(m.message_id, m.role, m.content) for m in conv.messages] == [
        ("u2", "user", "Edited question"),
        ("a2", "assistant", "Final answer"),
        ("u3", "user", "Follow-up"),
        ("a3", "assistant", "Here is the picture"),
    ]
    text = " ".join(m.content for m in conv.messages)
    assert "ABANDONED" not in text and "REGENERATED-AWAY" not in text
    assert conv.started_at == datetime.fromtimestamp(T0, UTC)
    assert conv.messages[0].created_at == datetime.fromtimestamp(T0 + 3, UTC)
    assert_utc(parsed)


def test_chatgpt_counts_skipped_messages_by_reason(tmp_path: Path) -> None:
    conv = gpt_tree()
    conv["mapping"]["u3"]["message"]["content"] = {"content_type": "code", "language": "python", "text": "x"}
    parsed = parse_file(write(tmp_path / "c.json", json.dumps([conv])))
    assert parsed.conversations[0].skipped == {"system": 1, "hidden": 1, "empty": 1, "non_text": 1}


def test_chatgpt_skips_tool_calls_and_keeps_tool_text(tmp_path: Path) -> None:
    conv = gpt_tree()
    conv["mapping"]["a2"]["message"]["recipient"] = "python"
    conv["mapping"]["u3"]["message"]["author"] = {"role": "tool", "name": "browser"}
    [parsed] = parse_file(write(tmp_path / "c.json", json.dumps([conv]))).conversations
    assert parsed.skipped["tool_call"] == 1
    tool = [m for m in parsed.messages if m.role == "tool"]
    assert [(m.content, m.speaker) for m in tool] == [("Follow-up", "browser")]


@pytest.mark.parametrize(
    ("mutate", "location_part"),
    [
        (lambda c: c["mapping"]["root"].update(parent="a3"), "cycle"),
        (lambda c: c["mapping"]["u3"].update(parent="nowhere"), "conversations[0].mapping.u3.parent"),
        (lambda c: c.update(current_node="nowhere"), "conversations[0].current_node"),
        (lambda c: c["mapping"]["a2"]["message"].update(author="robot"),
         "conversations[0].mapping.a2.message.author"),
        (lambda c: c["mapping"]["u3"]["message"]["content"].update(parts="text"),
         "mapping.u3.message.content.parts"),
        (lambda c: c.update(create_time="yesterday"), "conversations[0].create_time"),
    ],
)
def test_chatgpt_bad_trees_raise_with_location(tmp_path: Path, mutate: Any, location_part: str) -> None:
    conv = gpt_tree()
    mutate(conv)
    with pytest.raises(ParseError) as info:
        parse_file(write(tmp_path / "conversations.json", json.dumps([conv])))
    err = info.value
    assert err.format_guess == "chatgpt"
    assert location_part in f"{err.location} {err.message}"


# --- Claude ------------------------------------------------------------------------------


def test_claude_takes_text_blocks_only(tmp_path: Path) -> None:
    parsed = parse_file(write(tmp_path / "conversations.json", json.dumps([claude_conversation()])))
    assert parsed.source_format == "claude"
    [conv] = parsed.conversations
    assert conv.conversation_id == "claude-1" and conv.title == "Tools and thoughts"
    assert [(m.message_id, m.role, m.content) for m in conv.messages] == [
        ("m1", "user", "What's the weather?"),
        ("m2", "assistant", "It is sunny."),
        ("m3", "user", "Old-style message"),
    ]
    text = " ".join(m.content for m in conv.messages)
    assert "SECRET" not in text and "THINKING" not in text and "TOOL OUTPUT" not in text
    assert conv.skipped == {"non_text": 1, "empty": 1}
    assert conv.messages[1].created_at == datetime(2024, 5, 1, 8, 0, 5, tzinfo=UTC)
    assert conv.started_at == datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
    assert_utc(parsed)


def test_claude_bad_block_names_its_location(tmp_path: Path) -> None:
    conv = claude_conversation()
    conv["chat_messages"][1]["content"][3] = {"text": "no type"}
    with pytest.raises(ParseError) as info:
        parse_file(write(tmp_path / "conversations.json", json.dumps([conv])))
    assert info.value.location == "conversations[0].chat_messages[1].content[3].type"
    assert info.value.format_guess == "claude"


# --- zipped exports ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("conversation", "fmt", "member"),
    [(gpt_tree(), "chatgpt", "conversations.json"),
     (claude_conversation(), "claude", "data-2024-10-31/conversations.json")],
)
def test_zipped_exports(tmp_path: Path, conversation: dict[str, Any], fmt: str, member: str) -> None:
    data = zipped({"chat.html": b"<html></html>", "__MACOSX/._conversations.json": b"\x00\x05junk",
                   member: json.dumps([conversation]).encode(), "user.json": b"{}"})
    path = write(tmp_path / "export.zip", data)
    parsed = parse_file(path)
    assert (parsed.source_format, parsed.archive) == (fmt, "zip")
    assert detect_format(path) == fmt
    assert len(parsed.conversations) == 1 and parsed.conversations[0].messages


def test_zip_errors(tmp_path: Path) -> None:
    good = zipped({"conversations.json": json.dumps([gpt_tree()]).encode()})
    with pytest.raises(ParseError) as info:
        parse_file(write(tmp_path / "truncated.zip", good[: len(good) // 2]))
    assert info.value.location == "zip"
    with pytest.raises(ParseError, match="no conversations.json"):
        parse_file(write(tmp_path / "other.zip", zipped({"notes.txt": b"hi"})))
    with pytest.raises(ParseError) as info:
        parse_file(write(tmp_path / "bad.zip", zipped({"conversations.json": b'[{"mapping": {}, "id": 5}]'})))
    assert info.value.location == "zip member conversations.json, conversations[0].id"
    # A bit flipped inside the compressed member: the CRC check catches it.
    member_start = good.index(b"conversations.json") + len("conversations.json") + 40
    corrupt = bytearray(good)
    corrupt[member_start] ^= 0xFF
    with pytest.raises(ParseError):
        parse_file(write(tmp_path / "corrupt.zip", bytes(corrupt)))


# --- generic tables ----------------------------------------------------------------------


def check_table_result(parsed: ParsedFile, fmt: str) -> None:
    """What TABLE_ROWS parse to, in every table format."""
    assert parsed.source_format == fmt
    keys = [(c.agent_id, c.conversation_id) for c in parsed.conversations]
    assert keys == [("a1", "c1"), ("a2", "c1"), ("a1", "c2")]
    first, other, second = parsed.conversations
    assert first.title == "First"
    assert [(m.message_id, m.role, m.content, m.speaker) for m in first.messages] == [
        ("m1", "user", "Hello", "Priya"), ("m2", "assistant", "Hi!", None)]
    assert first.messages[0].created_at == datetime(2024, 3, 1, 10, 0, tzinfo=UTC)  # naive means UTC
    assert first.messages[1].created_at == datetime(2024, 3, 1, 10, 0, 5, tzinfo=UTC)  # +02:00 converted
    assert first.started_at == datetime(2024, 3, 1, 10, 0, tzinfo=UTC)
    assert other.messages[0].content == "Other agent"
    assert [m.role for m in second.messages] == ["tool"]
    assert second.messages[0].created_at == datetime(2024, 3, 2, tzinfo=UTC)
    assert second.skipped == {"empty": 1}
    assert_utc(parsed)


def test_jsonl(tmp_path: Path) -> None:
    text = "\n" + jsonl(TABLE_ROWS[:2]) + "   \n\n" + jsonl(TABLE_ROWS[2:])  # blank lines are ignored
    check_table_result(parse_file(write(tmp_path / "chat.jsonl", text)), "jsonl")


def test_csv(tmp_path: Path) -> None:
    check_table_result(parse_file(write(tmp_path / "chat.csv", csv_text(TABLE_ROWS))), "csv")


def test_parquet_with_string_times(tmp_path: Path) -> None:
    data = parquet_bytes(pa.Table.from_pylist(TABLE_ROWS))
    check_table_result(parse_file(write(tmp_path / "chat.parquet", data)), "parquet")


def test_parquet_with_timestamp_column(tmp_path: Path) -> None:
    table = pa.table({
        "conversation_id": ["c1", "c1"],
        "role": ["user", "assistant"],
        "content": ["a", "b"],
        "created_at": pa.array([datetime(2024, 1, 1, 9), datetime(2024, 1, 1, 9, 1)], pa.timestamp("us")),
    })
    [conv] = parse_file(write(tmp_path / "t.parquet", parquet_bytes(table))).conversations
    assert conv.agent_id is None and [m.message_id for m in conv.messages] == [None, None]
    assert conv.messages[0].created_at == datetime(2024, 1, 1, 9, tzinfo=UTC)


@pytest.mark.parametrize("name", ["t.parquet", "t.jsonl", "t.csv"])
def test_a_message_table_may_say_when_its_conversation_began(tmp_path: Path, name: str) -> None:
    """An export whose first message came after the conversation opened (ChatGPT's create_time, a memlake
    export) keeps that start; a given start later than the first message does not move it."""
    rows = [
        {"conversation_id": "c1", "role": "user", "content": "a", "created_at": "2024-01-01T09:05:00Z",
         "conversation_started_at": "2024-01-01T09:00:00Z"},
        {"conversation_id": "c1", "role": "assistant", "content": "b", "created_at": "2024-01-01T09:06:00Z",
         "conversation_started_at": "2024-01-01T09:00:00Z"},
        {"conversation_id": "c2", "role": "user", "content": "c", "created_at": "2024-01-02T10:00:00Z",
         "conversation_started_at": "2024-01-02T11:00:00Z"},
        {"conversation_id": "c3", "role": "user", "content": "d", "created_at": "2024-01-03T10:00:00Z",
         "conversation_started_at": ""},
    ]
    data = {"t.parquet": lambda: parquet_bytes(pa.Table.from_pylist(rows)), "t.jsonl": lambda: jsonl(rows),
            "t.csv": lambda: csv_text(rows)}[name]()
    started = {c.conversation_id: c.started_at for c in parse_file(write(tmp_path / name, data)).conversations}
    assert started == {"c1": datetime(2024, 1, 1, 9, tzinfo=UTC), "c2": datetime(2024, 1, 2, 10, tzinfo=UTC),
                       "c3": datetime(2024, 1, 3, 10, tzinfo=UTC)}


def test_parquet_nanosecond_timestamps_become_plain_datetimes(tmp_path: Path) -> None:
    table = pa.table({
        "conversation_id": ["c1"], "role": ["user"], "content": ["a"],
        "created_at": pa.array([1_704_099_600_123_456_789], pa.timestamp("ns", tz="Europe/Lisbon")),
    })
    [conv] = parse_file(write(tmp_path / "t.parquet", parquet_bytes(table))).conversations
    created = conv.messages[0].created_at
    assert type(created) is datetime
    assert created == datetime(2024, 1, 1, 9, 0, 0, 123456, tzinfo=UTC)


def test_single_jsonl_line_is_jsonl(tmp_path: Path) -> None:
    row = {"conversation_id": "c", "role": "user", "content": "x", "created_at": None}
    parsed = parse_file(write(tmp_path / "one.json", json.dumps(row)))
    assert parsed.source_format == "jsonl" and parsed.conversations[0].messages[0].created_at is None


@pytest.mark.parametrize(
    ("line", "location", "match"),
    [
        ({"role": ""}, "line 3, column role", "empty"),  # an unknown role is a skipped message, no role an error
        ({"created_at": "March 3rd"}, "line 3, column created_at", "unparseable date"),
        ({"content": 42}, "line 3, column content", "expected a string"),
        ({"conversation_id": ["x"]}, "line 3, column conversation_id", "expected a string"),
        ({"agent_id": "../etc"}, "line 3, column agent_id", "invalid agent_id"),
        ({"message_id": "m1"}, "line 3, column message_id", "duplicate message id"),
        ({"created_at": "DROP"}, "line 3, column created_at", "missing required column"),
    ],
)
def test_jsonl_errors_name_line_and_column(tmp_path: Path, line: dict[str, Any], location: str,
                                           match: str) -> None:
    bad = {**TABLE_ROWS[2], **line}
    if line.get("created_at") == "DROP":
        del bad["created_at"]
    text = json.dumps(TABLE_ROWS[0]) + "\n\n" + json.dumps(bad) + "\n"
    with pytest.raises(ParseError, match=match) as info:
        parse_file(write(tmp_path / "chat.jsonl", text))
    assert (info.value.location, info.value.format_guess) == (location, "jsonl")


def test_jsonl_broken_line(tmp_path: Path) -> None:
    text = jsonl(TABLE_ROWS[:2]) + '{"conversation_id": "c1", "role":\n'
    with pytest.raises(ParseError, match="invalid JSON") as info:
        parse_file(write(tmp_path / "chat.jsonl", text))
    assert info.value.location == "line 3"


def test_csv_errors_name_line_and_column(tmp_path: Path) -> None:
    text = "conversation_id,role,content,created_at\nc1,user,hi,2024-01-01\nc1,,hi,2024-01-01\n"
    with pytest.raises(ParseError) as info:  # no role (an unknown one is a skipped message)
        parse_file(write(tmp_path / "chat.csv", text))
    assert (info.value.location, info.value.format_guess) == ("line 3, column role", "csv")
    with pytest.raises(ParseError, match="expected 4 fields") as info:
        parse_file(write(tmp_path / "chat.csv", text.replace("c1,,hi", "c1,user,hi,extra")))
    assert info.value.location == "line 3"


def test_a_csv_header_error_names_every_column_it_lacks_and_only_those(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match=r"CSV header lacks content \(it has conversation_id, role and created_at\)"):
        parse_file(write(tmp_path / "chat.csv", "conversation_id,role,created_at\nc1,user,2024-01-01\n"))
    with pytest.raises(ParseError, match=r"lacks conversation_id, content and created_at \(it has role\)"):
        parse_file(write(tmp_path / "chat.csv", "role\nuser\n"))
    with pytest.raises(ParseError, match=r"lacks content and created_at \(it has conversation_id and role\)"):
        parse_file(write(tmp_path / "chat.csv", "conversation_id,role\nc1,user\n"))
    lacks_time = r"CSV header lacks created_at \(it has conversation_id, role and content\)"
    with pytest.raises(ParseError, match=lacks_time) as info:
        parse_file(write(tmp_path / "chat.csv", "conversation_id,role,content\nc1,user,hi\n"))
    assert info.value.location == "line 1"


def test_parquet_missing_column(tmp_path: Path) -> None:
    table = pa.table({"conversation_id": ["c1"], "role": ["user"], "content": ["x"]})
    with pytest.raises(ParseError) as info:
        parse_file(write(tmp_path / "t.parquet", parquet_bytes(table)))
    assert (info.value.location, info.value.format_guess) == ("column created_at", "parquet")


def test_parquet_wrong_type_names_row(tmp_path: Path) -> None:
    table = pa.table({"conversation_id": [1, 2], "role": ["user"] * 2, "content": ["x"] * 2,
                      "created_at": [None, None]})
    with pytest.raises(ParseError) as info:
        parse_file(write(tmp_path / "t.parquet", parquet_bytes(table)))
    assert info.value.location == "row 1, column conversation_id"


# --- ingest JSON -------------------------------------------------------------------------


def test_ingest_json_object_and_list(tmp_path: Path) -> None:
    one = {"agent_id": "bot", "conversation_id": "s1", "session_date": "2024-05-20",
           "turns": [{"user": "Hi", "assistant": "Hello"}, {"user": "Bye", "assistant": ""}, {"user": "?"}]}
    parsed = parse_file(write(tmp_path / "ingest.json", json.dumps(one)))
    assert parsed.source_format == "ingest_json"
    [conv] = parsed.conversations
    assert (conv.agent_id, conv.conversation_id) == ("bot", "s1")
    assert conv.started_at == datetime(2024, 5, 20, tzinfo=UTC)
    assert [(m.role, m.content, m.message_id, m.created_at) for m in conv.messages] == [
        ("user", "Hi", None, None), ("assistant", "Hello", None, None),
        ("user", "Bye", None, None), ("user", "?", None, None)]
    assert conv.skipped == {"empty": 1}

    two = [one, {**one, "conversation_id": "s2", "session_date": "2024-05-21T08:00:00+01:00"}]
    parsed = parse_file(write(tmp_path / "ingest.json", json.dumps(two)))
    assert [c.conversation_id for c in parsed.conversations] == ["s1", "s2"]
    assert parsed.conversations[1].started_at == datetime(2024, 5, 21, 7, tzinfo=UTC)


def test_ingest_json_errors(tmp_path: Path) -> None:
    bad = [{"conversation_id": "s1", "turns": [{"user": "ok"}]},
           {"conversation_id": "s2", "turns": [{"user": "ok"}, {"assistant": 7}]}]
    with pytest.raises(ParseError) as info:
        parse_file(write(tmp_path / "ingest.json", json.dumps(bad)))
    assert (info.value.location, info.value.format_guess) == ("[1].turns[1].assistant", "ingest_json")
    dup = [bad[0], bad[0]]
    with pytest.raises(ParseError, match="duplicate conversation id"):
        parse_file(write(tmp_path / "ingest.json", json.dumps(dup)))


@pytest.mark.parametrize("origin", ["bot", "", "PROXY", 1, ["proxy"]])
def test_ingest_json_says_whether_the_proxy_landed_it_and_nothing_else(tmp_path: Path, origin: object) -> None:
    """`origin: "proxy"` marks an exchange the proxy landed (carried into `transcripts/turns.origin`); no origin
    is any other source; any other value is refused, so a mark that search relies on is never guessed."""
    one = {"conversation_id": "s1", "turns": [{"user": "Hi", "assistant": "Hello"}]}
    assert parse_file(write(tmp_path / "plain.json", json.dumps(one))).conversations[0].origin is None
    proxied = parse_file(write(tmp_path / "proxied.json", json.dumps({**one, "origin": "proxy"})))
    assert proxied.conversations[0].origin == "proxy"
    with pytest.raises(ParseError) as info:
        parse_file(write(tmp_path / "odd.json", json.dumps({**one, "origin": origin})))
    assert info.value.location == "origin" and '"proxy" or nothing' in info.value.message


# --- detection and whole-file errors -----------------------------------------------------


@pytest.mark.parametrize(
    ("name", "make", "fmt"),
    [
        ("notes.csv", lambda: json.dumps([gpt_tree()]), "chatgpt"),
        ("export.jsonl", lambda: json.dumps([claude_conversation()], indent=2), "claude"),
        ("chat.json", lambda: jsonl(TABLE_ROWS), "jsonl"),
        ("chat.jsonl", lambda: csv_text(TABLE_ROWS), "csv"),
        ("chat.csv", lambda: parquet_bytes(pa.Table.from_pylist(TABLE_ROWS)), "parquet"),
        ("ingest.parquet", lambda: json.dumps({"conversation_id": "x", "turns": [{"user": "u"}]}),
         "ingest_json"),
        ("conversations.json", lambda: zipped({"conversations.json": json.dumps([gpt_tree()]).encode()}),
         "chatgpt"),
        ("bom.jsonl", lambda: "\ufeff" + jsonl(TABLE_ROWS), "jsonl"),
        ("utf16.csv", lambda: csv_text(TABLE_ROWS).encode("utf-16"), "csv"),
    ],
)
def test_detect_format_reads_content_not_name(tmp_path: Path, name: str, make: Any, fmt: str) -> None:
    path = write(tmp_path / name, make())
    assert detect_format(path) == fmt
    assert parse_file(path).source_format == fmt


@pytest.mark.parametrize(
    ("data", "match", "guess"),
    [
        (b"", "empty", None),
        (b"  \n\t\n", "empty", None),
        (b"\x80\x81 garbage", "not UTF-8 text", None),
        (b"\xff\xfe\x00\xd8", "not UTF-16 text", None),
        (b"hello world\nthis is prose\n", "not a format", None),
        (b"[]", "no conversations", None),
        (b'{"some": "object"}', "unknown JSON shape", None),
        (b"[1, 2, 3]", "unknown JSON shape", None),
        (b'[{"mapping": {}, "id": "x", "current_node": null}]', "no messages", "chatgpt"),
        (b'[{"mapping": {"a": {"parent": null, "message":', "invalid JSON", "chatgpt"),
        (b'{"conversation_id": "x", "turns": [{"user": NaN}]}', "invalid JSON", "ingest_json"),
        (b"[" * 100_000 + b"]" * 100_000, "nesting too deep", None),
    ],
)
def test_bad_files_raise_parse_error(tmp_path: Path, data: bytes, match: str, guess: str | None) -> None:
    path = write(tmp_path / "landing.bin", data)
    with pytest.raises(ParseError, match=match) as info:
        parse_file(path)
    assert info.value.format_guess == guess


def test_broken_json_reports_line_and_column(tmp_path: Path) -> None:
    text = json.dumps([gpt_tree()], indent=1)
    with pytest.raises(ParseError) as info:
        parse_file(write(tmp_path / "conversations.json", text[: len(text) // 2]))
    assert info.value.location is not None and info.value.location.startswith("line ")
    assert info.value.format_guess == "chatgpt"


def test_missing_file_is_a_parse_error(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="FileNotFoundError"):
        parse_file(tmp_path / "nope.jsonl")
    with pytest.raises(ParseError):
        detect_format(tmp_path / "nope.jsonl")


def test_lone_surrogates_are_replaced(tmp_path: Path) -> None:
    row = {"conversation_id": "c", "role": "user", "content": "bad \ud800 text", "created_at": None}
    parsed = parse_file(write(tmp_path / "s.jsonl", json.dumps(row) + "\n"))
    content = parsed.conversations[0].messages[0].content
    assert content == "bad \ufffd text"
    content.encode("utf-8")


def test_parse_error_carries_fields_and_pickles() -> None:
    err = ParseError("bad role", format_guess="jsonl", location="line 3, column role")
    assert str(err) == "line 3, column role: bad role"
    assert isinstance(err, ValueError)
    again = pickle.loads(pickle.dumps(err))
    assert (again.message, again.format_guess, again.location) == ("bad role", "jsonl", "line 3, column role")
    assert str(ParseError("x", format_guess=None, location=None)) == "x"


def test_formats_constant() -> None:
    assert FORMATS == ("chatgpt", "claude", "jsonl", "csv", "parquet", "ingest_json")
