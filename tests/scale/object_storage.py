"""The throwaway S3-compatible server (`memlake_bench.loopback_s3`, shared with the benchmark), and a listing of
what the scale tests find on it."""

from __future__ import annotations

import pyarrow.fs as pafs

from memlake_bench.loopback_s3 import (  # noqa: F401 (the tests' names for them)
    ACCESS_KEY,
    REGION,
    SECRET_KEY,
    bucket_filesystem,
    store_environment,
    throwaway_s3,
)


def objects(filesystem: pafs.FileSystem, prefix: str) -> dict[str, tuple[int, object]]:
    """Every object under `prefix`: its size and modification time."""
    infos = filesystem.get_file_info(pafs.FileSelector(prefix, recursive=True, allow_not_found=True))
    return {info.path: (info.size, info.mtime) for info in infos if info.type == pafs.FileType.File}
