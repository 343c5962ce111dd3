"""A full disk (or quota) and a read-only file system, recognised wherever they surface, so that every shell
says them in one line with the path: the CLI as `error: no space left on device: <path>`, the HTTP service as a
507 (no space) or a 503 (read-only), `memlake run` as the cause of its failure.

They surface as an `OSError` with its errno (Python's own calls), as an `OSError` whose errno is set but whose
message is the library's and names no file (pyarrow), or only as text (LanceDB's and SQLite's errors, and the
error of a failed Dagster step, which reaches `memlake run` as a message and its causes).
"""

from __future__ import annotations

import errno
import re
from dataclasses import dataclass

NO_SPACE = "no space left on device"
READ_ONLY = "read-only file system"
_BY_ERRNO = {
    errno.ENOSPC: NO_SPACE,
    errno.EDQUOT: f"{NO_SPACE} (disk quota exceeded)",
    errno.EROFS: READ_ONLY,
}
# the strerror texts of those errnos, and SQLite's for a full disk
_ERRNO_OF_TEXT = {"no space left on device": errno.ENOSPC, "disk quota exceeded": errno.EDQUOT,
                  "read-only file system": errno.EROFS, "database or disk is full": errno.ENOSPC}
# one of those texts in an error message; a quoted path may follow, as Python writes it
_IN_TEXT = re.compile(rf"(?P<what>{'|'.join(map(re.escape, _ERRNO_OF_TEXT))})(?:: '(?P<path>[^']+)')?", re.IGNORECASE)


@dataclass(frozen=True)
class DiskFault:
    """The disk refused a write: `errno` is ENOSPC, EDQUOT or EROFS; `path` what was being written, if known."""

    errno: int
    path: str | None = None

    @property
    def read_only(self) -> bool:
        return self.errno == errno.EROFS

    def __str__(self) -> str:
        said = _BY_ERRNO[self.errno]
        return f"{said}: {self.path}" if self.path else said


def disk_fault(exc: BaseException) -> DiskFault | None:
    """The disk fault `exc` is or was caused by (its `__cause__` / `__context__` chain), or None."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in _BY_ERRNO:
            path = current.filename
            return DiskFault(current.errno, str(path) if path is not None else None)
        found = disk_fault_in_text(str(current))
        if found is not None:
            return found
        current = current.__cause__ or current.__context__
    return None


def disk_fault_in_text(text: str) -> DiskFault | None:
    """The disk fault an error message names (with the path Python quotes after it), or None."""
    match = _IN_TEXT.search(text)
    if match is None:
        return None
    return DiskFault(_ERRNO_OF_TEXT[match["what"].lower()], match["path"])
