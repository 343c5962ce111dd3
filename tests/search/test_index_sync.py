"""The chunk index follows the lake: every chunk indexed, only changed ones embedded, a sync replaces its scope."""

from datetime import datetime

import dagster as dg
import numpy as np
import polars as pl

from memlake.embedding import HashEmbedder
from memlake.lake import Lake
from memlake.schemas import CHUNK_INDEX, CHUNKS
from memlake.vectors import VectorStore, day_scope
from tests.conftest import land
from tests.pipelines.test_per_day_metadata import run_totals
from tests.search.helpers import ALICE, hash_memory
from tests.transcripts.helpers import cut, jsonl, msg


def index_frame(settings) -> pl.DataFrame:
    table = VectorStore(settings.lancedb_dir).open(CHUNK_INDEX)
    return pl.from_arrow(table.to_arrow().drop(["vector"]))  # type: ignore[return-value]


def latest_metadata(instance: dg.DagsterInstance, key: list[str]) -> dict:
    """The latest materialization's metadata, with its run's totals when the run was over several days (said in the
    run's log, not on each day)."""
    event = instance.get_latest_materialization_event(dg.AssetKey(key))
    assert event is not None and event.asset_materialization is not None
    shown = {k: v.value for k, v in event.asset_materialization.metadata.items()}
    return {**shown, **run_totals(instance, event.run_id, "/".join(key))}


def test_every_chunk_of_the_lake_is_indexed_and_an_identifier_ranks_first(home):
    chunks = Lake(home.lake_dir).read(CHUNKS)
    indexed = index_frame(home)
    assert sorted(indexed["chunk_id"].to_list()) == sorted(chunks["chunk_id"].to_list())
    assert set(chunks["kind"]) == {"turn", "session", "window"}

    found = hash_memory(home).search("ORD-58213", "alice", k=5)
    assert found["message_ids"].to_list()[0] == ["orders-m0"]
    assert found["mode"][0] == "hybrid"
    assert found["text"][0] == "User, 1 March 2024: My order ORD-58213 still has not arrived."
    for column in ("score", "text", "agent_id", "conversation_id", "message_ids", "created_at", "rrf",
                   "vector_rank", "text_rank", "recency", "importance", "access", "boost", "context"):
        assert column in found.columns
    assert found["context_message_ids"].to_list()[0] == ["orders-m0", "orders-m1"]  # window expansion
    assert found["score"].is_not_null().all()


def test_an_index_built_without_a_model_is_full_text_only(settings, fast_resources, run_pipeline):
    from resources import EmbedderResource
    from resources.run_config import EmbeddingRunConfig

    fast_resources["embedder"] = EmbedderResource(embedding=EmbeddingRunConfig(embedding_model="none"))
    land(settings, "alice", "chat.jsonl", jsonl(*ALICE))
    assert run_pipeline().success
    assert VectorStore(settings.lancedb_dir).embedder_of(CHUNK_INDEX) == "none"
    found = hash_memory(settings).search("parse_ledger_v2", "alice", k=3)
    assert found["message_ids"].to_list()[0] == ["code-m0"]
    assert set(found["mode"]) == {"full_text"}


def test_incremental_index_embeds_only_changed_chunks_and_leaves_no_stale_rows(settings, run_pipeline):
    land(settings, "alice", "chat.jsonl", jsonl(*ALICE[:4]))
    assert run_pipeline().success
    first = latest_metadata(run_pipeline.instance, ["search", "chunk_index"])
    assert first["embedded"] > 0 and first["reused_vectors"] == 0

    # the same days again: nothing is embedded, every vector is reused
    assert run_pipeline(days=["2024-03-01", "2024-03-05"]).success
    again = latest_metadata(run_pipeline.instance, ["search", "chunk_index"])
    assert again["embedded"] == 0 and again["reused_vectors"] == first["embedded"] + first["pooled_vectors"]

    # a re-export changes one message: its turn is embedded again, nothing else
    edited = [dict(ALICE[1], content="I found ORD-58213: it arrives Friday."), ALICE[0]]
    land(settings, "alice", "chat-v2.jsonl", jsonl(*edited))
    assert run_pipeline().success
    changed = latest_metadata(run_pipeline.instance, ["search", "chunk_index"])
    assert changed["embedded"] == 1  # the turn; the window holding it and the session are pooled from turns
    indexed = index_frame(settings)
    assert not indexed["text"].str.contains("chase the courier").any()
    assert indexed.filter(pl.col("day") == "2024-03-01").height == Lake(settings.lake_dir).read(
        CHUNKS, days=["2024-03-01"]
    ).height
    assert sorted(indexed["chunk_id"]) == sorted(Lake(settings.lake_dir).read(CHUNKS)["chunk_id"])


def test_sync_replaces_exactly_its_scope(tmp_path):
    from memlake.chunks import build_chunks
    from memlake.schemas import CHUNKS as SPEC

    embedder = HashEmbedder()
    store = VectorStore(tmp_path / "lancedb")

    def day_chunks(day: str, n: int) -> pl.DataFrame:
        when = datetime.fromisoformat(f"{day}T09:00:00+00:00")
        turns = pl.DataFrame(
            [{"agent_id": "a", "conversation_id": f"c{day}", "message_id": f"m{i}", "turn_index": i,
              "role": "user", "speaker": None, "content": f"note {i} of {day}", "created_at": when,
              "conversation_started_at": when, "title": None} for i in range(n)]
        )
        return build_chunks(turns, embedder.count_tokens).with_columns(pl.lit(day).alias("day"))

    def sync(frame: pl.DataFrame, days: list[str]):
        return store.sync(CHUNK_INDEX, frame, base_schema=SPEC.schema, key="chunk_id", scope=day_scope(days),
                          embed=embedder.embed, embedder=embedder.name, dim=embedder.dim, pool_by="conversation_id")

    sync(pl.concat([day_chunks("2024-01-01", 3), day_chunks("2024-01-02", 3)]), ["2024-01-01", "2024-01-02"])
    result = sync(day_chunks("2024-01-01", 1), ["2024-01-01"])
    assert result.deleted == 3 and result.embedded == 0 and result.reused == 1
    rows = pl.from_arrow(store.open(CHUNK_INDEX).to_arrow().select(["day", "kind"]))
    assert rows.group_by("day").len().sort("day").rows() == [("2024-01-01", 2), ("2024-01-02", 4)]
    assert store.count(CHUNK_INDEX, "a") == 6


def test_an_index_built_in_another_row_order_gives_the_same_results(home, tmp_path):
    """LanceDB returns equal full-text scores in storage order; a rebuilt index (reindex, another run's
    order) must not change which rows come back, or in what order. "march" and "june" hold the same text."""
    import shutil

    from memlake.schemas import CHUNKS as SPEC

    embedder = HashEmbedder()
    chunks = Lake(home.lake_dir).read(CHUNKS)
    homes = []
    for name, rows in (("forward", chunks), ("reversed", chunks.reverse())):
        settings = home.model_copy(update={"home": tmp_path / name})
        shutil.copytree(home.lake_dir, settings.lake_dir)
        VectorStore(settings.lancedb_dir).sync(
            CHUNK_INDEX, rows, base_schema=SPEC.schema, key="chunk_id", scope="true", embed=embedder.embed,
            embedder=embedder.name, dim=embedder.dim, pool_by="conversation_id",
        )
        homes.append(hash_memory(settings))
    for query in ("team offsite Porto", "Noted", "oolong tea"):
        forward, backward = (m.search(query, "alice", k=6, recency_weight=0.0) for m in homes)
        assert forward["message_ids"].to_list() == backward["message_ids"].to_list(), query
        assert forward["score"].to_list() == backward["score"].to_list(), query


def index_vectors(settings, kind: str) -> dict[tuple[int, int], np.ndarray]:
    """The index's vectors of one kind of chunk of the first conversation, by turn range."""
    return {(r["turn_start"], r["turn_end"]): np.asarray(r["vector"]) for r in index_rows(settings, kind)}


def index_rows(settings, kind: str) -> list[dict]:
    """The index's rows (turn range and vector) of one kind of chunk of the first conversation."""
    table = VectorStore(settings.lancedb_dir).open(CHUNK_INDEX).to_arrow()
    rows = pl.from_arrow(table.select(["kind", "conversation_id", "turn_start", "turn_end", "vector"]))
    rows = rows.filter((pl.col("kind") == kind) & (pl.col("conversation_id") == rows["conversation_id"][0]))
    return list(rows.iter_rows(named=True))


def test_pooled_windows_cost_no_embedding_and_take_the_mean_of_their_turns(settings, fast_resources, run_pipeline):
    """`chunk_pool_windows` on (the default): the next run embeds nothing again and gives each window the
    normalised mean of its turns' vectors instead of its own text's (off, it embeds the window's text)."""
    from memlake.settings import load_settings, write_home_setting
    from resources import build_resources

    land(settings, "alice", "chat.jsonl", jsonl(*ALICE[:2]))
    write_home_setting(settings.home, "chunk_pool_windows", "false")
    fast_resources.update({**build_resources(load_settings(settings.home)), "embedder": fast_resources["embedder"]})
    assert run_pipeline().success
    assert latest_metadata(run_pipeline.instance, ["search", "chunk_index"])["embedded"] == 3  # 2 turns, 1 window
    (own,) = index_vectors(settings, "window").values()

    write_home_setting(settings.home, "chunk_pool_windows", "true")
    fast_resources.update({**build_resources(load_settings(settings.home)), "embedder": fast_resources["embedder"]})
    assert run_pipeline(days=Lake(settings.lake_dir).partitions(CHUNKS)).success
    pooled = latest_metadata(run_pipeline.instance, ["search", "chunk_index"])
    assert pooled["embedded"] == 0 and pooled["pooled_vectors"] == 1  # the window (the session kept its vector)
    turns, (window,) = index_vectors(settings, "turn"), index_vectors(settings, "window").values()
    mean = (turns[(0, 0)] + turns[(1, 1)]) / 2
    assert np.allclose(window, mean / np.linalg.norm(mean), atol=1e-6)
    assert not np.allclose(window, own, atol=1e-3)


def test_a_turn_with_sentence_keys_takes_the_mean_of_its_sentences_and_its_own_text_is_not_embedded(
    settings, fast_resources, run_pipeline
):
    """`chunk_pool_turns` on (the default): a turn with two sentences gets the normalised mean of its sentence keys'
    vectors and its own text is never embedded; a one-sentence turn is embedded as before. Switching the setting
    gives the turn its own text's vector, and back its pooled one, without embedding anything already seen."""
    from memlake.settings import load_settings, write_home_setting
    from resources import build_resources

    two = msg("trip", 0, "user", "I moved to Porto in May. My sister Ana lives in Lisbon now.", "2024-03-01")
    reply = msg("trip", 1, "assistant", "Porto is lovely.", "2024-03-01")
    land(settings, "alice", "chat.jsonl", jsonl(two, reply))

    def run(pool_turns: str) -> dict:
        write_home_setting(settings.home, "chunk_pool_turns", pool_turns)
        fast_resources.update({**build_resources(load_settings(settings.home)), "embedder": fast_resources["embedder"]})
        assert run_pipeline(days=Lake(settings.lake_dir).partitions(CHUNKS) or None).success
        return latest_metadata(run_pipeline.instance, ["search", "chunk_index"])

    pooled_run = run("true")
    assert pooled_run["embedded"] == 3  # two sentences and the one-sentence reply: not the two-sentence turn
    sentences = [np.asarray(row["vector"]) for row in index_rows(settings, "sentence")]
    (pooled,) = [v for (start, _), v in index_vectors(settings, "turn").items() if start == 0]
    mean = sum(sentences) / len(sentences)
    assert len(sentences) == 2 and np.allclose(pooled, mean / np.linalg.norm(mean), atol=1e-6)

    own_run = run("false")
    assert own_run["embedded"] == 1  # the turn's own text, now
    (own,) = [v for (start, _), v in index_vectors(settings, "turn").items() if start == 0]
    assert not np.allclose(own, pooled, atol=1e-3)
    again = run("true")
    assert again["embedded"] == 0
    (back,) = [v for (start, _), v in index_vectors(settings, "turn").items() if start == 0]
    assert np.allclose(back, pooled, atol=1e-6)


def test_spanned_sentences_take_their_vectors_from_their_turns_pass_and_a_reindex_embeds_nothing(tmp_path):
    """`chunk_span_sentences`: a turn's sentence keys get their vectors from the turn's one model pass (no text of
    their own embedded), the turn its vector from the same pass; the cache makes a rebuilt index embed 0 texts;
    an edited turn gives its sentences new hashes, so they are read again."""
    from memlake.chunks import build_chunks
    from memlake.embedding_cache import EmbeddingCache
    from memlake.schemas import CHUNKS as SPEC

    embedder = HashEmbedder()
    passes: list[list[str]] = []

    def embed_spans(texts, spans):
        passes.append(list(texts))
        return embedder.embed(texts), [
            [embedder.embed([" | ".join(text[a:b] for a, b in span)])[0] for span in wanted]
            for text, wanted in zip(texts, spans, strict=True)
        ]

    def chunks_of(second: str) -> pl.DataFrame:
        when = datetime.fromisoformat("2024-03-01T09:00:00+00:00")
        turns = pl.DataFrame(
            [{"agent_id": "a", "conversation_id": "c", "message_id": f"m{i}", "turn_index": i, "role": "user",
              "speaker": "Alice", "content": content, "created_at": when, "conversation_started_at": when,
              "title": None} for i, content in enumerate(["Noted, thanks.", f"I moved to Porto in May. {second}"])]
        )
        return build_chunks(turns, embedder.count_tokens, cut(chunk_sentences=True, chunk_span_sentences=True))

    def sync(store: VectorStore, frame: pl.DataFrame, cache: EmbeddingCache):
        return store.sync(CHUNK_INDEX, frame, base_schema=SPEC.schema, key="chunk_id", scope="true",
                          embed=embedder.embed, embedder=embedder.name, dim=embedder.dim, pool_by="conversation_id",
                          cache=cache, spanned_kinds=("sentence",), embed_spans=embed_spans)

    cache = EmbeddingCache(tmp_path / "cache", embedder.identity, embedder.dim)
    frame = chunks_of("My sister Ana lives in Lisbon now.")
    first = sync(VectorStore(tmp_path / "one"), frame, cache)
    turn_text = "Alice: I moved to Porto in May. My sister Ana lives in Lisbon now."
    assert passes == [[turn_text]]  # one pass reads the turn and both its sentences
    assert first.spanned == 2 and first.embedded == 2  # that pass and the short turn; no sentence text embedded
    stored = pl.from_arrow(VectorStore(tmp_path / "one").open(CHUNK_INDEX).to_arrow())
    vectors = {(r["kind"], r["text"].split(": ", 1)[1]): np.asarray(r["vector"]) for r in stored.iter_rows(named=True)}
    expected = embedder.embed(["Alice:  | My sister Ana lives in Lisbon now."])[0]
    np.testing.assert_allclose(vectors[("sentence", "My sister Ana lives in Lisbon now.")], expected, atol=1e-6)
    np.testing.assert_allclose(vectors[("turn", turn_text.split(": ", 1)[1])], embedder.embed([turn_text])[0],
                               atol=1e-6)

    rebuilt = sync(VectorStore(tmp_path / "two"), frame, cache)  # a lost index: everything from the cache
    assert rebuilt.embedded == 0 and len(passes) == 1

    edited = sync(VectorStore(tmp_path / "two"), chunks_of("My sister Ana lives in Faro now."), cache)
    assert len(passes) == 2 and edited.spanned == 2  # the turn's text changed: both sentences read again


def test_two_agents_with_the_same_conversation_id_never_pool_each_others_turns(tmp_path):
    """Conversation ids come from the exports and repeat across agents (LoCoMo: "session_1" for each of ten);
    indexed in one sync, a session's vector is the mean of its own agent's turns only, and a sentence read from
    its turn's pass finds its own agent's turn."""
    from memlake.chunks import build_chunks
    from memlake.schemas import CHUNKS as SPEC

    embedder = HashEmbedder()
    read: list[str] = []

    def embed_spans(texts, spans):
        read.extend(texts)
        return embedder.embed(texts), [[embedder.embed(["span"])[0] for _ in wanted] for wanted in spans]

    when = datetime.fromisoformat("2024-03-01T09:00:00+00:00")
    said = {"a": ["Oolong every morning. Never coffee at all.", "Porto in May."],
            "b": ["Trains to Hamburg on Fridays. Bikes on weekends.", "Skiing in March."]}
    turns = pl.DataFrame(
        [{"agent_id": agent, "conversation_id": "session_1", "message_id": f"{agent}{i}", "turn_index": i,
          "role": "user", "speaker": "Sam", "content": content, "created_at": when, "conversation_started_at": when,
          "title": None} for agent, contents in said.items() for i, content in enumerate(contents)]
    )
    frame = build_chunks(turns, embedder.count_tokens, cut(chunk_sentences=True, chunk_span_sentences=True))
    store = VectorStore(tmp_path / "lancedb")
    result = store.sync(CHUNK_INDEX, frame, base_schema=SPEC.schema, key="chunk_id", scope="true",
                        embed=embedder.embed, embedder=embedder.name, dim=embedder.dim, pool_by="conversation_id",
                        spanned_kinds=("sentence",), embed_spans=embed_spans)
    stored = pl.from_arrow(store.open(CHUNK_INDEX).to_arrow())
    for agent, contents in said.items():
        session = stored.filter((pl.col("agent_id") == agent) & (pl.col("kind") == "session"))["vector"][0]
        mean = embedder.embed([f"Sam: {content}" for content in contents]).mean(axis=0)
        np.testing.assert_allclose(np.asarray(session), mean / np.linalg.norm(mean), atol=1e-6)
    assert result.spanned == 4 and sorted(read) == sorted(f"Sam: {said[a][0]}" for a in said)


def test_a_long_answer_embeds_at_most_its_token_budget_and_its_other_passages_have_no_vector(tmp_path):
    """`chunk_long_turn_tokens`: a long answer's passages send at most that many tokens to the model, its most
    distinctive sentences first; every passage is still a row (found by full text), those past the budget with no
    vector (vector search never returns them); the turn's vector is the mean of those embedded. Turning the budget
    on in an index built without it embeds nothing (what it keeps was embedded before) and pools the turn again."""
    from memlake.chunks import build_chunks
    from memlake.embedding_cache import EmbeddingCache
    from memlake.schemas import CHUNKS as SPEC
    from tests.search.test_memory_search import LONG_ANSWER

    embedder = HashEmbedder()
    sent: list[str] = []

    def embed(texts):
        sent.extend(texts)
        return embedder.embed(texts)

    when = datetime.fromisoformat("2024-03-01T09:00:00+00:00")
    turns = pl.DataFrame(
        [{"agent_id": "a", "conversation_id": "it", "message_id": f"m{i}", "turn_index": i, "role": role,
          "speaker": None, "content": content, "created_at": when, "conversation_started_at": when, "title": None}
         for i, (role, content) in enumerate([("user", "How do I get the office network ready?"),
                                              ("assistant", LONG_ANSWER)])]
    )

    def sync(tokens: int, store: VectorStore, cache: EmbeddingCache):
        sent.clear()
        frame = build_chunks(turns, embedder.count_tokens, cut(chunk_sentences=True, chunk_long_turn_words=100,
                                                               chunk_long_turn_keys=6, chunk_long_turn_tokens=tokens))
        result = store.sync(CHUNK_INDEX, frame, base_schema=SPEC.schema, key="chunk_id", scope="true", embed=embed,
                            embedder=embedder.name, dim=embedder.dim, pool_by="conversation_id", cache=cache)
        return frame, result

    cache = EmbeddingCache(tmp_path / "cache", embedder.identity, embedder.dim)
    unbounded, _ = sync(0, VectorStore(tmp_path / "unbounded"), cache)
    every_passage = [t for t in sent if t.startswith("Assistant: ")]
    assert len(every_passage) == unbounded.filter(pl.col("kind") == "passage").height == 6

    store = VectorStore(tmp_path / "unbounded")
    frame, result = sync(40, store, cache)
    passages = frame.filter(pl.col("kind") == "passage")
    assert passages["chunk_id"].to_list() == unbounded.filter(pl.col("kind") == "passage")["chunk_id"].to_list()
    assert result.embedded == 0 and result.text_only == 4  # two embedded, both seen before
    cache_off, _ = sync(40, VectorStore(tmp_path / "no_cache"), EmbeddingCache(tmp_path / "c2", "x", embedder.dim))
    said = [t for t in sent if t.startswith("Assistant: ")]
    assert 1 <= len(said) < 6 and sum(embedder.count_tokens(said)) <= 40
    assert "Assistant: For the field laptops, the Kestrel router needs firmware 4.2 before it will hold a VPN " \
           "tunnel." in said  # the most distinctive sentence goes first

    stored = pl.from_arrow(store.open(CHUNK_INDEX).to_arrow()).filter(pl.col("kind").is_in(["passage", "turn"]))
    vectors = {row["embed_text"]: np.asarray(row["vector"]) for row in stored.iter_rows(named=True)}
    embedded = [vectors[t] for t in said]
    assert sum(1 for t in passages["embed_text"] if not np.any(vectors[t])) == 4  # no vector past the budget
    mean = sum(embedded) / len(embedded)
    np.testing.assert_allclose(vectors[f"Assistant: {LONG_ANSWER}"], mean / np.linalg.norm(mean), atol=1e-6)


def test_two_writers_indexing_one_new_table_at_once_both_succeed_and_leave_one_set_of_indexes(tmp_path):
    """Two day runs (or two hosts on one object store) index one new table at the same moment: Lance commits one
    writer's index and refuses the other's as a retryable conflict; that writer tries again on the table as it
    now is, and finds the index there."""
    import threading

    import lancedb
    import pyarrow as pa

    for attempt in range(3):  # each round raced on every try of the two writers without the retry
        folder = tmp_path / str(attempt)
        rows = pa.table({"chunk_id": [f"c{i}" for i in range(200)], "text": [f"note {i}" for i in range(200)],
                         "agent_id": ["alice", "bob"] * 100})
        lancedb.connect(folder).create_table("chunk_index", rows)
        barrier = threading.Barrier(2)
        errors: list[BaseException] = []

        def index(store: VectorStore, barrier: threading.Barrier, errors: list[BaseException]) -> None:
            barrier.wait()
            try:
                store.ensure_indexes("chunk_index")
            except Exception as error:  # noqa: BLE001 - the test reports what a writer raised
                errors.append(error)

        writers = [threading.Thread(target=index, args=(VectorStore(folder), barrier, errors)) for _ in range(2)]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join()
        assert errors == []
        table = lancedb.connect(folder).open_table("chunk_index")
        assert sorted(tuple(index.columns) for index in table.list_indices()) == [
            ("agent_id",), ("chunk_id",), ("text",)]
