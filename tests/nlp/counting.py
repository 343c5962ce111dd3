"""The real English pipeline behind a counter: how many texts it parsed one at a time, and in how many batches."""

from __future__ import annotations

from typing import Any

import pytest

from memlake import nlp
from memlake.nlp import language_model


class CountingPipeline:
    """The real pipeline, counting the texts it parses one at a time and the batches it parses."""

    def __init__(self, real: Any) -> None:
        self.real, self.one_at_a_time, self.batches, self.texts_in_batches = real, 0, 0, 0

    def __call__(self, text: str, **kwargs: Any) -> Any:
        self.one_at_a_time += 1
        return self.real(text, **kwargs)

    def pipe(self, texts: Any, **kwargs: Any) -> Any:
        texts = list(texts)
        self.batches += 1
        self.texts_in_batches += len(texts)
        return self.real.pipe(texts, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def count_parses(monkeypatch: pytest.MonkeyPatch) -> CountingPipeline:
    """Put the counter in front of the pipeline, with nothing parsed yet, for one test."""
    counting = CountingPipeline(nlp.pipeline())
    monkeypatch.setattr(language_model, "_pipeline", counting)
    monkeypatch.setattr(language_model, "_parses", type(language_model._parses)())
    return counting
