"""Chunks from turns: one per turn (speaker and date in its text), one per conversation, optional windows."""

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlake.chunks import build_chunks, chunk_id, human_date, questions_answered, sentences
from memlake.embedding import HashEmbedder
from memlake.schemas import CHUNKS
from tests.transcripts.helpers import cut

START = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def turns_frame(conversations: dict[str, list[tuple[str, str | None, str]]], agent: str = "a1") -> pl.DataFrame:
    rows = []
    for offset, (conversation, turns) in enumerate(conversations.items()):
        started = START + timedelta(days=offset)
        for i, (role, speaker, content) in enumerate(turns):
            rows.append(
                {
                    "agent_id": agent,
                    "conversation_id": conversation,
                    "message_id": f"{conversation}-m{i}",
                    "turn_index": i,
                    "role": role,
                    "speaker": speaker,
                    "content": content,
                    "created_at": started + timedelta(minutes=i),
                    "conversation_started_at": started,
                    "title": f"title {conversation}",
                }
            )
    return pl.DataFrame(rows)


def count_words(texts: list[str]) -> list[int]:
    return [len(t.split()) for t in texts]


def test_one_chunk_per_turn_carrying_speaker_and_date_and_one_per_session():
    frame = turns_frame(
        {"s1": [("user", "Caroline", "I went to a support group."), ("assistant", "Melanie", "How was it?")]}
    )
    chunks = build_chunks(frame, count_words)

    assert chunks.schema == pl.from_arrow(CHUNKS.schema.empty_table()).schema
    turn_chunks = chunks.filter(pl.col("kind") == "turn")
    assert turn_chunks["text"].to_list() == [
        "Caroline, 8 May 2023: I went to a support group.",
        "Melanie, 8 May 2023: How was it?",
    ]
    assert turn_chunks["message_ids"].to_list() == [["s1-m0"], ["s1-m1"]]
    assert turn_chunks["speaker"].to_list() == ["Caroline", "Melanie"]
    assert turn_chunks["role"].to_list() == ["user", "assistant"]
    session = chunks.filter(pl.col("kind") == "session").row(0, named=True)
    assert session["message_ids"] == ["s1-m0", "s1-m1"]
    assert (session["turn_start"], session["turn_end"]) == (0, 1)
    assert session["text"].startswith("Conversation of 8 May 2023: title s1\nCaroline: I went")
    assert chunks["token_count"].to_list() == count_words(chunks["text"].to_list())
    assert chunks["agent_id"].unique().to_list() == ["a1"]
    assert chunks["created_at"][0] == START


def test_token_counts_come_from_the_embedders_tokenizer():
    embedder = HashEmbedder()
    chunks = build_chunks(turns_frame({"s1": [("user", None, "parse_ledger_v2 crashed again")]}), embedder.count_tokens)
    assert chunks["token_count"].to_list() == embedder.count_tokens(chunks["text"].to_list())
    assert chunks["text"][0].startswith("User, 8 May 2023: ")  # no speaker: the role stands in


def test_ids_are_stable_and_hashes_follow_the_text():
    frame = turns_frame({"s1": [("user", "A", "one"), ("assistant", "B", "two")]})
    first, again = build_chunks(frame, count_words), build_chunks(frame.reverse(), count_words)
    assert first.equals(again)
    assert first["chunk_id"][0] == chunk_id("a1", "s1", "turn", 0, 0)
    edited = frame.with_columns(
        pl.when(pl.col("turn_index") == 1).then(pl.lit("TWO")).otherwise("content").alias("content")
    )
    changed = build_chunks(edited, count_words)
    assert changed["chunk_id"].to_list() == first["chunk_id"].to_list()
    differs = [a != b for a, b in zip(first["text_sha256"], changed["text_sha256"], strict=True)]
    assert differs == [False, True, True]  # turn 0 unchanged; turn 1 and the session changed


@pytest.mark.parametrize(("size", "expected"), [(0, []), (1, []), (2, [(0, 1), (1, 2), (2, 3)]), (3, [(0, 2), (2, 3)])])
def test_window_chunks_overlap_by_one_turn(size, expected):
    frame = turns_frame({"s1": [("user", "A", f"t{i}") for i in range(4)]})
    windows = build_chunks(frame, count_words, cut(chunk_window_size=size)).filter(pl.col("kind") == "window")
    assert list(zip(windows["turn_start"], windows["turn_end"], strict=True)) == expected


def test_a_turn_of_several_sentences_gets_a_chunk_per_sentence_under_its_own_range():
    long_turn = "Hi Mel! Last Friday I went to an LGBTQ counseling workshop. So moving. [shares a photo of a hall]"
    frame = turns_frame({"s1": [("user", "Caroline", long_turn), ("assistant", "Melanie", "How was it? Tell me!")]})
    chunks = build_chunks(frame, count_words, cut(chunk_sentences=True))

    parts = chunks.filter(pl.col("kind") == "sentence")
    # "Hi Mel!" and "So moving." are too short to stand alone; "How was it? Tell me!" has no sentence
    # of three words, so Melanie's turn is its own only key
    assert parts["embed_text"].to_list() == [
        "Caroline: Last Friday I went to an LGBTQ counseling workshop.",
        "Caroline: [shares a photo of a hall]",
    ]
    assert parts["text"][0] == "Caroline, 8 May 2023: Last Friday I went to an LGBTQ counseling workshop."
    assert parts["message_ids"].to_list() == [["s1-m0"], ["s1-m0"]]
    assert set(zip(parts["turn_start"], parts["turn_end"], strict=True)) == {(0, 0)}
    assert parts["chunk_id"].n_unique() == 2 and not set(parts["chunk_id"]) & set(chunks.filter(
        pl.col("kind") == "turn")["chunk_id"])
    again = build_chunks(frame, count_words, cut(chunk_sentences=True)).filter(pl.col("kind") == "sentence")
    assert again["chunk_id"].to_list() == parts["chunk_id"].to_list()
    assert build_chunks(frame, count_words).filter(pl.col("kind") == "sentence").height == 0


def long_answer(sentences: int) -> str:
    """An assistant answer of `sentences` distinct sentences of 12 words each."""
    return " ".join(f"Option {i} keeps the budget under twenty dollars and works offline in the field." for i in
                    range(sentences))


@pytest.mark.parametrize(("sentences", "most"), [(12, 4), (40, 4), (40, 2), (60, 3)])
def test_a_long_answer_gets_at_most_the_bound_of_passage_keys_saying_it_whole(sentences, most):
    answer = long_answer(sentences)
    frame = turns_frame({"s1": [("user", "Ada", "Which tools fit my budget?"), ("assistant", None, answer)]})
    chunks = build_chunks(frame, count_words, cut(chunk_sentences=True, chunk_questions=True, chunk_long_turn_words=100,
                                                  chunk_long_turn_keys=most))

    keys = chunks.filter((pl.col("turn_start") == 1) & (pl.col("kind") != "window") & (pl.col("kind") != "session"))
    passages = keys.filter(pl.col("kind") == "passage")
    assert 2 <= passages.height <= most
    assert keys.filter(pl.col("kind") == "sentence").height == 0  # not one key per sentence
    # the first passages say the whole answer in order (runs); any after them are sentences of it, alone
    said = [t.removeprefix("Assistant: ") for t in passages["embed_text"]]
    runs = next(n for n in range(1, len(said) + 1) if " ".join(said[:n]) == answer)
    assert runs >= 2 and all(sentence in answer for sentence in said[runs:])
    assert passages["message_ids"].to_list() == [["s1-m1"]] * passages.height
    assert passages["text"][0].startswith("Assistant, 8 May 2023: Option 0 keeps")


def test_short_turns_keep_their_keys_whatever_the_bound_on_long_ones():
    frame = turns_frame({
        "s1": [("user", "Caroline", "I went to a support group yesterday. It was powerful! Everyone shared."),
               ("assistant", "Melanie", "That sounds great. What did you talk about with your group?"),
               ("user", "Caroline", "Mostly coming out stories. Then we had tea [shares a photo of a mug]")],
    })
    keys = cut(chunk_window_size=2, chunk_sentences=True, chunk_questions=True)
    unbounded = build_chunks(frame, count_words, keys.model_copy(update={"chunk_long_turn_keys": 0}))
    bounded = build_chunks(frame, count_words, keys.model_copy(update={"chunk_long_turn_words": 100,
                                                                       "chunk_long_turn_keys": 2}))
    assert bounded.to_dicts() == unbounded.to_dicts()
    assert bounded.filter(pl.col("kind") == "sentence").height == 6  # the bound is on long turns only


def test_a_token_budget_on_long_turns_leaves_locomo_length_turns_as_they_were():
    """LoCoMo's longest turn has 96 words: a budget on what long turns embed changes none of its chunks (ids, texts,
    hashes: nothing is embedded differently), only the long turn's."""
    ninety_six = " ".join(f"Sentence {i} says the garden needs water twice a week." for i in range(8)) + (
        " I water the garden every morning at six o'clock before I go to work each day.")
    frame = turns_frame({
        "s1": [("user", "Caroline", ninety_six),
               ("assistant", "Melanie", "That sounds great. What did you plant in your garden this spring?")],
        "s2": [("assistant", None, long_answer(30))],
    })
    assert len(ninety_six.split()) == 96
    keys = cut(chunk_window_size=2, chunk_sentences=True, chunk_questions=True, chunk_long_turn_words=100,
               chunk_long_turn_keys=6)
    unbounded = build_chunks(frame, count_words, keys)
    bounded = build_chunks(frame, count_words, keys.model_copy(update={"chunk_long_turn_tokens": 24}))
    assert bounded.filter(pl.col("conversation_id") == "s1").to_dicts() == unbounded.filter(
        pl.col("conversation_id") == "s1").to_dicts()
    changed = bounded.join(unbounded, on="chunk_id").filter(pl.col("text_sha256") != pl.col("text_sha256_right"))
    # the long answer's passages past the budget (no vector now), and the answer itself (the mean of fewer)
    assert set(changed["conversation_id"]) == {"s2"} and set(changed["kind"]) == {"passage", "turn"}
    assert 0 < changed.filter(pl.col("kind") == "passage").height < 6


def test_a_reply_is_keyed_by_the_question_it_answers_put_to_the_replier_by_name():
    frame = turns_frame({"s1": [
        ("user", "Caroline", "Hey Mel! What are you reading these days? Anything good?"),
        ("assistant", "Melanie", "A history of the Silk Road, slow but good."),
        ("assistant", "Melanie", "Did you see the game last night?"),  # after her own turn: no key for it
        ("user", "Caroline", "I did! Is your family coming to the show with you?"),
        ("assistant", "Melanie", "Yes, all of us."),
    ]})
    chunks = build_chunks(frame, count_words, cut(chunk_questions=True))

    keys = chunks.filter(pl.col("kind") == "question")
    # "Anything good?" is too short to match on
    assert keys["embed_text"].to_list() == [
        "What are Melanie reading these days?",
        "Did Caroline see the game last night?",
        "Is Melanie's family coming to the show with Melanie?",
    ]
    assert keys["text"][0] == "Caroline, 8 May 2023: What are Melanie reading these days?"  # the asker's words
    assert keys["message_ids"].to_list() == [["s1-m1"], ["s1-m3"], ["s1-m4"]]  # under the reply, for it
    assert list(zip(keys["turn_start"], keys["turn_end"], strict=True)) == [(1, 1), (3, 3), (4, 4)]
    assert keys["speaker"].to_list() == ["Melanie", "Caroline", "Melanie"]  # the reply's, for role/speaker filters
    assert not set(keys["chunk_id"]) & set(chunks.filter(pl.col("kind") != "question")["chunk_id"])
    assert build_chunks(frame, count_words).filter(pl.col("kind") == "question").height == 0


@pytest.mark.parametrize(("content", "expected"), [
    ("One short sentence only.", []),
    ("I moved to Porto last week. The flat is small but bright!", ["I moved to Porto last week.",
                                                                   "The flat is small but bright!"]),
    ("Version 2.0 is out. Check it out now", ["Version 2.0 is out.", "Check it out now"]),  # not at "2.0"
    ("First line of a list\nSecond line of the list", ["First line of a list", "Second line of the list"]),
])
def test_sentences_worth_their_own_key(content, expected):
    assert sentences(content) == expected


def test_empty_turns_give_an_empty_chunks_frame():
    assert build_chunks(pl.DataFrame(schema={"agent_id": pl.String}), count_words).height == 0


def test_human_date():
    assert human_date(datetime(2024, 3, 14, tzinfo=UTC)) == "14 March 2024"
    assert human_date(None) == "undated"


@settings(max_examples=40, deadline=None)
@given(
    st.dictionaries(
        st.text("abc", min_size=1, max_size=3),
        st.lists(
            st.tuples(st.sampled_from(["user", "assistant"]), st.none() | st.text(max_size=5), st.text(max_size=20)),
            min_size=1,
            max_size=6,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_every_turn_is_in_exactly_one_turn_chunk_and_its_session(conversations):
    chunks = build_chunks(turns_frame(conversations), count_words, cut(chunk_window_size=3))
    turn_ids = [m for ids in chunks.filter(pl.col("kind") == "turn")["message_ids"] for m in ids]
    all_ids = [f"{c}-m{i}" for c, turns in conversations.items() for i in range(len(turns))]
    assert sorted(turn_ids) == sorted(all_ids)
    sessions = chunks.filter(pl.col("kind") == "session")
    assert sessions.height == len(conversations)
    assert sorted(m for ids in sessions["message_ids"] for m in ids) == sorted(all_ids)
    assert chunks["chunk_id"].n_unique() == chunks.height


def test_the_chunker_version_moves_with_what_the_chunker_builds():
    """A home rebuilds the days whose chunk files carry another recipe (`chunk_recipe`), so CHUNKER must change
    whenever `build_chunks` gives other rows for the same turns and settings. The digest of one chat's
    chunks (every kind on; sessions pooled, as every home pools them) is pinned to CHUNKER: when this fails, bump
    CHUNKER and the digest together. (The digest moved from aad8c0faace91af6 when `build_chunks` came to take the
    chunking group, which always pools sessions: the old code gives 42ca7b7505647f74 for the same keys with
    sessions pooled.)"""
    import hashlib
    import json

    from memlake.chunks import CHUNKER

    frame = turns_frame({
        "s1": [("user", "Caroline", "I went to a support group yesterday. It was powerful! Everyone shared."),
               ("assistant", "Melanie", "That sounds great. What did you talk about with your group?"),
               ("user", "Caroline", "Mostly coming out stories. Then we had tea [shares a photo of a mug]")],
        "s2": [("user", "Caroline", "Do you paint there?"),
               ("assistant", "Melanie", "Every weekend. The light there is lovely.")],
    })
    frame = pl.concat([frame, turns_frame({"s3": [("assistant", None, long_answer(20))]})])
    chunks = build_chunks(frame, count_words, cut(chunk_window_size=2, chunk_sentences=True, chunk_questions=True,
                                                  chunk_long_turn_words=100, chunk_long_turn_keys=4))
    digest = hashlib.sha256(json.dumps(chunks.to_dicts(), default=str).encode()).hexdigest()[:16]
    assert (CHUNKER, digest) == ("memlake-chunks-7", "42ca7b7505647f74")


def test_a_long_turn_without_a_question_mark_is_read_in_linear_time():
    """A 750 KB message sent through `memlake serve`'s proxy landed as a turn, and every later run hung in the
    chunker: the question finder tried each position of a run of text with no `?` to its end (40,000 characters:
    3 s; 750 KB: ~20 min). Now a question starts only after a sentence end."""
    import time

    said = "Where do you live now? " + "word " * 40_000
    before = {"speaker": "Ann", "role": "user", "content": said}
    started = time.perf_counter()
    found = questions_answered(before, {"speaker": "Bo", "role": "assistant", "content": "Porto."})
    assert time.perf_counter() - started < 0.5
    assert found == ["Where do Bo live now?"]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab you.!?\n-", max_size=60))
def test_the_questions_found_are_the_runs_ending_in_a_question_mark(text):
    """Each question is a run between sentence ends (., !, ?, a new line) that ends with `?`."""
    import re

    before = {"speaker": "Ann", "role": "user", "content": text}
    found = questions_answered(before, {"speaker": "Bo", "role": "assistant", "content": "ok"})
    runs = [run.strip(" -\u2014") for run in re.split(r"(?<=[.!?\n])", text) if run.endswith("?")]
    expected = [re.sub(r"\byou\b", "Bo", re.sub(r"\byour\b", "Bo's", run, flags=re.I), flags=re.I)
                for run in runs if len(run.split()) >= 4]
    assert found == expected


def test_every_chunking_setting_is_in_the_chunks_staleness_key():
    """The recipe a day's chunks are stamped with (a day with another is built again; the chunks asset's code
    version) comes from the chunking group whole: any setting of the group set otherwise gives another recipe,
    so one added to the group is in it without being listed anywhere; a setting outside the group leaves it."""
    from memlake.chunks import chunk_recipe
    from memlake.settings import ChunkingSettings, Settings

    base = ChunkingSettings()
    for name, field in ChunkingSettings.model_fields.items():
        other = (not field.default) if isinstance(field.default, bool) else field.default + 1
        assert chunk_recipe(base.model_copy(update={name: other})) != chunk_recipe(base), name
    assert chunk_recipe(Settings(mmr_lambda=0.5, rrf_k=3).chunking) == chunk_recipe(Settings().chunking)
