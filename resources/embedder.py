"""Embedding resources: the real sentence-transformers model, and a hashing double for tests."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import numpy as np

from memlake.embedding import HashEmbedder as HashTextEmbedder
from memlake.embedding import TextEmbedder, load_embedder


class Embedder(dg.ConfigurableResource):
    """Embeds texts with a sentence-transformers model (default: the packaged all-MiniLM-L6-v2).

    `model` = "none" turns embeddings off; `available` then says so and search
    is full-text only. The model is loaded once per process.
    """

    model: str = ""
    batch_size: int = 64
    home: str = ""  # a relative `model` may name a folder in it (a model adapted to the home)

    def _embedder(self) -> TextEmbedder | None:
        return load_embedder(self.model, self.batch_size, Path(self.home) if self.home else None)

    @property
    def available(self) -> bool:
        return self._embedder() is not None

    @property
    def name(self) -> str:
        embedder = self._embedder()
        return embedder.name if embedder else "none"

    @property
    def dim(self) -> int:
        embedder = self._embedder()
        return embedder.dim if embedder else 0

    def core(self) -> TextEmbedder | None:
        """The domain-core embedder this resource wraps (None when unavailable)."""
        return self._embedder()

    def embed(self, texts: list[str]) -> np.ndarray:
        embedder = self._embedder()
        if embedder is None:
            raise RuntimeError(f"no embedding model available (model={self.model!r})")
        return embedder.embed(texts)

    def count_tokens(self, texts: list[str]) -> list[int]:
        embedder = self._embedder()
        if embedder is None:
            return [len(t.split()) for t in texts]
        return embedder.count_tokens(texts)


class HashEmbedder(Embedder):
    """A deterministic, model-free embedder with the same interface, for fast tests."""

    dim_size: int = 384

    def _embedder(self) -> TextEmbedder | None:
        return HashTextEmbedder(self.dim_size)
