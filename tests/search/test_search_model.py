"""Hybrid search with the real default model (all-MiniLM-L6-v2, packaged, offline).

One home is built once for the module through the real pipeline; the model is
loaded once per process.
"""

import json
import re
from datetime import datetime

import dagster as dg
import polars as pl
import pytest

from memlake.api import Memory
from memlake.lake import Lake
from memlake.schemas import CHUNK_INDEX, CHUNKS
from memlake.vectors import VectorStore
from tests.conftest import land

pytestmark = pytest.mark.model

STOPWORDS = {
    "a", "an", "the", "i", "my", "me", "did", "do", "does", "which", "what", "from", "to", "of", "in", "on",
    "and", "or", "is", "was", "were", "be", "at", "for", "with", "by", "it", "that", "this", "last", "home",
}
PARAPHRASE_TARGET = "Yesterday I adopted a rescue dog named Biscuit."
PARAPHRASE_QUERY = "Which pet did Priya bring home from an animal shelter?"
ORDER_TARGET = "Order ORD-58213 was refunded in full."
# a fact said at the end of a turn longer than the model reads (256 word pieces)
BURIED_TARGET = "My sister's kitten is called Pickle."
BURIED_QUERY = "Which name was given to the young cat of a sibling?"
LONG_TURN = " ".join(
    f"Shelf {n} of the archive holds folders from {1900 + n} and they smell faintly of dust." for n in range(30)
) + " " + BURIED_TARGET

TOPICS = ["the quarterly report", "my bicycle", "the kitchen sink", "our database migration", "the garden",
          "a jazz concert", "the train to Hamburg", "my tax return", "the new laptop", "a chess tournament",
          "the roof repair", "our sprint review", "the violin lesson", "a pasta recipe", "the hiking trail"]
VERBS = ["finished", "postponed", "cleaned", "discussed", "planned", "fixed", "booked", "reviewed",
         "cancelled", "started", "photographed", "measured", "painted", "described"]
TIMES = ["this morning", "on Monday", "last month", "after lunch", "before the holidays", "at dawn"]


# Sam asks, Priya replies: the reply shares no content word with the memory query; the question does,
# at the end of a turn about something else (so the turn's and the window's vectors are about that)
ASKED = ("The quarterly audit ate every evening, the printer jammed twice on Friday and the client moved "
         "the deadline again. What do you usually do to unwind after a hard week at work?")
ASKED_REPLY = "Mostly sourdough baking and old sitcoms, honestly."
ASKED_QUERY = "How does Priya relax after a stressful working week?"


def jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS}


def distractors(n: int) -> list[str]:
    out = []
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        verb = VERBS[(i // len(TOPICS)) % len(VERBS)]
        when = TIMES[(i * 7) % len(TIMES)]
        out.append(f"I {verb} {topic} {when}, note {i}.")
    return out


def rows_for(agent_turns: list[str], conversation: str, day: str, speaker: str) -> list[dict]:
    return [
        {"conversation_id": conversation, "message_id": f"{conversation}-m{i}", "role": "user",
         "speaker": speaker, "content": text, "created_at": f"{day}T09:{i // 60:02d}:{i % 60:02d}Z"}
        for i, text in enumerate(agent_turns)
    ]


@pytest.fixture(scope="module")
def model_home(tmp_path_factory):
    from memlake.settings import load_settings
    from pipelines.runs import run_landing
    from resources import build_resources

    settings = load_settings(tmp_path_factory.mktemp("model") / "home")
    settings.ensure_dirs()
    noise = distractors(220)
    priya = (
        rows_for(noise[:110], "c1", "2024-03-01", "Priya")
        + rows_for([PARAPHRASE_TARGET, "It was a long day."], "c2", "2024-03-02", "Priya")
        + rows_for(noise[110:] + [ORDER_TARGET], "c3", "2024-03-03", "Priya")
        + rows_for([f"Order ORD-{n} was delayed by a week." for n in (58231, 58123, 85213, 58312, 52813)],
                   "c4", "2024-03-04", "Priya")
        + rows_for(["The team offsite is in Porto."], "march", "2024-03-10", "Priya")
        + rows_for(["The team offsite is in Porto."], "june", "2024-06-10", "Priya")
        + rows_for([LONG_TURN], "c5", "2024-03-05", "Priya")
        + [{**row, "speaker": speaker, "role": role} for row, speaker, role in zip(
            rows_for([ASKED, ASKED_REPLY], "c6", "2024-03-06", "Priya"), ("Sam", "Priya"), ("assistant", "user"),
            strict=True)]
    )
    other = rows_for(["My rescue dog Biscuit loves the beach.", "Order ORD-58213 belongs to Jonas."],
                     "x1", "2024-03-02", "Jonas")
    land(settings, "priya", "chat.jsonl", jsonl(priya))
    land(settings, "jonas", "chat.jsonl", jsonl(other))
    instance = dg.DagsterInstance.ephemeral()
    outcome = run_landing(settings, resources=build_resources(settings), instance=instance)
    assert outcome.success, outcome
    assert VectorStore(settings.lancedb_dir).embedder_of(CHUNK_INDEX) == "all-MiniLM-L6-v2"
    return settings, instance


def test_paraphrase_with_no_shared_content_word_ranks_in_the_top_3(model_home):
    settings, _ = model_home
    target_text = f"Priya, 2 March 2024: {PARAPHRASE_TARGET}"
    assert not (content_words(PARAPHRASE_QUERY) - {"priya"}) & content_words(target_text)
    turns = Lake(settings.lake_dir).read(CHUNKS).filter((pl.col("kind") == "turn") & (pl.col("agent_id") == "priya"))
    assert turns.height >= 200
    found = Memory(settings=settings).search(PARAPHRASE_QUERY, "priya", k=3)
    assert "c2-m0" in [ids[0] for ids in found["message_ids"].to_list()], found.select("text")


def test_a_fact_at_the_end_of_a_long_turn_is_found_through_its_own_key_and_returned_alone(model_home):
    """The turn's own vector stops at the model's input limit; a long turn's distinctive sentence has a key of
    its own among its bounded keys, and the hit returns that part, not the whole turn."""
    settings, _ = model_home
    assert not content_words(BURIED_QUERY) & content_words(LONG_TURN)
    chunks = Lake(settings.lake_dir).read(CHUNKS).filter(pl.col("message_ids").list.first() == "c5-m0")
    turn = chunks.filter(pl.col("kind") == "turn")
    assert turn["token_count"][0] > 300  # well past the 256 the model reads
    keys = chunks.filter(pl.col("kind") == "passage")
    assert keys.height <= settings.chunk_long_turn_keys and chunks.filter(pl.col("kind") == "sentence").height == 0
    assert f"Priya: {BURIED_TARGET}" in keys["embed_text"].to_list()

    memory = Memory(settings=settings)
    found = memory.search(BURIED_QUERY, "priya", k=3)
    hit = found.filter(pl.col("message_ids").list.first() == "c5-m0")
    assert hit.height == 1 and hit["vector_rank"][0] == 1, found.select("text", "vector_rank")
    assert hit["vector_match"][0] == "passage"
    assert hit["excerpt"][0] and hit["text"][0].endswith(f": {BURIED_TARGET}")
    # without its part keys the turn is found by its own vector alone (the mean of its runs: the whole turn); it
    # still returns the passage nearest the question, not the whole turn
    whole_turns_only = memory.search(BURIED_QUERY, "priya", k=10, sentence_keys=False)
    alone = whole_turns_only.filter(pl.col("message_ids").list.first() == "c5-m0")
    assert alone["vector_match"].to_list() in ([], ["turn"])
    assert alone["excerpt"].all() and all(text.endswith(f": {BURIED_TARGET}") for text in alone["text"])


def test_a_reply_is_found_through_the_question_it_answered(model_home):
    """A memory query is a question; the model matches it to the question asked in the chat far better
    than to the reply, which shares none of its words."""
    settings, _ = model_home
    assert not (content_words(ASKED_QUERY) - {"priya"}) & content_words(ASKED_REPLY)
    memory = Memory(settings=settings)
    found = memory.search(ASKED_QUERY, "priya", k=3)
    hit = found.filter(pl.col("message_ids").list.first() == "c6-m1")
    assert hit.height == 1 and hit["vector_rank"][0] == 1, found.select("text", "vector_rank")
    assert hit["text"][0].endswith(ASKED_REPLY)  # the reply is returned, not the question
    assert hit["vector_match"][0] == "question"  # and the result says which key the vector list matched
    # the vector list alone, turns by their own keys only (no windows, no neighbours): first through the
    # question; by the reply's own vector, not in the top 10
    alone = {"lists": ("vector",), "window_weight": 0.0, "neighbor_weight": 0.0}
    by_vector = memory.search(ASKED_QUERY, "priya", k=10, **alone)
    assert by_vector["message_ids"][0][0] == "c6-m1", by_vector.select("text")
    replies_only = memory.search(ASKED_QUERY, "priya", k=10, question_keys=False, **alone)
    assert "c6-m1" not in [ids[0] for ids in replies_only["message_ids"].to_list()], replies_only.select("text")


def test_exact_identifier_ranks_first_while_vector_only_misses_it(model_home):
    settings, _ = model_home
    memory = Memory(settings=settings)
    hybrid = memory.search("ORD-58213", "priya", k=5)
    assert hybrid["text"][0].endswith(ORDER_TARGET)
    assert hybrid["text_match"][0] == "turn"  # the turn's own text, not a sentence or question of it
    vector_only = memory.search("ORD-58213", "priya", k=5, lists=("vector",))
    assert set(vector_only["mode"]) == {"vector"}
    assert not vector_only["text"][0].endswith(ORDER_TARGET), vector_only.select("text")


def test_another_agents_memory_is_never_returned(model_home):
    settings, _ = model_home
    memory = Memory(settings=settings)
    for query in ("rescue dog Biscuit beach", "ORD-58213 Jonas", "Jonas", "beach"):
        for agent in ("priya", "jonas"):
            found = memory.search(query, agent, k=50)
            assert set(found["agent_id"]) == {agent}
            assert all(ids[0].startswith("x1") == (agent == "jonas") for ids in found["message_ids"].to_list())


def test_recency_boost_follows_as_of(model_home):
    settings, _ = model_home
    memory = Memory(settings=settings)
    for as_of, first in (("2024-03-11", "march"), (datetime(2024, 6, 11), "june")):
        found = memory.search("Where is the team offsite?", "priya", k=2, as_of=as_of, recency_weight=1.0)
        assert found["conversation_id"].to_list()[0] == first
        assert set(found["conversation_id"]) == {"march", "june"}


def test_full_text_search_answers_when_the_model_is_unavailable(model_home):
    settings, _ = model_home
    memory = Memory(settings=settings.model_copy(update={"embedding_model": "none"}))
    found = memory.search("ORD-58213 refunded", "priya", k=3)
    assert set(found["mode"]) == {"full_text"}
    assert found["text"][0].endswith(ORDER_TARGET)


def test_rebuilt_partition_leaves_no_stale_rows(model_home):
    from memlake.settings import load_settings
    from pipelines.runs import run_landing
    from resources import build_resources

    settings, instance = model_home
    edited = rows_for([PARAPHRASE_TARGET, "It was a long and happy day."], "c2", "2024-03-02", "Priya")
    land(settings, "priya", "chat-v2.jsonl", jsonl(edited))
    settings = load_settings(settings.home)
    assert run_landing(settings, resources=build_resources(settings), instance=instance).success
    indexed = pl.from_arrow(VectorStore(settings.lancedb_dir).open(CHUNK_INDEX).to_arrow().drop(["vector"]))
    lake = Lake(settings.lake_dir).read(CHUNKS)
    assert sorted(indexed["chunk_id"]) == sorted(lake["chunk_id"])
    assert not indexed["text"].str.contains("It was a long day.", literal=True).any()
    event = instance.get_latest_materialization_event(dg.AssetKey(["search", "chunk_index"]))
    assert event.asset_materialization.metadata["embedded"].value == 1  # the edited turn; its window is pooled


def test_token_counts_match_the_models_tokenizer_without_truncation():
    from memlake.embedding import load_embedder

    embedder = load_embedder("", 64)
    phrases = [f"I {v} {t} {w}." for t in TOPICS for v in VERBS for w in TIMES]  # more than one slice of work
    texts = [PARAPHRASE_TARGET, ORDER_TARGET, "", " ".join([ORDER_TARGET] * 120), *phrases]
    tokenizer = embedder._model.tokenizer  # type: ignore[union-attr]
    expected = [len(ids) for ids in tokenizer(texts, add_special_tokens=False, truncation=False)["input_ids"]]
    assert embedder.count_tokens(texts) == expected  # type: ignore[union-attr]
    assert expected[3] > 1000  # far past the model's 256-token window: counted whole


def test_a_query_embedded_on_one_thread_matches_the_batch_and_leaves_torch_as_it_was():
    import numpy as np
    import torch

    from memlake.embedding import load_embedder

    embedder = load_embedder("", 64)
    threads = torch.get_num_threads()
    alone = embedder.embed([PARAPHRASE_QUERY])  # type: ignore[union-attr]
    assert torch.get_num_threads() == threads
    batch = embedder.embed([PARAPHRASE_QUERY, *TOPICS])  # type: ignore[union-attr]
    assert np.allclose(alone[0], batch[0], atol=1e-5)
