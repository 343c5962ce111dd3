"""The vector store resource: the home's LanceDB tables (vector + full-text indexes)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import dagster as dg
import numpy as np
import polars as pl
import pyarrow as pa

from memlake.embedding_cache import EmbeddingCache
from memlake.settings import load_settings
from memlake.vectors import POOLED_KINDS, EmbedSpans, SyncResult
from memlake.vectors import VectorStore as CoreVectorStore


class VectorStoreResource(dg.ConfigurableResource):
    """LanceDB under `<home>/lancedb` (`home` empty means MEMLAKE_HOME).

    `upsert` replaces exactly the rows of a scope (some days, or some keys),
    embedding only rows whose text or embedder changed, and of those only texts `cache` has not got.
    """

    home: str = ""

    def core(self) -> CoreVectorStore:
        return CoreVectorStore(load_settings(self.home or None).lancedb_dir)

    def upsert(
        self,
        table: str,
        rows: pl.DataFrame,
        *,
        base_schema: pa.Schema,
        key: str,
        scope: str,
        embed: Callable[[list[str]], np.ndarray] | None,
        embedder: str,
        dim: int,
        pool_by: str | None = None,
        pooled_kinds: Sequence[str] = POOLED_KINDS,
        cache: EmbeddingCache | None = None,
        spanned_kinds: Sequence[str] = (),
        embed_spans: EmbedSpans | None = None,
    ) -> SyncResult:
        return self.core().sync(
            table,
            rows,
            base_schema=base_schema,
            key=key,
            scope=scope,
            embed=embed,
            embedder=embedder,
            dim=dim,
            pool_by=pool_by,
            pooled_kinds=pooled_kinds,
            cache=cache,
            spanned_kinds=spanned_kinds,
            embed_spans=embed_spans,
        )

    def embedder_of(self, table: str) -> str | None:
        return self.core().embedder_of(table)

    def count(self, table: str) -> int:
        return self.core().count(table)
