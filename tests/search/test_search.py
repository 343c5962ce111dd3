"""Chunks, the chunk index and hybrid search end to end, with the hashing embedder.

Landing files go through the real pipeline (manifest, turns, chunks,
chunk_index) into a tmp home; `Memory.search` reads it back.
"""

import json
from datetime import UTC, date, datetime

import dagster as dg
import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from memlake.api import Memory
from memlake.embedding import HashEmbedder
from memlake.lake import Lake
from memlake.schemas import CHUNK_INDEX, CHUNKS
from memlake.search import mentioned, mmr_order, names_identifier, parse_as_of, recency
from memlake.vectors import Filters, VectorStore, day_scope, quote
from tests.conftest import land


def jsonl(*rows: dict) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def msg(conversation: str, index: int, role: str, content: str, day: str, **extra) -> dict:
    return {
        "conversation_id": conversation,
        "message_id": f"{conversation}-m{index}",
        "role": role,
        "content": content,
        "created_at": f"{day}T10:{index:02d}:00Z",
        **extra,
    }


ALICE = [
    msg("orders", 0, "user", "My order ORD-58213 still has not arrived.", "2024-03-01"),
    msg("orders", 1, "assistant", "I am sorry, I will chase the courier today.", "2024-03-01"),
    msg("tea", 0, "user", "I drink oolong tea every morning, never coffee.", "2024-03-05"),
    msg("tea", 1, "assistant", "Oolong is a lovely choice.", "2024-03-05"),
    msg("code", 0, "user", "parse_ledger_v2 crashes on empty files.", "2024-06-10"),
    msg("code", 1, "assistant", "Guard the empty case before parsing.", "2024-06-10"),
    msg("march", 0, "user", "The team offsite is in Porto.", "2024-03-02"),
    msg("march", 1, "assistant", "Noted.", "2024-03-02"),
    msg("june", 0, "user", "The team offsite is in Porto.", "2024-06-02"),
    msg("june", 1, "assistant", "Noted.", "2024-06-02"),
]
BOB = [
    msg("secret", 0, "user", "Bob's secret launch code is ZEBRA-991 and he loves oolong tea.", "2024-03-01"),
]


def hash_memory(settings) -> Memory:
    return Memory(settings=settings.model_copy(update={"embedding_model": "hash"}))


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """One home, built once for the read-only tests of this module."""
    from memlake.settings import load_settings
    from pipelines.runs import run_landing
    from resources import HashEmbedderResource, build_resources

    settings = load_settings(tmp_path_factory.mktemp("search") / "home")
    settings.ensure_dirs()
    land(settings, "alice", "chat.jsonl", jsonl(*ALICE))
    land(settings, "bob", "chat.jsonl", jsonl(*BOB))
    resources = {**build_resources(settings), "embedder": HashEmbedderResource()}
    outcome = run_landing(settings, resources=resources, instance=dg.DagsterInstance.ephemeral())
    assert outcome.success, outcome
    assert {"transcripts/chunks", "search/chunk_index"} <= set(outcome.materialized)
    return settings


def index_frame(settings) -> pl.DataFrame:
    table = VectorStore(settings.lancedb_dir).open(CHUNK_INDEX)
    return pl.from_arrow(table.to_arrow().drop(["vector"]))  # type: ignore[return-value]


def latest_metadata(instance: dg.DagsterInstance, key: list[str]) -> dict:
    event = instance.get_latest_materialization_event(dg.AssetKey(key))
    assert event is not None and event.asset_materialization is not None
    return {k: v.value for k, v in event.asset_materialization.metadata.items()}


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


def test_a_question_gets_the_session_lift_and_a_query_naming_an_identifier_does_not(home):
    """A session that matches a question lifts its turns; an identifier is matched on its own, because a
    short session of near-miss identifiers would otherwise outvote the turn holding the exact one."""
    memory = hash_memory(home)

    def lifts(query: str, session_weight: float) -> dict[str, float]:
        found = memory.search(query, "alice", k=10, session_weight=session_weight)
        return dict(zip(found["key"].to_list(), found["context_lift"].to_list(), strict=True))

    lifted, unlifted = lifts("Which tea do I drink?", 0.5), lifts("Which tea do I drink?", 0.0)
    assert any(lifted[key] > unlifted.get(key, 0.0) for key in lifted), (lifted, unlifted)
    for identifier in ("ORD-58213", "parse_ledger_v2"):
        assert lifts(identifier, 0.5) == lifts(identifier, 0.0)


def test_an_identifier_query_ranks_every_turn_holding_it_above_the_turns_around_them(settings, run_pipeline):
    """No turn rises on what its window, neighbour or session matched when the query names an identifier:
    the turns holding it come first, not the replies beside them."""
    land(settings, "alice", "orders.jsonl", jsonl(
        msg("late", 0, "user", "Where is ORD-77777? It has not come.", "2024-03-01"),
        msg("late", 1, "assistant", "I will chase the courier and write back.", "2024-03-01"),
        msg("late", 2, "user", "Thanks, the courier said Tuesday.", "2024-03-01"),
        msg("bill", 0, "user", "The invoice for ORD-77777 is wrong.", "2024-03-04"),
        msg("bill", 1, "assistant", "I can fix the invoice amount for you.", "2024-03-04"),
        msg("near", 0, "user", "ORD-77771 arrived fine, and ORD-77717 too.", "2024-03-06"),
    ))
    run_pipeline()
    found = hash_memory(settings).search("ORD-77777", "alice", k=6)
    holding = ["ORD-77777" in text for text in found["text"].to_list()]
    assert holding[:2] == [True, True] and not any(holding[2:]), found["text"].to_list()
    assert set(found["context_lift"].to_list()) == {0.0}


@pytest.mark.parametrize(
    ("query", "names_one"),
    [("ORD-58213", True), ("was order 582131 refunded", True), ("A320 seat", True), ("parse_ledger_v2", True),
     ("getUserName fails", True), ("What did Caroline research?", False), ("on October 13, 2023", False),
     ("her 18th birthday", False), ("music of the 1990s", False), ("mid-August plans", False),
     ("self-care", False)],
)
def test_an_identifier_is_letters_with_digits_a_long_number_or_a_code_symbol(query, names_one):
    assert names_identifier(query) == names_one


def test_another_agents_memory_is_never_returned(home):
    memory = hash_memory(home)
    for query in ("ZEBRA-991", "Bob's secret launch code", "oolong tea", "bob", "secret OR 1=1", "' OR '1'='1"):
        for scope_filter in ({}, {"role": "user"}):
            found = memory.search(query, "alice", k=20, **scope_filter)
            assert set(found["agent_id"].to_list()) <= {"alice"}, query
            assert not any("ZEBRA" in t for t in found["text"].to_list())
    with pytest.raises(ValueError):
        memory.search("oolong", "alice' OR agent_id = 'bob")
    with pytest.raises(ValueError):
        memory.search("oolong", "")
    # a conversation filter is a quoted value, never SQL
    assert memory.search("oolong", "alice", conversation_id="x' OR '1'='1").height == 0
    assert memory.search("ZEBRA-991", "bob")["message_ids"].to_list()[0] == ["secret-m0"]


def test_filters_restrict_role_time_and_conversation(home):
    memory = hash_memory(home)
    assistant = memory.search("oolong tea coffee", "alice", k=20, role="assistant")
    assert set(assistant["key"].to_list()) and all(t.startswith("Assistant") for t in assistant["text"])
    june = memory.search("offsite Porto", "alice", k=20, since="2024-06-01", until="2024-07-01")
    assert set(june["conversation_id"]) <= {"june", "code"}
    only_tea = memory.search("oolong", "alice", k=20, conversation_id="tea")
    assert set(only_tea["conversation_id"]) == {"tea"}


def test_k_above_the_candidate_count_still_gets_k_rows(home):
    memory = hash_memory(home)
    wide = memory.search("team offsite", "alice", k=8, candidates=3)
    assert wide.height == 8
    assert wide["key"].to_list() == memory.search("team offsite", "alice", k=8, candidates=8)["key"].to_list()


def test_recency_boost_follows_as_of(home):
    memory = hash_memory(home)
    query = {"query": "team offsite Porto", "agent_id": "alice", "k": 2, "role": "user", "recency_weight": 1.0}
    march = memory.search(**query, as_of="2024-03-03")
    june = memory.search(**query, as_of=datetime(2024, 6, 3))
    assert march["conversation_id"].to_list() == ["march", "june"]
    assert june["conversation_id"].to_list() == ["june", "march"]
    assert march["recency"][0] > march["recency"][1]


def test_full_text_search_answers_when_no_model_is_loadable(home):
    memory = Memory(settings=home.model_copy(update={"embedding_model": "none"}))
    found = memory.search("ORD-58213", "alice", k=3)
    assert found["message_ids"].to_list()[0] == ["orders-m0"]
    assert set(found["mode"]) == {"full_text"}
    assert "no embedding model" in found["note"][0]
    assert found["vector_rank"].is_null().all()


def test_a_model_path_that_is_not_there_is_full_text_and_the_note_says_which_and_why(home, tmp_path):
    missing = tmp_path / "no-such-model"
    memory = Memory(settings=home.model_copy(update={"embedding_model": str(missing)}))
    found = memory.search("ORD-58213", "alice", k=3)
    assert set(found["mode"]) == {"full_text"} and found["message_ids"].to_list()[0] == ["orders-m0"]
    assert f"cannot load embedding model '{missing}': no model folder there" in found["note"][0]


def test_a_full_text_only_search_ignores_a_query_vector_passed_in(home):
    """The BM25 baseline of the LoCoMo benchmark passes precomputed query vectors: they must not take part."""
    memory = hash_memory(home)
    query = "oolong tea coffee"
    vector = HashEmbedder().embed([query])[0]
    plain = memory.search(query, "alice", k=10, lists=("text",))
    given = memory.search(query, "alice", k=10, lists=("text",), query_vector=vector)
    assert set(given["mode"]) == {"full_text"}
    assert given["vector_rank"].is_null().all()
    assert given["key"].to_list() == plain["key"].to_list()


def test_an_index_built_without_a_model_is_full_text_only(settings, fast_resources, run_pipeline):
    from resources import EmbedderResource

    fast_resources["embedder"] = EmbedderResource(model="none")
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

    # a re-export changes one message: its turn and its window are embedded again, nothing else
    edited = [dict(ALICE[1], content="I found ORD-58213: it arrives Friday."), ALICE[0]]
    land(settings, "alice", "chat-v2.jsonl", jsonl(*edited))
    assert run_pipeline().success
    changed = latest_metadata(run_pipeline.instance, ["search", "chunk_index"])
    assert changed["embedded"] == 2  # the turn and the window holding it; the session vector is pooled
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


def test_filter_values_are_quoted_and_agent_ids_validated():
    assert quote("x' OR '1'='1") == "'x'' OR ''1''=''1'"
    where = Filters(conversation_ids=("a'b",), roles=("user",)).where("alice")
    assert where == "(agent_id = 'alice') AND (role IN ('user')) AND (conversation_id IN ('a''b'))"
    for bad in ("", "a b", "x' OR '1'='1", "a" * 65, "é"):
        with pytest.raises(ValueError):
            Filters().where(bad)
    with pytest.raises(ValueError):
        day_scope(["2024-01-01' OR true"])


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-03-01", datetime(2024, 3, 1, tzinfo=UTC)),
        ("2024-03-01T12:00:00Z", datetime(2024, 3, 1, 12, tzinfo=UTC)),
        ("2024-03-01T14:00:00+02:00", datetime(2024, 3, 1, 12, tzinfo=UTC)),
        (datetime(2024, 3, 1, 12), datetime(2024, 3, 1, 12, tzinfo=UTC)),
        (date(2024, 3, 1), datetime(2024, 3, 1, tzinfo=UTC)),
    ],
)
def test_as_of_naive_means_utc(value, expected):
    assert parse_as_of(value) == expected


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 0}, "k must be a whole number of at least 1, got 0"),
        ({"k": -3}, "k must be a whole number"),
        ({"k": "5"}, "k must be a whole number"),
        ({"k": 2.5}, "k must be a whole number"),
        ({"query": ""}, "a search needs words to look for"),
        ({"query": None}, "a search needs words to look for"),
        ({"query": 123}, "a search needs words to look for"),
        ({"as_of": "yesterday"}, "'yesterday' is not a date or time"),
        ({"as_of": 1700000000}, "1700000000 is not a date or time"),
        ({"role": "robot"}, "unknown role 'robot'"),
        ({"since": "2024-07-01", "until": "2024-01-01"}, "is not before until"),
        ({"mmr_lambda": 5}, "mmr_lambda must be in"),
        ({"mmr_lambda": "x"}, "mmr_lambda must be a number, got 'x'"),
        ({"rrf_k": "x"}, "rrf_k must be a number"),
        ({"mmr_lamda": 0.5}, "unknown search setting mmr_lamda"),
        ({"recency_weight": -100}, "recency_weight must be at least 0, got -100"),
        ({"rrf_k": 0}, "rrf_k must be above 0, got 0"),
        ({"scope": "facts", "k": 0}, "k must be a whole number"),
        ({"scope": "episodes", "role": "user"}, "a role filter applies to turns"),
        ({"scope": "facts", "role": "user"}, "a role filter applies to turns"),
    ],
)
def test_a_search_that_cannot_mean_anything_is_refused_with_what_is_wrong(home, kwargs, message):
    args = {"query": "oolong", "agent_id": "alice", **kwargs}
    with pytest.raises(ValueError, match=message):
        hash_memory(home).search(**args)


@pytest.mark.parametrize(
    ("read", "message"),
    [
        (lambda m: m.turns("alice", conversation_id=5), "conversation_id is a string, got 5"),
        (lambda m: m.episodes("alice", since="2024-06-01", until="2024-01-01"), "since .* is after until"),
        (lambda m: m.history(None, "alice"), "history needs a fact id"),
        (lambda m: m.facts("alice", include_history="no"), "include_history is True or False, got 'no'"),
    ],
    ids=["turns", "episodes", "history", "facts"],
)
def test_a_read_that_cannot_mean_anything_is_refused_with_what_is_wrong(home, read, message):
    with pytest.raises(ValueError, match=message):
        read(hash_memory(home))


def test_episodes_of_one_day_are_those_it_overlaps(home):
    memory = hash_memory(home)
    assert memory.episodes("alice", since="2024-06-02", until="2024-06-02").height >= 1  # a day is not a mistake


def test_a_date_means_the_whole_day_in_until_and_its_end_in_as_of(home):
    memory = hash_memory(home)
    day = memory.search("offsite Porto", "alice", k=20, since="2024-06-02", until="2024-06-02")
    assert set(day["conversation_id"]) == {"june"}  # the one day: since its start, until its end
    through = memory.search("offsite Porto", "alice", k=20, until="2024-03-02")
    assert "march" in set(through["conversation_id"])  # said at 10:00 on the until day
    as_date = memory.search("offsite Porto", "alice", k=5, as_of="2024-06-02")
    as_end = memory.search("offsite Porto", "alice", k=5, as_of="2024-06-02T23:59:59.999999Z")
    assert as_date["recency"].to_list() == as_end["recency"].to_list()


def test_as_of_may_be_a_date(home):
    memory = hash_memory(home)
    by_date = memory.search("oolong", "alice", as_of=date(2024, 3, 1))
    assert by_date.height and by_date.equals(memory.search("oolong", "alice", as_of="2024-03-01"))


def test_recency_halves_every_half_life_on_either_side():
    as_of = datetime(2024, 6, 1, tzinfo=UTC)
    assert recency(as_of, as_of, 30) == 1.0
    assert recency(datetime(2024, 5, 2, tzinfo=UTC), as_of, 30) == pytest.approx(0.5)
    assert recency(datetime(2024, 7, 1, tzinfo=UTC), as_of, 30) == pytest.approx(0.5)
    assert recency(None, as_of, 30) == 0.0


def test_mmr_keeps_order_at_one_and_skips_near_duplicates_below():
    vectors = np.asarray([[1, 0], [1, 0], [0, 1]], dtype=np.float32)
    assert mmr_order([0.9, 0.8, 0.7], vectors, 1.0, 3) == [0, 1, 2]
    assert mmr_order([0.9, 0.8, 0.7], vectors, 0.5, 3) == [0, 2, 1]
    assert mmr_order([0.9, 0.8, 0.7], None, 0.5, 2) == [0, 1]


def test_mention_matches_name_words_of_three_letters_or_more():
    assert mentioned("Caroline", {"what", "did", "caroline", "research"})
    assert mentioned("Priya Nair", {"priya"})
    assert not mentioned("Al", {"al"}) and not mentioned(None, {"x"})


def test_a_turn_with_no_speaker_named_is_mentioned_through_the_role_of_the_speaker_the_query_names(
    settings, run_pipeline
):
    """One export names the user (Priya), another does not (ChatGPT's, say): asking about Priya boosts the
    user's turns of both, and not the assistant's."""
    land(settings, "alice", "named.jsonl", jsonl(
        msg("trip", 0, "user", "I am packing for Lisbon.", "2024-03-01", speaker="Priya"),
        msg("trip", 1, "assistant", "Take a light jacket.", "2024-03-01", speaker="Assistant"),
    ))
    land(settings, "alice", "unnamed.jsonl", jsonl(
        msg("tea", 0, "user", "I never drink coffee, only oolong.", "2024-03-02"),
        msg("tea", 1, "assistant", "Oolong has less caffeine than coffee.", "2024-03-02"),
    ))
    run_pipeline()
    found = hash_memory(settings).search("what does Priya drink", "alice", k=4)
    mention = dict(zip(found["message_ids"].list.first().to_list(), found["mention"].to_list(), strict=True))
    assert mention == {"trip-m0": 1.0, "tea-m0": 1.0, "trip-m1": 0.0, "tea-m1": 0.0}
    plain = hash_memory(settings).search("what does she drink", "alice", k=4)  # no one named: no credit
    assert set(plain["mention"].to_list()) == {0.0}


def test_cli_search_prints_hits_and_json(home, monkeypatch):
    from pipelines.cli import app

    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")
    runner = CliRunner()
    plain = runner.invoke(app, ["search", "ORD-58213", "--agent", "alice", "-k", "3", "--home", str(home.home)])
    assert plain.exit_code == 0, plain.output
    assert "orders-m0" in plain.output.splitlines()[0]
    as_json = runner.invoke(app, ["search", "ORD-58213", "--agent", "alice", "--json", "--home", str(home.home)])
    first = json.loads(as_json.output.splitlines()[0])
    assert first["message_ids"] == ["orders-m0"] and first["agent_id"] == "alice"
    assert datetime.fromisoformat(first["created_at"]).tzinfo is not None and "T" in first["created_at"]
    for scope in ("episodes", "facts"):  # the terminal reads LanceDB directly: its error, not LanceDB's
        by_role = runner.invoke(app, ["search", "tea", "--agent", "alice", "--scope", scope, "--role", "user",
                                      "--home", str(home.home)])
        assert "a role filter applies to turns" in str(by_role.exception)


def test_cli_search_reads_lancedb_without_loading_the_agents_rows_into_memory(home, monkeypatch):
    """One search per process: a snapshot of the agent's rows would cost more than the search itself."""
    from memlake.vectors import Snapshot
    from pipelines.cli import app

    def refuse(*args, **kwargs):
        raise AssertionError("snapshot loaded")

    monkeypatch.setattr(Snapshot, "load", staticmethod(refuse))
    with pytest.raises(AssertionError, match="snapshot loaded"):  # what a long-lived Memory does
        hash_memory(home).search("ORD-58213", "alice", k=3)
    monkeypatch.setenv("MEMLAKE_EMBEDDING_MODEL", "hash")
    found = CliRunner().invoke(app, ["search", "ORD-58213", "--agent", "alice", "-k", "3", "--home", str(home.home)])
    assert found.exit_code == 0, found.output
    assert "orders-m0" in found.output.splitlines()[0]


def test_search_layer_is_in_the_code_location():
    from pipelines.definitions import defs

    keys = {key.to_user_string() for key in defs.resolve_all_asset_keys()}
    assert {"transcripts/chunks", "search/chunk_index", "search/episode_index", "search/fact_index"} <= keys


@pytest.mark.parametrize("model", ["hash", "none"], ids=["by-vector", "by-words"])
def test_an_episode_hit_lists_its_best_matching_message_first(settings, run_pipeline, model):
    land(settings, "alice", "trip.jsonl", jsonl(
        msg("trip", 0, "user", "We fly to Lisbon in May.", "2024-03-01"),
        msg("trip", 1, "assistant", "Lovely, pack light.", "2024-03-01"),
        msg("trip", 2, "user", "My cat Miso stays with my sister Leela while we are away.", "2024-03-01"),
        msg("trip", 3, "assistant", "Good, then nobody has to feed her.", "2024-03-01"),
    ))
    run_pipeline()
    memory = Memory(settings=settings.model_copy(update={"embedding_model": model}))
    found = memory.search("who looks after the cat Miso", "alice", scope="episodes", k=1)
    assert found["conversation_id"].to_list() == ["trip"]
    assert found["message_ids"][0].to_list()[0] == "trip-m2"
    assert sorted(found["message_ids"][0].to_list()) == ["trip-m0", "trip-m1", "trip-m2", "trip-m3"]


def test_episode_and_fact_indexes_are_searched_by_scope(tmp_path):
    from memlake.lake import conform
    from memlake.schemas import EPISODE_INDEX, EPISODES, FACT_INDEX, FACTS
    from memlake.search import EPISODE_INDEX_SCHEMA, FACT_INDEX_SCHEMA, episode_index_rows, fact_index_rows
    from memlake.settings import load_settings

    settings = load_settings(tmp_path / "home", embedding_model="hash")
    embedder = HashEmbedder()
    store = VectorStore(settings.lancedb_dir)
    when = datetime(2024, 3, 1, tzinfo=UTC)
    episodes = pl.from_arrow(conform(EPISODES, [
        {"agent_id": "alice", "conversation_id": "c1", "title": "Postgres vs MongoDB for Heron",
         "summary": "Chose Postgres.", "topics": ["databases"], "decisions": ["use Postgres"],
         "conversation_started_at": when, "salience": 0.9, "message_ids": ["m1", "m2"]},
        {"agent_id": "bob", "conversation_id": "c9", "title": "Postgres tuning", "summary": "Bob's vacuum settings.",
         "conversation_started_at": when, "salience": 0.5, "message_ids": ["b1"]},
    ])).with_columns(pl.lit("2024-03-01").alias("day"))
    facts = pl.from_arrow(conform(FACTS, [
        {"fact_id": "f1", "version": 1, "agent_id": "alice", "type": "fact", "subject": "user", "slot": "home_city",
         "value": "Berlin", "content": "The user lives in Berlin.", "status": "superseded", "created_at": when,
         "importance": 0.5, "source_conversation_ids": ["c1"], "source_message_ids": ["m1"]},
        {"fact_id": "f1", "version": 2, "agent_id": "alice", "type": "fact", "subject": "user", "slot": "home_city",
         "value": "Lisbon", "content": "The user lives in Lisbon.", "status": "active", "created_at": when,
         "importance": 0.5, "source_conversation_ids": ["c2"], "source_message_ids": ["m7", "m8"]},
    ]))
    store.sync(EPISODE_INDEX, episode_index_rows(episodes), base_schema=EPISODE_INDEX_SCHEMA, key="episode_key",
               scope=day_scope(["2024-03-01"]), embed=embedder.embed, embedder=embedder.name, dim=embedder.dim)
    store.sync(FACT_INDEX, fact_index_rows(facts), base_schema=FACT_INDEX_SCHEMA, key="fact_key", scope="true",
               embed=embedder.embed, embedder=embedder.name, dim=embedder.dim)
    memory = Memory(settings=settings)

    found = memory.search("Postgres decision", "alice", scope="episodes")
    assert found["conversation_id"].to_list() == ["c1"] and found["title"][0] == "Postgres vs MongoDB for Heron"
    assert found["message_ids"].to_list()[0] == ["m1", "m2"] and found["importance"][0] == 0.9
    lives = memory.search("where does the user live", "alice", scope="facts", k=5)
    assert lives["text"].to_list() == ["The user lives in Lisbon."]  # superseded versions are not returned
    assert lives["conversation_id"][0] == "c2" and lives["status"][0] == "active" and lives["mention"][0] == 1.0
    with pytest.raises(ValueError):
        memory.search("x", "alice", scope="graph")
