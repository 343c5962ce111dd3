"""A zipped export, as the services hand it out: the `conversations.json` inside it."""

from __future__ import annotations

import io
import zipfile
from pathlib import PurePosixPath

from memlake.parsers.limits import over_limit
from memlake.parsers.parsed import ParseError

_CHUNK_BYTES = 1 << 20


def export_member(data: bytes, max_bytes: int) -> tuple[str, bytes]:
    """The name and bytes of the zip's conversations.json, shallowest first; refused past `max_bytes`
    (the max_decompressed_bytes setting) decompressed."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except Exception as exc:  # zipfile raises many types on corrupt input
        raise ParseError(f"corrupt or truncated zip: {exc}", format_guess=None, location="zip") from None
    candidates = [
        info for info in infos
        if not info.is_dir()
        and PurePosixPath(info.filename).name == "conversations.json"
        and not info.filename.startswith("__MACOSX/")  # macOS resource forks, not JSON
    ]
    if not candidates:
        raise ParseError("zip holds no conversations.json", format_guess=None, location="zip")
    member = min(candidates, key=lambda info: (info.filename.count("/"), info.filename))
    where = f"zip member {member.filename}"
    if member.file_size > max_bytes:  # the header's word: refused before anything is decompressed
        raise over_limit("max_decompressed_bytes", f"member is {member.file_size:,} bytes decompressed (zip header)",
                         max_bytes, format_guess=None, location=where)
    try:
        raw = _read_member(archive, member, max_bytes)
    except Exception as exc:  # bad CRC, bad deflate stream, encryption, truncation
        raise ParseError(f"cannot read member: {exc}", format_guess=None, location=where) from None
    if raw is None:
        raise over_limit("max_decompressed_bytes", f"member decompresses to more than {max_bytes:,} bytes",
                         max_bytes, format_guess=None, location=where)
    return member.filename, raw


def _read_member(archive: zipfile.ZipFile, member: zipfile.ZipInfo, max_bytes: int) -> bytes | None:
    """The member's bytes, or None as soon as they pass `max_bytes`: a header can lie about the size."""
    chunks: list[bytes] = []
    total = 0
    with archive.open(member) as fh:
        while chunk := fh.read(_CHUNK_BYTES):
            total += len(chunk)
            if total > max_bytes:
                return None
            chunks.append(chunk)
    return b"".join(chunks)
