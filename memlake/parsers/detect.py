"""Format detection: which of FORMATS a landing file holds, read from its content."""

from __future__ import annotations

import codecs
import csv
import io
import json
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from memlake.parsers.fields import load_json, numbered_lines, type_name
from memlake.parsers.limits import ParseLimits
from memlake.parsers.parsed import ParseError, joined_location
from memlake.parsers.rows import csv_header_lacks
from memlake.parsers.zip_export import export_member

_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a local file header, or an empty archive
_PARQUET_MAGIC = b"PAR1"


@dataclass
class Detected:
    """A detected format with the payload its parser needs (parsed JSON, text or bytes)."""

    format: str
    payload: Any
    archive: str | None = None
    location_prefix: str | None = None  # e.g. "zip member conversations.json"


def detect(data: bytes, name: str, limits: ParseLimits) -> Detected:
    """The format of `data`, from its content; the name only sharpens error guesses."""
    if not data.strip():
        raise ParseError("file is empty", format_guess=guess_from_name(name), location=None)
    if data[:4] in _ZIP_MAGIC:
        return _detect_zip(data, limits.max_decompressed_bytes)
    if data[:4] == _PARQUET_MAGIC:
        return Detected("parquet", data)
    return _detect_text(data, name)


def _detect_zip(data: bytes, max_decompressed_bytes: int) -> Detected:
    """The export inside a zip: a ChatGPT or Claude conversations.json."""
    member, raw = export_member(data, max_decompressed_bytes)
    where = f"zip member {member}"
    try:
        inner = _detect_text(raw, member)
    except ParseError as err:
        raise ParseError(err.message, format_guess=err.format_guess,
                         location=joined_location(where, err.location)) from None
    if inner.format not in ("chatgpt", "claude"):
        raise ParseError(f"conversations.json is {inner.format}, not a ChatGPT or Claude export",
                         format_guess=inner.format, location=where)
    return Detected(inner.format, inner.payload, archive="zip", location_prefix=where)


def _detect_text(data: bytes, name: str) -> Detected:
    """The format of a text file: an export or ingest JSON, JSONL, or CSV."""
    text = decode(data, name)
    stripped = text.lstrip()
    if not stripped:
        raise ParseError("file is empty", format_guess=guess_from_name(name), location=None)
    if stripped[0] in "[{":
        try:
            value = load_json(text)
        except ValueError as exc:
            return _detect_broken_json(text, name, exc)
        fmt = _json_shape(value)
        if fmt is None:
            raise ParseError(f"unknown JSON shape ({_shape_hint(value)})",
                             format_guess=_guess_from_text(text, name), location=None)
        # A one-line JSONL file is also a JSON document; JSONL parses from the text.
        return Detected(fmt, text if fmt == "jsonl" else value)
    header = _csv_header(text)
    missing = [c for c in ("conversation_id", "role", "content") if c not in (header or ())]
    if header is not None and not missing:
        return Detected("csv", text)
    if guess_from_name(name) == "csv":
        raise ParseError(csv_header_lacks(header or []), format_guess="csv", location="line 1")
    raise ParseError("not a format memlake reads (JSON export, JSONL, CSV, Parquet or zip)",
                     format_guess=guess_from_name(name), location=None)


def _detect_broken_json(text: str, name: str, exc: ValueError) -> Detected:
    """A text that starts like JSON but is not one document: JSONL, or broken JSON."""
    first = next((line for _, line in numbered_lines(text) if line.strip()), "")
    try:
        first_value = load_json(first)
    except ValueError:
        first_value = None
    if isinstance(first_value, dict) and _looks_like_row(first_value):
        return Detected("jsonl", text)
    location = f"line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else None
    message = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
    raise ParseError(f"invalid JSON: {message}", format_guess=_guess_from_text(text, name),
                     location=location)


def _json_shape(value: Any) -> str | None:
    """The format of a parsed JSON document, or None when its shape is unknown."""
    if isinstance(value, list):
        if not value:
            raise ParseError("empty JSON list: no conversations", format_guess=None, location=None)
        for item in value:
            if isinstance(item, dict):
                if "mapping" in item:
                    return "chatgpt"
                if "chat_messages" in item:
                    return "claude"
                if "turns" in item:
                    return "ingest_json"
        return None
    if isinstance(value, dict):
        if "turns" in value:
            return "ingest_json"
        if _looks_like_row(value):
            return "jsonl"
    return None


def _looks_like_row(value: dict[str, Any]) -> bool:
    """Whether a JSON object looks like one generic message row."""
    return "role" in value and ("content" in value or "conversation_id" in value)


def _shape_hint(value: Any) -> str:
    """A short description of a JSON value for an error message."""
    if isinstance(value, dict):
        keys = ", ".join(sorted(str(k) for k in value)[:8])
        return f"an object with keys: {keys or 'none'}"
    if isinstance(value, list):
        first = next((item for item in value if isinstance(item, dict)), None)
        return f"a list of {type_name(value[0])}" if first is None else f"a list of {_shape_hint(first)}"
    return f"a {type_name(value)}"


def guess_from_name(name: str) -> str | None:
    """The format a file name suggests; used only as a tie-break and in errors."""
    suffix = PurePosixPath(name.lower()).suffix
    return {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet",
            ".pq": "parquet"}.get(suffix)


def _guess_from_text(text: str, name: str) -> str | None:
    """The format broken JSON most likely was, from telltale keys, else from the name."""
    head = text[:200_000]
    for key, fmt in (('"mapping"', "chatgpt"), ('"chat_messages"', "claude"),
                     ('"turns"', "ingest_json"), ('"role"', "jsonl")):
        if key in head:
            return fmt
    return guess_from_name(name)


def decode(data: bytes, name: str) -> str:
    """The text of a file: UTF-8 (a BOM allowed), or UTF-16 with a BOM."""
    if data.startswith(codecs.BOM_UTF8):
        encoding = "utf-8-sig"
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"
    else:
        encoding = "utf-8"
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise ParseError(f"not {encoding.upper()} text: {exc.reason}", format_guess=guess_from_name(name),
                         location=f"byte {exc.start}") from None


def _csv_header(text: str) -> list[str] | None:
    """The header row of a CSV text, or None if the first line is not CSV."""
    try:
        row = next(csv.reader(io.StringIO(text, newline="")), None)
    except csv.Error:
        return None
    return None if row is None else [cell.strip() for cell in row]
