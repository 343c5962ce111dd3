"""Dagster resources: thin, typed wrappers that hand the domain core its settings and tools."""

from resources.embedder import Embedder, HashEmbedder
from resources.lake import LakeResource

__all__ = ["Embedder", "HashEmbedder", "LakeResource"]
