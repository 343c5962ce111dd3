"""The embedding cache: one vector per (model identity, text hash), kept under `<home>/cache/embeddings/`.

A rechunk or a reindex (a settings change, a lost `lancedb/`, a table rebuilt for another model and back)
asks the model again only for texts it has never embedded. Each model identity has its own folder (the
identity names the model, its weights and the backend that runs it), so an adapted model never reads the
default model's vectors. A folder holds Parquet segments of (text_sha256, vector), never text: each write
adds one segment (written to a temporary name, then renamed), and many small segments are folded into one.
A lookup reads the hash column of every segment, then only the row groups that hold a hit.

`forget_texts` removes hashes from every model's folder by rewriting the segments that hold them: the
forgotten vectors are gone from disk, not hidden.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from filelock import FileLock

from memlake.atomic_files import write_parquet_atomically, write_text_atomically
from memlake.chunks import text_sha256

HASH = "text_sha256"
VECTOR = "vector"
SEGMENT_SUFFIX = ".parquet"
# More segments than this in a folder: the next write folds them into one (a lookup opens every segment).
MAX_SEGMENTS = 32
# Rows per Parquet row group: a lookup reads the vectors of the row groups holding a hit, no more.
ROW_GROUP_ROWS = 2048
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass
class EmbedCounts:
    """What one `embed_unique` call did: texts asked for, texts the model embedded, texts the cache had."""

    texts: int = 0
    embedded: int = 0
    from_cache: int = 0
    duplicates: int = 0


class EmbeddingCache:
    """The cached vectors of one model identity, in `root/<readable name>-<identity hash>/`."""

    def __init__(self, root: str | Path, identity: str, dim: int) -> None:
        self.identity = identity
        self.dim = dim
        digest = hashlib.sha256(identity.encode()).hexdigest()[:16]
        readable = _UNSAFE.sub("_", identity.split("|", 1)[0])[:48]
        self.path = Path(root) / f"{readable}-{digest}"

    def lookup(self, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """The cached vectors of those of `hashes` that are cached."""
        wanted = set(hashes)
        found: dict[str, np.ndarray] = {}
        if not wanted or not self.path.is_dir():
            return found
        for segment in _segments(self.path):
            _read_hits(segment, wanted, self.dim, found)
            wanted.difference_update(found)
            if not wanted:
                break
        return found

    def add(self, hashes: list[str], vectors: np.ndarray) -> None:
        """Keep these vectors (one new segment); fold the segments into one when there are many."""
        if not hashes:
            return
        self.path.mkdir(parents=True, exist_ok=True)
        write_text_atomically(self.path / "identity.txt", self.identity + "\n")
        with FileLock(str(self.path / ".lock")):
            _write_segment(self.path / f"{uuid.uuid4().hex}{SEGMENT_SUFFIX}", _table(hashes, vectors, self.dim))
            segments = _segments(self.path)
            if len(segments) > MAX_SEGMENTS:
                _fold(self.path, segments)

    def count(self) -> int:
        """Vectors held (a hash kept twice counts twice until the segments are folded)."""
        if not self.path.is_dir():
            return 0
        return sum(pq.ParquetFile(s).metadata.num_rows for s in _segments(self.path))


def embed_unique(
    texts: list[str], embed: Callable[[list[str]], np.ndarray], cache: EmbeddingCache | None
) -> tuple[np.ndarray, EmbedCounts]:
    """Vectors of `texts` in order: each distinct text embedded once, and only if `cache` has not got it."""
    counts = EmbedCounts(texts=len(texts))
    keys = [text_sha256(t) for t in texts]
    first: dict[str, str] = {}
    for key, text in zip(keys, texts, strict=True):
        first.setdefault(key, text)
    counts.duplicates = len(texts) - len(first)
    known = cache.lookup(first) if cache is not None else {}
    counts.from_cache = len(known)
    missing = [key for key in first if key not in known]
    if missing:
        fresh = np.asarray(embed([first[key] for key in missing]), dtype=np.float32)
        counts.embedded = len(missing)
        known.update(zip(missing, fresh, strict=True))
        if cache is not None:
            cache.add(missing, fresh)
    if not texts:
        return np.zeros((0, cache.dim if cache is not None else 0), dtype=np.float32), counts
    return np.stack([known[key] for key in keys]).astype(np.float32, copy=False), counts


def forget_texts(root: str | Path, hashes: Iterable[str]) -> int:
    """Remove these text hashes from every model's cache under `root`; returns how many vectors went."""
    gone = set(hashes)
    root = Path(root)
    if not gone or not root.is_dir():
        return 0
    removed = 0
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        with FileLock(str(folder / ".lock")):
            for segment in _segments(folder):
                table = pq.read_table(segment)
                keep = np.array([h not in gone for h in table.column(HASH).to_pylist()], dtype=bool)
                if keep.all():
                    continue
                removed += int((~keep).sum())
                if keep.any():
                    _write_segment(segment, table.filter(pa.array(keep)))  # replaces the file: the old bytes go
                else:
                    segment.unlink()
    return removed


def _segments(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob(f"*{SEGMENT_SUFFIX}") if not p.name.startswith("."))


def _table(hashes: list[str], vectors: np.ndarray, dim: int) -> pa.Table:
    flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1))
    return pa.table({HASH: pa.array(hashes, pa.string()), VECTOR: pa.FixedSizeListArray.from_arrays(flat, dim)})


def _write_segment(path: Path, table: pa.Table) -> None:
    """Written whole or not at all: a reader sees a whole segment or none."""
    write_parquet_atomically(path, table, row_group_size=ROW_GROUP_ROWS)


def _read_hits(segment: Path, wanted: set[str], dim: int, found: dict[str, np.ndarray]) -> None:
    """Add to `found` the vectors of `wanted` hashes in `segment`, reading only the row groups that hold them."""
    try:
        file = pq.ParquetFile(segment)
    except FileNotFoundError:  # folded or forgotten by a writer since the listing
        return
    for group in range(file.num_row_groups):
        hashes = file.read_row_group(group, columns=[HASH]).column(HASH).to_pylist()
        hits = [i for i, h in enumerate(hashes) if h in wanted and h not in found]
        if hits:
            column = file.read_row_group(group, columns=[VECTOR]).column(VECTOR)
            matrix = np.asarray(column.combine_chunks().flatten(), dtype=np.float32).reshape(-1, dim)
            for i in hits:
                found[hashes[i]] = matrix[i].copy()


def _fold(folder: Path, segments: list[Path]) -> None:
    """Fold `segments` into one (each hash once), then remove them."""
    tables = [pq.read_table(s) for s in segments]
    merged = pa.concat_tables(tables)
    seen: set[str] = set()
    keep = []
    for h in merged.column(HASH).to_pylist():
        keep.append(h not in seen)
        seen.add(h)
    _write_segment(folder / f"{uuid.uuid4().hex}{SEGMENT_SUFFIX}", merged.filter(pa.array(keep)))
    for segment in segments:
        segment.unlink(missing_ok=True)
