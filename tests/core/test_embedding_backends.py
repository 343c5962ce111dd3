"""The onnx embedding backend gives the torch model's vectors (cosine >= 0.99) and its token counts."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from memlake.embedding import OnnxEmbedder, SentenceEmbedder, default_model_path, load_embedder

pytestmark = pytest.mark.model

SAMPLE = [
    "",
    "Noted.",
    "User, 1 March 2024: My order ORD-58213 still has not arrived.",
    "Assistant: Oolong is a lovely choice; I drink it too, never coffee.",
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "Wir fahren am Freitag mit dem Zug nach Hamburg — café, naïve, 東京, emoji 🎻.",
    "parse_ledger_v2 crashes on empty files: guard the empty case before parsing.",
    # longer than the model reads (256 word pieces): both truncate the same way
    " ".join(f"Shelf {n} of the archive holds folders from {1900 + n} and they smell of dust." for n in range(40)),
]


@pytest.fixture(scope="module")
def torch_vectors() -> np.ndarray:
    return SentenceEmbedder().embed(SAMPLE)


def test_onnx_vectors_match_the_torch_ones(torch_vectors: np.ndarray) -> None:
    embedder = load_embedder("", 3, None, "onnx")  # batches of 3: padding inside a batch changes nothing
    assert isinstance(embedder, OnnxEmbedder)
    vectors = embedder.embed(SAMPLE)
    assert vectors.shape == torch_vectors.shape and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosines = (vectors * torch_vectors).sum(axis=1)
    assert cosines.min() >= 0.99, dict(zip(SAMPLE, cosines.round(4), strict=True))
    one = embedder.embed(SAMPLE[2:3])  # a query alone (one thread) gives what it gave in the batch
    np.testing.assert_allclose(one[0], vectors[2], atol=1e-5)


def test_both_backends_name_one_index_but_keep_their_own_cached_vectors() -> None:
    torch_model, onnx = (load_embedder("", 64, None, b) for b in ("torch", "onnx"))
    assert torch_model is not None and onnx is not None
    assert torch_model.name == onnx.name == "all-MiniLM-L6-v2"  # the same vectors: one index serves both
    assert torch_model.identity != onnx.identity
    assert onnx.count_tokens(SAMPLE) == torch_model.count_tokens(SAMPLE)


def test_under_onnx_a_model_folder_other_than_the_packaged_one_runs_on_torch(tmp_path: Path) -> None:
    """Only the packaged model is exported: another folder (here one that pools by CLS, which the ONNX path
    does not do) loads with sentence-transformers, its own pooling kept."""
    packaged = Path(default_model_path())
    model = tmp_path / "cls-model"
    model.mkdir()
    for item in packaged.iterdir():
        if item.name != "1_Pooling":
            (model / item.name).symlink_to(item)
    (model / "1_Pooling").mkdir()
    pooling = json.loads((packaged / "1_Pooling" / "config.json").read_text())
    (model / "1_Pooling" / "config.json").write_text(
        json.dumps({**pooling, "pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True}))
    assert isinstance(load_embedder(str(model), 64, None, "onnx"), SentenceEmbedder)


def test_an_unknown_backend_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown embedding_backend 'cuda'"):
        load_embedder("", 64, None, "cuda")


def test_one_pass_over_a_turn_gives_the_turn_and_its_sentences_vectors() -> None:
    """`embed_spans` (the onnx backend): the turn's vector is what `embed` gives it; a sentence's span vector is
    read in the turn's context, so it is nearer its own sentence than the other sentence, and nearer than the turn
    is; a span past the model's input limit has no vector."""
    from memlake.chunks import key_span

    embedder = load_embedder("", 8, None, "onnx")
    assert isinstance(embedder, OnnxEmbedder)
    keys = ["Caroline: I went to a support group for trans people yesterday.",
            "Caroline: My grandmother's old violin still sits in the hallway closet."]
    turn = "Caroline: I went to a support group for trans people yesterday. " \
           "My grandmother's old violin still sits in the hallway closet."
    spans = [key_span(turn, key) for key in keys]
    assert spans[0] is not None and spans[1] is not None
    (turn_vector,), (span_vectors,) = embedder.embed_spans([turn], [[spans[0], spans[1]]])
    own = embedder.embed([turn, *keys])
    np.testing.assert_allclose(turn_vector, own[0], atol=1e-5)
    for mine, other, span in ((1, 2, span_vectors[0]), (2, 1, span_vectors[1])):
        assert span is not None
        assert float(span @ own[mine]) > max(float(span @ own[other]), float(own[0] @ own[mine]))
    long_turn = "Caroline: " + " ".join(["I counted the shelves of the archive again today."] * 40) + " Lisbon wins."
    tail = key_span(long_turn, "Caroline: Lisbon wins.")
    assert tail is not None
    _, ((cut,),) = embedder.embed_spans([long_turn], [[tail]])
    assert cut is None
