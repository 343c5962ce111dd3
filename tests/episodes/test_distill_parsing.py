"""What the offline distiller parses: a conversation's statements that a reader will read the parse of, together in
one batch; nothing when a rerun finds every conversation unchanged. Phrasings written for these tests."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memlake.distill.cache import ResultCache
from memlake.distill.models import Conversation, Message
from memlake.distill.offline import OfflineDistiller, distill_offline
from memlake.distill.run import distill_pass
from memlake.lake import Lake
from memlake.nlp import language_model
from memlake.schemas import EPISODES, PENDING
from memlake_bench.distill import _turns_frame, run_distill_benchmark
from tests.nlp.counting import CountingPipeline, count_parses

SAID = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)

# Three statements the table of patterns reads, a question, and two no pattern could anchor on.
TEXTS = [
    "Big news, we finally relocated to Aberdeen.",
    "What should I cook tonight?",
    "The rain has not stopped for days.",
    "I got hired by Soylent Labs as a data analyst.",
    "Anyway, I live in Dundee these days.",
    "It is what it is.",
]


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> CountingPipeline:
    return count_parses(monkeypatch)


def conversation(conversation_id: str, texts: list[str]) -> Conversation:
    return Conversation("ana", conversation_id, None, tuple(
        Message(f"{conversation_id}-m{i}", "user", text, SAID + timedelta(minutes=i)) for i, text in enumerate(texts)))


def test_the_statements_a_reader_will_parse_are_parsed_together_in_one_batch(counting: CountingPipeline) -> None:
    session = distill_offline(conversation("c1", TEXTS))
    assert {(c.slot, c.value) for c in session.fact_candidates if c.slot} >= {
        ("home_city", "Dundee"), ("employer", "Soylent Labs")}  # what the table read
    # one batch of the statements the readers parse, one of the candidates' facts and sentences their confidence
    # reads (memlake.distill.confidence.offline_prior); none one at a time
    assert (counting.batches, counting.one_at_a_time) == (2, 0) and counting.texts_in_batches >= 3


def test_a_rerun_of_unchanged_conversations_distills_and_parses_nothing(counting: CountingPipeline,
                                                                         tmp_path: Path) -> None:
    frame = _turns_frame([conversation("c1", TEXTS), conversation("c2", TEXTS[3:] + ["I moved to Perth."])])
    lake, days, as_of = Lake(tmp_path), sorted(set(frame["day"].to_list())), datetime(2026, 4, 1, tzinfo=UTC)

    def run() -> tuple[int, int]:
        cache, distiller = ResultCache.load(lake, days), OfflineDistiller()
        result = distill_pass(frame, Lake.empty(EPISODES), Lake.empty(PENDING), cache, distiller, as_of=as_of,
                              debounce_seconds=0, days=days)
        cache.write(lake, result.live)
        assert distiller.usage.requests == 0  # the offline distiller calls no model
        return result.stats.distilled, result.stats.cache_hits

    assert run() == (2, 0)
    parsed = (counting.batches, counting.one_at_a_time)
    assert parsed != (0, 0)  # the first pass parsed what the table reads
    language_model._parses.clear()  # as in a new process: nothing parsed yet
    assert run() == (0, 2)
    assert (counting.batches, counting.one_at_a_time) == parsed  # the rerun parsed nothing


def test_each_timed_pass_of_the_benchmark_parses_as_a_first_distillation(counting: CountingPipeline,
                                                                        tmp_path: Path) -> None:
    """A first distillation finds nothing parsed: a pass timed with the parses of the pass before would be too fast."""
    turns = [{"speaker": "Ana" if i % 2 == 0 else "Bo", "dia_id": f"D1:{i + 1}", "text": text}
             for i, text in enumerate(TEXTS)]
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([{"sample_id": "s1", "conversation": {
        "speaker_a": "Ana", "speaker_b": "Bo", "session_1_date_time": "9:15 am on 4 March, 2026",
        "session_1": turns}}]))

    report = run_distill_benchmark(data, None, rounds=3, log=lambda _: None)

    parsed_by_a_pass = 2  # Ana's (the user's) turns the table reads: TEXTS[0] and TEXTS[4]
    assert report["offline"]["rounds"] == 3
    assert counting.texts_in_batches >= 3 * parsed_by_a_pass  # every timed pass parsed them anew
    assert counting.one_at_a_time == 0
