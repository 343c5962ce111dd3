"""The vector store resource: the home's LanceDB tables (vector + full-text indexes)."""

from __future__ import annotations

import dagster as dg
from pydantic import Field

from memlake.settings import load_settings
from memlake.vectors import SNAPSHOT_ROWS
from memlake.vectors import VectorStore as CoreVectorStore


class VectorStoreResource(dg.ConfigurableResource):
    """LanceDB under `<home>/lancedb` (`home` empty means MEMLAKE_HOME). No setting is its config: what a sync
    indexes and how is the lake's chunking and the embedder's model (their resources' config); the index settings
    that remain are read-time (`ServingSettings`).

    `core().sync(...)` replaces exactly the rows of a scope (some days, or some keys), embedding only rows whose
    text or embedder changed, and of those only texts the embedder's cache has not got (`memlake.vectors`).
    """

    home: str = Field("", description="The memlake home whose indexes the run writes (empty: MEMLAKE_HOME).")

    def core(self) -> CoreVectorStore:
        return CoreVectorStore.of(load_settings(self.home or None), snapshot_rows=SNAPSHOT_ROWS)

    def embedder_of(self, table: str) -> str | None:
        return self.core().embedder_of(table)

    def count(self, table: str) -> int:
        return self.core().count(table)
