"""Embedding resources: the real sentence-transformers model, and a hashing double for tests."""

from __future__ import annotations

from functools import cached_property

import dagster as dg
import numpy as np
from pydantic import Field

from memlake.embedding import HashEmbedder as HashTextEmbedder
from memlake.embedding import TextEmbedder, embedding_cache, load_embedder
from memlake.embedding_cache import EmbeddingCache
from memlake.settings import Settings
from resources.run_config import EmbeddingRunConfig, settings_for_run


class EmbedderResource(dg.ConfigurableResource):
    """Embeds texts with the run's embedding model (`embedding.embedding_model`, default: the packaged
    all-MiniLM-L6-v2, run by `embedding_backend`), in batches of `embedding_batch_size`; unset: the home's.

    A model of "none" turns embeddings off; `available` then says so and search is full-text only. The model is
    loaded once per process.
    """

    home: str = Field("", description="The memlake home whose settings name the model (empty: MEMLAKE_HOME); a "
                      "relative model path names a folder in it (a model adapted to the home).")
    embedding: EmbeddingRunConfig = Field(default_factory=EmbeddingRunConfig,
                                          description="The embedding model and how it runs (memlake.toml's "
                                          "embedding_*).")

    @cached_property
    def settings(self) -> Settings:
        """The home's settings with this run's config on top."""
        return settings_for_run(self.home, self.embedding)

    def _embedder(self) -> TextEmbedder | None:
        settings = self.settings
        return load_embedder(settings.embedding_model, settings.embedding_batch_size, settings.home,
                             settings.embedding_backend)

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

    def cache(self) -> EmbeddingCache | None:
        """The home's cache of this embedder's vectors, by text hash (None when unavailable)."""
        return embedding_cache(self.settings, self._embedder())

    def embed(self, texts: list[str]) -> np.ndarray:
        embedder = self._embedder()
        if embedder is None:
            raise RuntimeError(f"no embedding model available (model={self.settings.embedding_model!r})")
        return embedder.embed(texts)

    def count_tokens(self, texts: list[str]) -> list[int]:
        embedder = self._embedder()
        if embedder is None:
            return [len(t.split()) for t in texts]
        return embedder.count_tokens(texts)


class HashEmbedderResource(EmbedderResource):
    """A deterministic, model-free embedder with the same interface, for fast tests."""

    dim_size: int = 384

    def _embedder(self) -> TextEmbedder | None:
        return HashTextEmbedder(self.dim_size)
