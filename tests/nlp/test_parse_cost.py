"""What a parse costs: texts parsed together in one batch, names found only when asked, and a parse made without names
that is later asked for them equals a full parse. Sentences written for these tests."""

from __future__ import annotations

from typing import Any

import pytest

from memlake import nlp
from tests.nlp.counting import CountingPipeline, count_parses

TEXTS = [
    "My aunt Priya moved from Pune to Toronto in 2019.",
    "We usually spend August on a narrowboat near Oxford.",
    "I've been teaching Year 6 at Hillcrest Primary since the spring.",
    "honestly cant stand the new Spotify layout lol",
]


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> CountingPipeline:
    return count_parses(monkeypatch)


def annotations(doc: Any) -> list[tuple[Any, ...]]:
    return [(t.text, t.tag_, t.pos_, t.dep_, t.head.i, t.lemma_, t.ent_type_, t.ent_iob_, t.is_sent_start)
            for t in doc]


def test_texts_parsed_together_are_one_batch_and_each_later_parse_is_cached(counting: CountingPipeline) -> None:
    together = nlp.parse_all(TEXTS)
    assert (counting.batches, counting.texts_in_batches, counting.one_at_a_time) == (1, len(TEXTS), 0)
    assert [nlp.parse(text) for text in TEXTS] == together  # the same Docs: nothing parsed again
    assert (counting.batches, counting.one_at_a_time) == (1, 0)


def test_a_text_said_twice_in_a_batch_is_parsed_once(counting: CountingPipeline) -> None:
    first, again = nlp.parse_all([TEXTS[0], TEXTS[0]])
    assert first is again and counting.texts_in_batches == 1


def test_a_batch_parses_each_text_as_a_parse_alone_would(counting: CountingPipeline) -> None:
    assert [annotations(doc) for doc in nlp.parse_all(TEXTS)] == [annotations(counting.real(t)) for t in TEXTS]


def test_a_parse_without_names_gets_them_when_a_later_caller_asks(counting: CountingPipeline) -> None:
    plain = nlp.parse(TEXTS[0], names=False)
    assert plain.ents == ()  # the recogniser did not run
    named = nlp.parse(TEXTS[0])
    assert named is plain  # the same Doc, now with its names, not a second parse
    assert counting.texts_in_batches == 1
    assert annotations(named) == annotations(nlp.pipeline().real(TEXTS[0]))
    assert {e.text for e in named.ents} >= {"Pune", "Toronto"}


def test_a_parse_with_names_serves_a_caller_that_wants_none(counting: CountingPipeline) -> None:
    named = nlp.parse(TEXTS[1])
    assert nlp.parse(TEXTS[1], names=False) is named and counting.texts_in_batches == 1
