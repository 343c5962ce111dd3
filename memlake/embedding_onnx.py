"""The embedding model run by ONNX Runtime: exported offline from the model's own weights.

`embedding_backend = "onnx"` runs a sentence-transformers model of the shape the packaged
all-MiniLM-L6-v2 has (a BERT-like transformer, mean pooling) without torch at embedding time. The ONNX file
is exported from the model folder's weights on first use (or by `make onnx`), once per weights: it goes to
`<venv>/share/memlake/onnx/<weights fingerprint>/` (`MEMLAKE_ONNX_DIR` overrides; a read-only venv falls
back to `~/.cache/memlake/onnx`). Nothing is downloaded. Tokenizing uses the folder's `tokenizer.json`;
pooling and normalising do what sentence-transformers does for this model: the mean of the token vectors
under the attention mask, then L2-normalised.

No int8 backend: dynamic int8 quantization (onnxruntime.quantization) of the packaged model gave vectors at
cosine 0.974 from torch's on short texts (0.988 with only the feed-forward layers quantized, and then no
faster); see docs/decisions.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import uuid
import warnings
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from filelock import FileLock

BACKENDS = ("torch", "onnx")
ONNX_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OPSET = 17
# A span of a text: character ranges [start, end) read together (a speaker's name and a sentence of their turn).
Span = list[tuple[int, int]]
# A call with at most this many texts (a search's query) runs on one thread: see SentenceEmbedder.embed.
ONE_THREAD_TEXTS = 4


@lru_cache(maxsize=8)
def weights_fingerprint(model_ref: str) -> str:
    """A digest of a model folder's files (names and bytes): what names its weights, in the embedding cache
    and the ONNX export folder. A reference that is no folder is its own fingerprint."""
    folder = Path(model_ref)
    if not folder.is_dir():
        return hashlib.sha256(model_ref.encode()).hexdigest()[:24]
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        with path.open("rb") as file:
            for block in iter(lambda: file.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:24]


class OnnxUnsupported(RuntimeError):
    """The model cannot run on the onnx backend (not a folder, or not mean pooling)."""


def onnx_dir() -> Path:
    """Where exported models are kept: MEMLAKE_ONNX_DIR, else the venv's share folder, else the user cache."""
    if os.environ.get("MEMLAKE_ONNX_DIR"):
        return Path(os.environ["MEMLAKE_ONNX_DIR"])
    share = Path(sys.prefix) / "share"
    if os.access(share if share.exists() else Path(sys.prefix), os.W_OK):
        return share / "memlake" / "onnx"
    return Path.home() / ".cache" / "memlake" / "onnx"


def exported_model(model_dir: Path) -> Path:
    """The ONNX file of the model in `model_dir`, exported the first time."""
    folder = onnx_dir() / weights_fingerprint(str(model_dir))
    target = folder / "model.onnx"
    if target.is_file():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder / ".lock")):  # two processes starting at once export once
        if not target.is_file():
            _export(model_dir, target)
    return target


def _export(model_dir: Path, target: Path) -> None:
    import torch  # deferred: only an export needs torch
    from transformers import AutoModel

    class LastHiddenState(torch.nn.Module):
        """The transformer with keyword inputs and one output: what pooling reads."""

        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    from transformers.utils import logging as transformers_logging  # deferred: as torch above

    transformers_logging.disable_progress_bar()
    model = AutoModel.from_pretrained(str(model_dir), local_files_only=True)
    model.eval()
    example = torch.ones(2, 8, dtype=torch.long)
    mask = example.clone()
    mask[1, 5:] = 0  # a padded row: the traced graph keeps the attention mask
    axes = {name: {0: "batch", 1: "tokens"} for name in (*ONNX_INPUTS, "last_hidden_state")}
    temporary = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.tmp")
    # the exporter's deprecation and tracer warnings are about its own internals: the test checks the vectors
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            LastHiddenState(model), (example, mask, torch.zeros_like(example)), str(temporary),
            input_names=list(ONNX_INPUTS), output_names=["last_hidden_state"], dynamic_axes=axes,
            opset_version=OPSET, dynamo=False,
        )
    os.replace(temporary, target)


class OnnxModel:
    """One exported model with its tokenizer and sessions: loaded once per process and model."""

    def __init__(self, model_dir: Path) -> None:
        from tokenizers import Tokenizer  # deferred: loaded with the first ONNX model only

        if not model_dir.is_dir():
            raise OnnxUnsupported(f"the onnx backend needs a model folder; {str(model_dir)!r} is not one")
        pooling = _read_json(model_dir / "1_Pooling" / "config.json")
        if not pooling.get("pooling_mode_mean_tokens") or any(
            on for mode, on in pooling.items() if mode.startswith("pooling_mode") and mode != "pooling_mode_mean_tokens"
        ):
            raise OnnxUnsupported(f"the onnx backend runs mean-pooling models; {model_dir.name} pools otherwise "
                                  "(set embedding_backend = \"torch\")")
        self.dim = int(pooling.get("word_embedding_dimension") or _read_json(model_dir / "config.json")["hidden_size"])
        self.max_tokens = int(_read_json(model_dir / "sentence_bert_config.json").get("max_seq_length", 512))
        self.path = exported_model(model_dir)
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(self.max_tokens)
        self.tokenizer.no_padding()  # each batch is padded to its longest text below
        self.counter = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.counter.no_truncation()
        self.counter.no_padding()
        self._sessions: dict[int, Any] = {}
        self._lock = threading.Lock()

    def session(self, threads: int) -> Any:
        """A session whose operators use `threads` threads (sessions are safe to share across threads)."""
        with self._lock:
            if threads not in self._sessions:
                import onnxruntime as ort  # deferred: ~0.3 s, only when an ONNX model embeds

                options = ort.SessionOptions()
                options.intra_op_num_threads = threads
                options.inter_op_num_threads = 1  # one operator at a time: a BERT graph is a chain
                options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
                options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                options.log_severity_level = 3
                # idle threads sleep instead of spinning: on 2 shared cores a spinning thread takes the core the
                # other thread, the full-text query or another process needs (measured on LoCoMo turns under
                # load: 16-19 texts/s spinning, 21-22 not; docs/decisions.md)
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                self._sessions[threads] = ort.InferenceSession(
                    str(self.path), options, providers=["CPUExecutionProvider"]
                )
            return self._sessions[threads]

    def embed(self, texts: list[str], batch_size: int) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for rows, hidden, mask in self._passes(self.tokenizer.encode_batch_fast(texts), batch_size):
            out[rows] = _mean_pool_normalised(hidden, mask)
        return out

    def embed_spans(
        self, texts: list[str], spans: list[list[Span]], batch_size: int
    ) -> tuple[np.ndarray, list[list[np.ndarray | None]]]:
        """Each text's vector, and a vector for each of its spans from the same pass ("late chunking"): the
        normalised mean of the token vectors inside the span's character ranges. A span's tokens are read in the
        context of the whole text, one model pass for the text and all its spans. None for a span with no token
        inside the text's first `max_tokens` (cut off by the model's input limit)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        of_spans: list[list[np.ndarray | None]] = [[None] * len(wanted) for wanted in spans]
        encoded = self.tokenizer.encode_batch(texts)  # not _fast: that one leaves the offsets out
        for rows, hidden, mask in self._passes(encoded, batch_size):
            out[rows] = _mean_pool_normalised(hidden, mask)
            for r, i in enumerate(rows):
                offsets = encoded[i].offsets
                for s, ranges in enumerate(spans[i]):
                    inside = [j for j, (a, b) in enumerate(offsets)
                              if b > a and any(start <= a and b <= end for start, end in ranges)]
                    if inside and any(offsets[j][0] >= ranges[-1][0] for j in inside):
                        pooled = hidden[r, inside].mean(axis=0)
                        of_spans[i][s] = (pooled / max(float(np.linalg.norm(pooled)), 1e-12)).astype(np.float32)
        return out, of_spans

    def _passes(self, encoded: list[Any], batch_size: int) -> Iterator[tuple[list[int], np.ndarray, np.ndarray]]:
        """The model's token vectors, a batch at a time: (the batch's positions in `encoded`, hidden states,
        attention mask)."""
        if not encoded:
            return
        threads = 1 if len(encoded) <= ONE_THREAD_TEXTS else max(1, os.cpu_count() or 1)
        session = self.session(threads)
        wanted = {i.name for i in session.get_inputs()}
        # longest first, like sentence-transformers: each batch pads to lengths close to its own
        order = sorted(range(len(encoded)), key=lambda i: -len(encoded[i].ids))
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            width = max(len(encoded[i].ids) for i in rows)
            feeds = {name: np.zeros((len(rows), width), dtype=np.int64) for name in ONNX_INPUTS}
            for r, i in enumerate(rows):
                n = len(encoded[i].ids)
                feeds["input_ids"][r, :n] = encoded[i].ids
                feeds["attention_mask"][r, :n] = encoded[i].attention_mask
                feeds["token_type_ids"][r, :n] = encoded[i].type_ids
            hidden = session.run(None, {k: v for k, v in feeds.items() if k in wanted})[0]
            yield rows, hidden, feeds["attention_mask"]


def _mean_pool_normalised(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """sentence-transformers' mean pooling (masked mean, count clamped at 1e-9), then F.normalize (eps 1e-12)."""
    weights = mask[:, :, None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


def _read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.is_file() else {}


@lru_cache(maxsize=4)
def load_onnx_model(model_dir: str) -> OnnxModel:
    return OnnxModel(Path(model_dir))
