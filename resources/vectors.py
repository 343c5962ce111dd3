"""The vector store resource: the home's LanceDB tables (vector + full-text indexes)."""

from __future__ import annotations

import dagster as dg

from memlake.settings import load_settings
from memlake.vectors import SNAPSHOT_ROWS
from memlake.vectors import VectorStore as CoreVectorStore


class VectorStoreResource(dg.ConfigurableResource):
    """LanceDB under `<home>/lancedb` (`home` empty means MEMLAKE_HOME).

    `core().sync(...)` replaces exactly the rows of a scope (some days, or some keys), embedding only rows whose
    text or embedder changed, and of those only texts the embedder's cache has not got (`memlake.vectors`).
    """

    home: str = ""

    def core(self) -> CoreVectorStore:
        return CoreVectorStore.of(load_settings(self.home or None), snapshot_rows=SNAPSHOT_ROWS)

    def embedder_of(self, table: str) -> str | None:
        return self.core().embedder_of(table)

    def count(self, table: str) -> int:
        return self.core().count(table)
