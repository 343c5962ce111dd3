"""Fuzz tests for memlake.parsers: mutated and truncated files raise ParseError or parse, nothing else.

Each format starts from a small valid file, then hypothesis truncates it, flips, inserts or
deletes bytes, or (for JSON-shaped formats) swaps values for wrong types and drops keys. The
run is bounded and derandomized so CI sees the same examples every time.
"""

from __future__ import annotations

import io
import json
import tempfile
import zipfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlake.parsers import FORMATS, ROLES, ParsedFile, ParseError, parse_file

FUZZ = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Values of every JSON type, including ones that are valid somewhere and wrong elsewhere.
WRONG_VALUES: list[Any] = [None, True, 0, -1, 1.5, 1e308, 10**30, "", "x", "2024-13-45", "\ud800", [], {},
                           [None], {"x": 1}, "user", "system", "text", "2024-01-01T00:00:00+14:00"]


# --- valid seeds -------------------------------------------------------------------------


def chatgpt_seed() -> list[dict[str, Any]]:
    """A two-branch ChatGPT conversation."""
    def msg(mid: str, role: str, text: str, t: float) -> dict[str, Any]:
        return {"id": mid, "author": {"role": role, "name": None}, "create_time": t,
                "content": {"content_type": "text", "parts": [text]},
                "metadata": {"is_visually_hidden_from_conversation": role == "system"}, "recipient": "all"}

    mapping = {
        "r": {"id": "r", "parent": None, "children": ["s"], "message": None},
        "s": {"id": "s", "parent": "r", "children": ["u1", "u2"], "message": msg("s", "system", "", 1.0)},
        "u1": {"id": "u1", "parent": "s", "children": [], "message": msg("u1", "user", "old", 2.0)},
        "u2": {"id": "u2", "parent": "s", "children": ["a2"], "message": msg("u2", "user", "new", 3.0)},
        "a2": {"id": "a2", "parent": "u2", "children": [], "message": msg("a2", "assistant", "answer", 4.5)},
    }
    return [{"id": "c1", "title": "T", "create_time": 1.0, "update_time": 4.5, "current_node": "a2",
             "mapping": mapping}]


def claude_seed() -> list[dict[str, Any]]:
    """A Claude conversation with thinking and tool blocks."""
    return [{"uuid": "k1", "name": "N", "created_at": "2024-02-01T00:00:00Z", "chat_messages": [
        {"uuid": "m1", "sender": "human", "text": "hi", "created_at": "2024-02-01T00:00:01Z",
         "content": [{"type": "text", "text": "hi"}]},
        {"uuid": "m2", "sender": "assistant", "text": "think\n\nhello", "created_at": "2024-02-01T00:00:02Z",
         "content": [{"type": "thinking", "thinking": "think"},
                     {"type": "tool_use", "name": "t", "input": {}},
                     {"type": "text", "text": "hello"}]},
        {"uuid": "m3", "sender": "human", "text": "legacy", "created_at": None},
    ]}]


ROWS: list[dict[str, Any]] = [
    {"agent_id": "a", "conversation_id": "c1", "message_id": "m1", "role": "user", "content": "hi",
     "created_at": "2024-03-01T10:00:00Z", "speaker": "P", "title": "T"},
    {"agent_id": "a", "conversation_id": "c1", "message_id": "m2", "role": "assistant",
     "content": "yo, there", "created_at": "2024-03-01T10:00:05", "speaker": None, "title": None},
    {"agent_id": "b", "conversation_id": "c2", "message_id": None, "role": "tool", "content": "out",
     "created_at": "2024-03-02", "speaker": None, "title": None},
]

INGEST: list[dict[str, Any]] = [
    {"agent_id": "a", "conversation_id": "s1", "session_date": "2024-04-01",
     "turns": [{"user": "q", "assistant": "a"}, {"user": "q2"}]},
    {"conversation_id": "s2", "turns": [{"user": "x", "assistant": "y"}]},
]


def encode_jsonl(rows: list[Any]) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def encode_csv(rows: Any) -> bytes:
    """Rows as CSV; the header comes from the first row, so a key dropped there drops the column."""
    import csv

    def cell(value: Any) -> str:
        if value is None:
            return ""
        return value if isinstance(value, str) else json.dumps(value)

    rows = rows if isinstance(rows, list) else [rows]
    first = next((row for row in rows if isinstance(row, dict)), ROWS[0])
    header = list(first)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    for row in rows:
        writer.writerow([cell(row.get(k)) for k in header] if isinstance(row, dict) else [cell(row)])
    # surrogatepass: a mutated lone surrogate becomes invalid UTF-8 in the file, which is fuzz too.
    return buffer.getvalue().encode("utf-8", "surrogatepass")


def encode_parquet(rows: list[dict[str, Any]]) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), buffer)
    return buffer.getvalue()


def encode_zip(value: Any, member: str = "conversations.json") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(fixed_time_entry("chat.html"), b"<html/>")
        archive.writestr(fixed_time_entry(member), json.dumps(value).encode())
    return buffer.getvalue()


def fixed_time_entry(name: str) -> zipfile.ZipInfo:
    """A zip entry dated at a fixed time, so that the same content makes the same bytes on every run."""
    entry = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
    entry.compress_type = zipfile.ZIP_DEFLATED
    return entry


# Per seed: the structured value, how to encode it, and the file name it lands under.
SEEDS: dict[str, tuple[Any, Callable[[Any], bytes], str]] = {
    "chatgpt": (chatgpt_seed(), lambda v: json.dumps(v).encode(), "conversations.json"),
    "claude": (claude_seed(), lambda v: json.dumps(v, indent=1).encode(), "conversations.json"),
    "chatgpt_zip": (chatgpt_seed(), encode_zip, "export.zip"),
    "claude_zip": (claude_seed(), lambda v: encode_zip(v, "folder/conversations.json"), "export.zip"),
    "jsonl": (ROWS, encode_jsonl, "chat.jsonl"),
    "csv": (ROWS, encode_csv, "chat.csv"),
    "parquet": (ROWS, encode_parquet, "chat.parquet"),
    "ingest_json": (INGEST, lambda v: json.dumps(v).encode(), "ingest.json"),
}


# --- mutations ---------------------------------------------------------------------------


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path (keys and indexes) into a JSON value, the root included."""
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += paths(child, (*prefix, index))
    return found


def mutate_value(data: st.DataObject, value: Any) -> Any:
    """One structural mutation: replace a value with a wrong one, drop it, or duplicate it."""
    value = json.loads(json.dumps(value))  # a deep copy
    path = data.draw(st.sampled_from(paths(value)))
    if not path:
        return data.draw(st.sampled_from(WRONG_VALUES))
    parent = value
    for step in path[:-1]:
        parent = parent[step]
    key = path[-1]
    action = data.draw(st.sampled_from(["replace", "drop", "duplicate"]))
    if action == "replace":
        parent[key] = data.draw(st.sampled_from(WRONG_VALUES))
    elif action == "drop":
        del parent[key]
    elif isinstance(parent, list):
        parent.insert(key, parent[key])
    else:
        parent[key] = [parent[key], parent[key]]
    return value


def mutate_bytes(data: st.DataObject, raw: bytes) -> bytes:
    """One byte-level mutation: truncate, flip, insert or delete."""
    if not raw:
        return raw
    offset = data.draw(st.integers(0, len(raw) - 1))
    action = data.draw(st.sampled_from(["truncate", "flip", "insert", "delete"]))
    if action == "truncate":
        return raw[:offset]
    if action == "flip":
        mask = data.draw(st.integers(1, 255))
        return raw[:offset] + bytes([raw[offset] ^ mask]) + raw[offset + 1:]
    if action == "insert":
        return raw[:offset] + data.draw(st.binary(min_size=1, max_size=8)) + raw[offset:]
    end = data.draw(st.integers(offset, min(len(raw), offset + 64)))
    return raw[:offset] + raw[end:]


def check(raw: bytes, name: str) -> None:
    """parse_file on `raw` returns a sane ParsedFile or raises ParseError, and leaves the file alone."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(raw)
        try:
            parsed = parse_file(path)
        except ParseError as err:
            assert isinstance(err.message, str)
            assert err.format_guess is None or err.format_guess in FORMATS
        else:
            assert_sane(parsed)
        assert path.read_bytes() == raw


def assert_sane(parsed: ParsedFile) -> None:
    """The invariants every successful parse keeps."""
    assert parsed.source_format in FORMATS
    assert parsed.archive in (None, "zip")
    assert parsed.conversations and any(c.messages for c in parsed.conversations)
    for conv in parsed.conversations:
        assert isinstance(conv.conversation_id, str) and conv.conversation_id
        for t in (conv.started_at, *(m.created_at for m in conv.messages)):
            assert t is None or (type(t) is datetime and t.tzinfo is UTC)
        for message in conv.messages:
            assert message.role in ROLES
            assert isinstance(message.content, str) and message.content.strip()
            message.content.encode("utf-8")  # valid Unicode, storable in Parquet
        assert all(isinstance(n, int) and n > 0 for n in conv.skipped.values())


# --- tests -------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", list(SEEDS))
def test_seeds_are_valid(seed: str) -> None:
    value, encode, name = SEEDS[seed]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(encode(value))
        assert_sane(parse_file(path))


@pytest.mark.parametrize("seed", list(SEEDS))
@FUZZ
@given(data=st.data())
def test_mutated_files_parse_or_raise_parse_error(seed: str, data: st.DataObject) -> None:
    value, encode, name = SEEDS[seed]
    for _ in range(data.draw(st.integers(0, 3), label="structural")):
        value = mutate_value(data, value)
    try:
        raw = encode(value)
    except Exception:
        # Parquet cannot hold some mutated rows at all (mixed types, not a list of rows); fuzz the
        # bytes instead. test_parquet_wrong_column_types covers wrong types in Parquet.
        raw = encode(SEEDS[seed][0])
    for _ in range(data.draw(st.integers(0 if value is not SEEDS[seed][0] else 1, 3), label="bytes")):
        raw = mutate_bytes(data, raw)
    if data.draw(st.booleans(), label="misleading name"):
        name = data.draw(st.sampled_from(["notes.csv", "chat.jsonl", "data.parquet", "x.zip", "x.json"]))
    check(raw, name)


@FUZZ
@given(raw=st.binary(max_size=512),
       prefix=st.sampled_from([b"", b"PK\x03\x04", b"PAR1", b"[", b"{", b"\xef\xbb\xbf"]))
def test_arbitrary_bytes_parse_or_raise_parse_error(raw: bytes, prefix: bytes) -> None:
    check(prefix + raw, "landing.bin")


PARQUET_COLUMNS: list[pa.Array] = [
    pa.array([1, 2, 3]),
    pa.array([1.5, None, float("nan")]),
    pa.array([True, False, None]),
    pa.array([None, None, None], pa.null()),
    pa.array([["a"], [], None]),
    pa.array([{"x": 1}, None, {"x": 2}]),
    pa.array([0, 10**18, -(10**18)], pa.timestamp("ns", tz="Asia/Tokyo")),
    pa.array([0, 2**31 - 1, -(2**31)], pa.date32()),
    pa.array([b"\xff", b"", None], pa.binary()),
    pa.array(["", "", ""]),
    pa.array(["x", "y", "z"], pa.large_string()),
    pa.DictionaryArray.from_arrays(pa.array([0, 1, 0]), pa.array(["user", "robot"])),
]


@pytest.mark.parametrize("column", list(ROWS[0]))
def test_parquet_wrong_column_types(column: str) -> None:
    base = pa.Table.from_pylist(ROWS)
    index = base.column_names.index(column)
    check(encode_table(base.remove_column(index)), "chat.parquet")
    for array in PARQUET_COLUMNS:
        check(encode_table(base.set_column(index, column, array)), "chat.parquet")


def encode_table(table: pa.Table) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()
