"""Whatever lands, the manifest either ingests it or quarantines it with a reason; landing is untouched."""

import io
import json
import random
import time
import zipfile
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from memlake.lake import Lake
from memlake.landing import update_manifest
from memlake.schemas import LANDING_MANIFEST
from memlake.settings import load_settings
from tests.conftest import SAMPLES
from tests.transcripts.test_parsers_fuzz import ROWS, WRONG_VALUES, encode_jsonl, fixed_time_entry, paths
from tests.transcripts.test_parsers_fuzz import SEEDS as PARSER_SEEDS

SEEDS = {p.name: p.read_bytes() for p in sorted((SAMPLES / "demo").iterdir())}


@st.composite
def damaged_file(draw) -> tuple[str, bytes]:
    name = draw(st.sampled_from(sorted(SEEDS)))
    data = bytearray(SEEDS[name])
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["truncate", "flip", "insert", "delete"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "truncate":
            del data[at:]
        elif kind == "flip" and data:
            data[at] ^= draw(st.integers(1, 255))
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif data:
            del data[at : at + draw(st.integers(1, 64))]
    return name, bytes(data)


@hsettings(max_examples=40, deadline=None, derandomize=True, database=None,
           suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(files=st.lists(damaged_file(), min_size=1, max_size=3))
def test_every_landed_file_is_ingested_or_quarantined_with_a_reason(tmp_path_factory, files):
    home = tmp_path_factory.mktemp("home")
    settings = load_settings(home)
    settings.ensure_dirs()
    landed: dict[Path, bytes] = {}
    for index, (name, data) in enumerate(files):
        path = settings.landing_dir / "demo" / f"{index}-{name}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        landed[path] = data

    update = update_manifest(settings, Lake.empty(LANDING_MANIFEST), now=datetime(2025, 1, 1, tzinfo=UTC))

    rows = pl.DataFrame(update.rows, infer_schema_length=None)
    assert set(rows["source_file"]) == {p.relative_to(settings.landing_dir).as_posix() for p in landed}
    assert set(rows["status"]) <= {"ingested", "quarantined", "duplicate"}
    for row in rows.filter(pl.col("status") == "quarantined").iter_rows(named=True):
        assert row["reason"]
        reason_file = settings.home / (row["quarantine_path"] + ".reason.json")
        assert json.loads(reason_file.read_text())["error"]
    assert {p: p.read_bytes() for p in landed} == landed


# --- the fuzzed-input run: over a thousand generated files of every format in one landing folder --------

FUZZ_FILES = 1_200
LIMITS = {"max_file_bytes": 256 << 10, "max_decompressed_bytes": 512 << 10, "max_message_chars": 10_000,
          "max_messages_per_conversation": 200}  # low, so that huge inputs stay cheap to make


def wrong_value(rng: random.Random, value: Any) -> Any:
    """`value` with one of its parts replaced by a wrong type, dropped or doubled (a deep copy)."""
    value = json.loads(json.dumps(value))
    path = rng.choice(paths(value))
    if not path:
        return rng.choice(WRONG_VALUES)
    parent = value
    for step in path[:-1]:
        parent = parent[step]
    action = rng.choice(["replace", "drop", "double"])
    if action == "replace":
        parent[path[-1]] = rng.choice(WRONG_VALUES)
    elif action == "drop":
        del parent[path[-1]]
    else:
        parent[path[-1]] = [parent[path[-1]]] * 2
    return value


def huge_field(rng: random.Random, value: Any) -> Any:
    """`value` with one string (a text, an id, a date...) made longer than max_message_chars."""
    value = json.loads(json.dumps(value))
    strings = [p for p in paths(value) if p and isinstance(_at(value, p), str)]
    path = rng.choice(strings)
    parent = _at(value, path[:-1])
    parent[path[-1]] = "y" * (LIMITS["max_message_chars"] + rng.randint(1, 5_000))
    return value


def many_messages(value: Any) -> Any:
    """`value` with each message list (rows, chat_messages, turns) made longer than the limit allows."""
    copies = LIMITS["max_messages_per_conversation"] + 10
    if isinstance(value, list) and value and "role" in value[0]:  # message rows
        return [{**row, "message_id": f"m{n}", "conversation_id": "c1", "agent_id": "a"}
                for n, row in enumerate(value[:1] * copies)]
    value = json.loads(json.dumps(value))
    for conversation in value:
        for key in ("chat_messages", "turns"):
            if key in conversation:
                conversation[key] = [{**m, "uuid": f"m{n}"} if "uuid" in m else m
                                     for n, m in enumerate(conversation[key][:1] * copies)]
    return value


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


def zip_bomb_lite(rng: random.Random) -> bytes:
    """A small zip whose conversations.json decompresses past max_decompressed_bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        blanks = b" " * (LIMITS["max_decompressed_bytes"] + rng.randint(1, 9999))
        archive.writestr(fixed_time_entry("conversations.json"), b"[" + blanks)
    return buffer.getvalue()


def damaged_bytes(rng: random.Random, raw: bytes) -> bytes:
    """`raw` truncated, or with a few bytes flipped."""
    if rng.random() < 0.4:
        return raw[: rng.randint(0, len(raw))]
    data = bytearray(raw)
    for _ in range(rng.randint(1, 4)):
        data[rng.randrange(len(data))] ^= rng.randint(1, 255)
    return bytes(data)


KINDS = ("valid", "damaged", "wrong_type", "huge_field", "many_messages", "too_big", "zip_bomb", "binary")


def fuzzed_file(rng: random.Random, kind: str, seed: str) -> bytes:
    """One generated file of `kind`, from the valid seed file `seed` of test_parsers_fuzz."""
    value, encode, _ = PARSER_SEEDS[seed]
    if kind == "zip_bomb":
        return zip_bomb_lite(rng)
    if kind == "binary":
        return rng.choice([b"", b"PK\x03\x04", b"PAR1", b"\xef\xbb\xbf", b"["]) + rng.randbytes(rng.randint(0, 600))
    if kind == "too_big":
        return encode_jsonl(ROWS * (LIMITS["max_file_bytes"] // 200))
    if kind == "damaged":
        return damaged_bytes(rng, encode(value))
    changed = {"valid": lambda v: v, "wrong_type": lambda v: wrong_value(rng, v),
               "huge_field": lambda v: huge_field(rng, v), "many_messages": many_messages}[kind](value)
    try:
        return encode(changed)
    except (pa.ArrowException, TypeError, ValueError, OverflowError, KeyError):  # Parquet refuses some shapes
        return damaged_bytes(rng, encode(value))


def test_a_thousand_fuzzed_files_are_each_ingested_or_quarantined_with_a_reason_and_landing_is_untouched(tmp_path):
    rng = random.Random(20)
    settings = load_settings(tmp_path / "home", **LIMITS)
    settings.ensure_dirs()
    landed: dict[Path, tuple[bytes, int]] = {}
    for number in range(FUZZ_FILES):
        seed = sorted(PARSER_SEEDS)[number % len(PARSER_SEEDS)]
        kind = KINDS[(number // len(PARSER_SEEDS)) % len(KINDS)]
        path = settings.landing_dir / ("demo" if number % 3 else "") / f"{number:04d}-{kind}-{PARSER_SEEDS[seed][2]}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(fuzzed_file(rng, kind, seed))
        landed[path] = (path.read_bytes(), path.stat().st_mtime_ns)

    started = time.monotonic()
    update = update_manifest(settings, Lake.empty(LANDING_MANIFEST), now=datetime(2025, 1, 1, tzinfo=UTC))
    seconds = time.monotonic() - started

    rows = pl.DataFrame(update.rows, infer_schema_length=None)
    by_file = rows.group_by("source_file").agg(pl.col("status").unique())
    assert by_file.height == FUZZ_FILES
    assert all(len(statuses) == 1 for statuses in by_file["status"])
    assert set(rows["status"]) <= {"ingested", "quarantined", "duplicate"}
    for row in rows.filter(pl.col("status") != "ingested").iter_rows(named=True):
        assert row["reason"], row
    for row in rows.filter(pl.col("status") == "quarantined").iter_rows(named=True):
        assert json.loads((settings.home / (row["quarantine_path"] + ".reason.json")).read_text())["error"]
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in landed} == landed
    counts = dict(Counter(dict(zip(by_file["source_file"], by_file["status"].list.first(), strict=True)).values()))
    limits_hit = {name: rows["reason"].str.contains(name).sum() for name in LIMITS}
    print(f"\nfuzzed run: {FUZZ_FILES} files in {seconds:.1f} s: {counts}; quarantined over a limit: {limits_hit}")
    assert counts.get("ingested", 0) > 0 and all(limits_hit.values())
