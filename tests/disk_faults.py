"""A disk that fills up, or turns read-only, under one folder, for the tests of what memlake does then.

We run as root (chmod blocks no write) and CI has no small tmpfs to fill, so the fault is injected at the calls
that put bytes into files: a Parquet file (`pyarrow.parquet.write_table`), a copy (`shutil.copyfile`, which
`shutil.copy2` calls), a text or bytes file (`Path.write_text`, `Path.write_bytes`). While the fault is on, a
write under the folder leaves what a full disk leaves (the first half of its bytes, under the name it was
writing) and raises the OS error; pyarrow's error carries no file name, as pyarrow's own does not.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest


@contextmanager
def faulty_disk(monkeypatch: pytest.MonkeyPatch, under: Path, code: int = errno.ENOSPC) -> Iterator[list[Path]]:
    """Writes under `under` fail with `code` (ENOSPC, EDQUOT, EROFS) until the block ends; yields the paths
    whose writes failed."""
    failed: list[Path] = []
    real_parquet, real_copy = pq.write_table, shutil.copyfile
    real_text, real_bytes = Path.write_text, Path.write_bytes

    def hit(where: Any) -> bool:
        return isinstance(where, str | os.PathLike) and Path(where).resolve().is_relative_to(under.resolve())

    def half_then_fail(path: Path, data: bytes, named: bool) -> None:
        failed.append(path)
        if code != errno.EROFS:  # a read-only file system creates nothing; a full one, a file cut short
            real_bytes(path, data[: len(data) // 2])
        raise OSError(code, os.strerror(code), *([str(path)] if named else []))

    def write_table(table: pa.Table, where: Any, *args: Any, **kwargs: Any) -> None:
        if not hit(where):
            return real_parquet(table, where, *args, **kwargs)
        sink = pa.BufferOutputStream()
        real_parquet(table, sink, *args, **kwargs)
        half_then_fail(Path(where), sink.getvalue().to_pybytes(), named=False)

    def copyfile(source: Any, target: Any, *args: Any, **kwargs: Any) -> Any:
        if not hit(target):
            return real_copy(source, target, *args, **kwargs)
        half_then_fail(Path(target), Path(source).read_bytes(), named=True)

    def write_text(self: Path, data: str, *args: Any, **kwargs: Any) -> int:
        if not hit(self):
            return real_text(self, data, *args, **kwargs)
        half_then_fail(self, data.encode(), named=True)
        return 0

    def write_bytes(self: Path, data: bytes) -> int:
        if not hit(self):
            return real_bytes(self, data)
        half_then_fail(self, bytes(data), named=True)
        return 0

    with monkeypatch.context() as patched:
        patched.setattr(pq, "write_table", write_table)
        patched.setattr(shutil, "copyfile", copyfile)
        patched.setattr(Path, "write_text", write_text)
        patched.setattr(Path, "write_bytes", write_bytes)
        yield failed
