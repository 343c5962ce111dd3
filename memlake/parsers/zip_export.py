"""A zipped export, as the services hand it out: the `conversations.json` inside it."""

from __future__ import annotations

import io
import zipfile
from pathlib import PurePosixPath

from memlake.parsers.parsed import ParseError

# A zip member larger than this is refused: it guards against zip bombs, and no real
# conversations.json comes near it.
MAX_ZIP_MEMBER_BYTES = 1 << 30


def export_member(data: bytes) -> tuple[str, bytes]:
    """The name and bytes of the zip's conversations.json, shallowest first."""
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
    if member.file_size > MAX_ZIP_MEMBER_BYTES:
        raise ParseError(f"member too large ({member.file_size} bytes)", format_guess=None, location=where)
    try:
        with archive.open(member) as fh:
            raw = fh.read(MAX_ZIP_MEMBER_BYTES + 1)
    except Exception as exc:  # bad CRC, bad deflate stream, encryption, truncation
        raise ParseError(f"cannot read member: {exc}", format_guess=None, location=where) from None
    if len(raw) > MAX_ZIP_MEMBER_BYTES:
        raise ParseError("member too large", format_guess=None, location=where)
    return member.filename, raw
