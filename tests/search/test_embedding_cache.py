"""The embedding cache: a reindex asks the model only for texts it never embedded, per model.

The pipeline runs with a hashing embedder that records every text the model is asked to embed; the chunk
texts among them are what the index writer paid for.
"""

from __future__ import annotations

import shutil

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest

from memlake.embedding import HashEmbedder
from memlake.embedding_cache import EmbeddingCache, embed_unique, forget_texts
from memlake.lake import Lake
from memlake.schemas import CHUNKS
from memlake.settings import load_settings, write_home_setting
from resources import HashEmbedderResource, build_resources
from tests.conftest import land
from tests.search.helpers import ALICE
from tests.transcripts.helpers import jsonl, msg

# ALICE's chats, and one long enough that a wider window changes its window texts
CHATS = [*ALICE, *(msg("trip", i, ("user", "assistant")[i % 2], f"Day {i} of the Lisbon trip plan.", "2024-04-01")
                   for i in range(5))]
ASKED: list[str] = []  # every text a counting embedder was asked to embed, in order


class CountingHashEmbedder(HashEmbedder):
    def __init__(self, dim: int = 384, name: str | None = None) -> None:
        super().__init__(dim)
        self.name = name or self.name

    def embed(self, texts: list[str]) -> np.ndarray:
        ASKED.extend(texts)
        return super().embed(texts)


class CountingResource(HashEmbedderResource):
    model_name: str = ""

    def _embedder(self) -> CountingHashEmbedder:  # type: ignore[override]
        return CountingHashEmbedder(self.dim_size, self.model_name or None)


@pytest.fixture
def counting(fast_resources):
    ASKED.clear()
    fast_resources["embedder"] = CountingResource()
    return fast_resources


def chunk_texts(settings) -> set[str]:
    """The texts the chunk index embeds (sessions, and windows by default, are pooled from their turns)."""
    from memlake.chunks import pooled_chunk_kinds

    pooled = pooled_chunk_kinds(load_settings(settings.home))
    chunks = Lake(settings.lake_dir).read(CHUNKS).filter(~pl.col("kind").is_in(pooled))
    return set(chunks["embed_text"].to_list())


def asked_chunk_texts(settings) -> list[str]:
    texts = chunk_texts(settings)
    return [t for t in ASKED if t in texts]


def test_a_rechunk_embeds_only_new_texts_and_a_lost_index_embeds_none(settings, counting, run_pipeline):
    write_home_setting(settings.home, "chunk_pool_windows", "false")  # windows embedded: a rechunk makes new texts
    counting.update({**build_resources(load_settings(settings.home)), "embedder": counting["embedder"]})
    land(settings, "alice", "chat.jsonl", jsonl(*CHATS))
    assert run_pipeline().success
    first = chunk_texts(settings)
    assert sorted(asked_chunk_texts(settings)) == sorted(first)  # each distinct text once

    # a settings change that rechunks: the turns' texts are the same, the windows are new
    write_home_setting(settings.home, "chunk_window_size", "3")
    counting.update({**build_resources(load_settings(settings.home)), "embedder": counting["embedder"]})
    ASKED.clear()
    days = Lake(settings.lake_dir).partitions(CHUNKS)
    assert run_pipeline(days=days).success
    second = chunk_texts(settings)
    new_texts = second - first
    assert new_texts and second & first  # the change did touch some texts and not others
    assert sorted(asked_chunk_texts(settings)) == sorted(new_texts)

    # the index lost and rebuilt: nothing is embedded again
    shutil.rmtree(settings.lancedb_dir)
    ASKED.clear()
    assert run_pipeline(days=days).success
    assert asked_chunk_texts(settings) == []


def test_another_model_never_reads_the_first_models_vectors(settings, counting, run_pipeline):
    land(settings, "alice", "chat.jsonl", jsonl(*ALICE))
    assert run_pipeline().success
    ASKED.clear()
    counting["embedder"] = CountingResource(model_name="models/adapted-0123456789abcdef")
    assert run_pipeline(days=Lake(settings.lake_dir).partitions(CHUNKS)).success
    assert sorted(asked_chunk_texts(settings)) == sorted(chunk_texts(settings))


def test_texts_in_one_batch_are_embedded_once_and_vectors_keep_their_order(tmp_path):
    cache = EmbeddingCache(tmp_path, "hash-384", 384)
    ASKED.clear()
    texts = ["tea", "coffee", "tea", "water", "coffee"]
    vectors, counts = embed_unique(texts, CountingHashEmbedder().embed, cache)
    assert ASKED == ["tea", "coffee", "water"]
    assert (counts.embedded, counts.from_cache, counts.duplicates) == (3, 0, 2)
    np.testing.assert_array_equal(vectors, HashEmbedder().embed(texts))

    ASKED.clear()
    again, counts = embed_unique(["water", "juice"], CountingHashEmbedder().embed, cache)
    assert ASKED == ["juice"] and (counts.embedded, counts.from_cache) == (1, 1)
    np.testing.assert_array_equal(again, HashEmbedder().embed(["water", "juice"]))


def test_many_writes_are_folded_and_a_forgotten_hash_leaves_no_segment(tmp_path):
    from memlake import embedding_cache
    from memlake.chunks import text_sha256

    cache = EmbeddingCache(tmp_path, "hash-384", 384)
    words = [f"word{i}" for i in range(embedding_cache.MAX_SEGMENTS + 3)]
    for word in words:  # one segment per write, folded when there are too many
        embed_unique([word], HashEmbedder().embed, cache)
    assert len(list(cache.path.glob("*.parquet"))) <= embedding_cache.MAX_SEGMENTS
    assert cache.count() == len(words)

    other = EmbeddingCache(tmp_path, "another-model", 384)
    embed_unique(["word0"], HashEmbedder().embed, other)
    assert forget_texts(tmp_path, [text_sha256("word0")]) == 2  # from every model's cache
    assert cache.lookup([text_sha256(w) for w in words]).keys() == {text_sha256(w) for w in words[1:]}
    assert other.count() == 0
    kept = [h for p in tmp_path.rglob("*.parquet") for h in pq.read_table(p)["text_sha256"].to_pylist()]
    assert text_sha256("word0") not in kept and len(kept) == len(words) - 1
