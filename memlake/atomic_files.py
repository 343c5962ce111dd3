"""Files that appear whole under their final name, or not at all: every file memlake writes goes through here.

A file is written under a hidden temporary name in its own folder (`.tmp-<random>`: the landing scan, the input
logs and the lake skip hidden names), synced, then renamed into place with `os.replace`. A write that fails
part-way (a full disk, a read-only file system, a killed process) leaves the old file, or none, under the final
name, never a file cut short: a retry after the fault writes the same name it would have.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from memlake.disk_faults import disk_fault

TMP_PREFIX = ".tmp-"


def write_atomically(path: Path, write: Callable[[Path], object], mode: int | None = None) -> Path:
    """Have `write` fill a temporary file beside `path`, then swap it in (with permissions `mode`, if given).
    A disk fault is raised as an `OSError` naming `path`, whatever the library that met it named."""
    tmp = path.parent / f"{TMP_PREFIX}{uuid.uuid4().hex}"
    try:
        write(tmp)
        if mode is not None:
            os.chmod(tmp, mode)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())  # the bytes are on disk before the name points at them
        os.replace(tmp, path)
    except OSError as exc:
        fault = disk_fault(exc)
        if fault is None:
            raise
        raise OSError(fault.errno, os.strerror(fault.errno), str(path)) from exc
    finally:
        with contextlib.suppress(OSError):  # on a read-only file system even this fails; nothing is there
            tmp.unlink(missing_ok=True)
    return path


def write_text_atomically(path: Path, text: str, mode: int | None = None) -> Path:
    return write_atomically(path, lambda tmp: tmp.write_text(text, encoding="utf-8"), mode)


def copy_atomically(source: Path, path: Path) -> Path:
    """`source`'s bytes and times at `path`."""
    return write_atomically(path, lambda tmp: shutil.copy2(source, tmp))


def write_parquet_atomically(path: Path, data: pa.Table, **options: object) -> Path:
    """`data` as a Parquet file at `path` (zstd unless `options` say otherwise)."""
    return write_atomically(path, lambda tmp: pq.write_table(data, tmp, **{"compression": "zstd", **options}))
