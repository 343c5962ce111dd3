"""`Memory.search` end to end with the hashing embedder: what it ranks first, whose rows, which filters and times.

Most tests read the folder's `home` (built once per module, see conftest.py); a test that needs other chats
lands them and runs the pipeline itself.
"""

from datetime import UTC, date, datetime

import polars as pl
import pytest

from memlake.api import Memory
from memlake.embedding import HashEmbedder
from memlake.vectors import VectorStore, day_scope
from tests.conftest import land
from tests.search.helpers import hash_memory
from tests.transcripts.helpers import jsonl, msg


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
    with pytest.raises(ValueError, match="unknown scope 'everything'"):  # graph is a scope now (issue 24)
        memory.search("x", "alice", scope="everything")


LONG_ANSWER = " ".join([
    "Here is how I would set up the shared drive for the team.",
    *(f"Step {i}: create folder {i} for the quarterly reports and give the finance group read access to it."
      for i in range(1, 9)),
    "For the field laptops, the Kestrel router needs firmware 4.2 before it will hold a VPN tunnel.",
    "Flash it from the admin page, then reboot it twice so the new certificate is picked up.",
    *(f"Check {i}: confirm that backup job {i} ran overnight and that its log shows no skipped files."
      for i in range(1, 9)),
])


def test_a_hit_on_a_long_answer_returns_the_passage_that_matched_with_the_turns_ids(settings, run_pipeline):
    """A long answer's hit is the part that matched (within the turn, its ids and key): a fixed budget of
    words then holds more evidence; `Memory.turns` gives the whole turn."""
    land(settings, "alice", "it.jsonl", jsonl(
        msg("it", 0, "user", "How do I get the office network ready for the field team?", "2024-03-01"),
        msg("it", 1, "assistant", LONG_ANSWER, "2024-03-01"),
        msg("tea", 0, "user", "I drink oolong tea every morning, never coffee.", "2024-03-05"),
    ))
    run_pipeline()
    memory = hash_memory(settings)
    found = memory.search("Kestrel router firmware", "alice", k=3)

    hit = found.row(0, named=True)
    assert hit["message_ids"] == ["it-m1"] and hit["excerpt"] is True
    assert "Kestrel router needs firmware 4.2" in hit["text"]
    said = hit["text"].split(": ", 1)[1]  # after the "Assistant, 1 March 2024" header
    assert said in LONG_ANSWER and len(said.split()) < len(LONG_ANSWER.split()) / 2
    whole = memory.turns("alice", hit["conversation_id"]).filter(pl.col("turn_index") == hit["turn_start"])
    assert whole["content"].to_list() == [LONG_ANSWER]
    short = memory.search("oolong tea", "alice", k=1).row(0, named=True)
    assert short["excerpt"] is False and short["text"].endswith("I drink oolong tea every morning, never coffee.")


def test_a_long_answer_found_through_the_question_it_answered_returns_a_passage_not_the_whole(
    settings, run_pipeline
):
    """A user trial: a long answer that ranked by the question it replied to (or by itself) came back whole,
    in search and in the context block, eating the budget; it returns one passage, read from memory or from
    LanceDB alike (a one-off CLI search holds no snapshot)."""
    land(settings, "alice", "it.jsonl", jsonl(
        msg("it", 0, "user", "How do I get the office network ready for the field team?", "2024-03-01"),
        msg("it", 1, "assistant", LONG_ANSWER, "2024-03-01"),
    ))
    run_pipeline()
    warm = hash_memory(settings)
    one_off = Memory(settings=settings.model_copy(update={"embedding_model": "hash", "search_snapshot_rows": 0}))
    for memory in (warm, one_off):
        found = memory.search("how do I get the office network ready for the field team", "alice", k=2)
        (reply,) = found.filter(pl.col("message_ids").list.first() == "it-m1").to_dicts()
        assert reply["vector_match"] in ("question", "turn") and reply["excerpt"] is True
        said = reply["text"].split(": ", 1)[1]
        assert said in LONG_ANSWER and len(said.split()) < len(LONG_ANSWER.split()) / 2
    block = warm.context("How do I get the office network ready for the field team?", "alice", budget=400)
    assert LONG_ANSWER not in block.text


def test_a_hit_on_a_passage_with_no_vector_of_its_own_returns_that_passage(settings, run_pipeline):
    """With `chunk_long_turn_tokens`, a long answer's passages past its budget have no vector; full text still finds
    one, and the hit returns that passage (with the turn's ids), not the whole answer nor an embedded passage."""
    import numpy as np

    from memlake.schemas import CHUNK_INDEX
    from memlake.settings import write_home_setting

    write_home_setting(settings.home, "chunk_long_turn_tokens", "20")
    land(settings, "alice", "it.jsonl", jsonl(
        msg("it", 0, "user", "How do I get the office network ready for the field team?", "2024-03-01"),
        msg("it", 1, "assistant", LONG_ANSWER, "2024-03-01"),
        msg("tea", 0, "user", "I drink oolong tea every morning, never coffee.", "2024-03-05"),
    ))
    run_pipeline()
    hit = hash_memory(settings).search("backup job 5 skipped files", "alice", k=3).row(0, named=True)

    assert hit["message_ids"] == ["it-m1"] and hit["excerpt"] is True
    assert "Check 5: confirm that backup job 5 ran overnight" in hit["text"]
    stored = VectorStore(settings.lancedb_dir).open(CHUNK_INDEX).to_arrow().to_pylist()
    (passage,) = [r for r in stored if r["kind"] == "passage" and r["text"] == hit["text"]]
    assert not np.any(passage["vector"])  # the part that matched has no vector of its own


def test_a_reader_embeds_a_question_once_whatever_scopes_it_searches(home, monkeypatch):
    """A context block searches its question in facts, then in turns; the recall tool's `all` in every scope: the
    query's vector (~5.5 ms of CPU with the packaged model) is computed once per reader, a new question anew."""
    embedded: list[list[str]] = []
    embed = HashEmbedder.embed
    monkeypatch.setattr(HashEmbedder, "embed", lambda self, texts: embedded.append(list(texts)) or embed(self, texts))
    memory = hash_memory(home)
    first = memory.search("oolong tea", "alice", k=3, as_of="2024-03-10")  # recency counted from one moment
    for scope in ("episodes", "facts", "chunks"):
        memory.search("oolong tea", "alice", k=3, scope=scope)
    assert embedded.count(["oolong tea"]) == 1
    again = memory.search("oolong tea", "alice", k=3, as_of="2024-03-10")
    assert again["key"].to_list() == first["key"].to_list() and again["score"].to_list() == first["score"].to_list()
    memory.search("porto offsite", "alice", k=3)
    assert embedded.count(["porto offsite"]) == 1


def test_a_decay_by_the_words_a_conversation_gave_lets_a_few_results_reach_another_conversation(
    settings, run_pipeline
):
    """RealMem: within 750 words memlake's hits came from 3.8 conversations where BM25's came from 5.5, the
    turns of one matching conversation (and the neighbours its lifts bring in) filling the budget. With
    `same_conversation_decay` (per 100 words taken; these turns are about 10 words) the other conversation that
    also speaks of it gets into the first three."""
    memory = garden_home(settings, run_pipeline)

    def first_conversations(decay: float) -> list[str]:
        found = memory.search("tomato seedlings", "alice", k=3, same_conversation_decay=decay)
        return found["conversation_id"].to_list()

    assert len(set(first_conversations(1.0))) == 1
    spread = first_conversations(0.05)
    assert len(set(spread)) == 2 and spread[0] == first_conversations(1.0)[0]


def test_the_score_a_user_sees_is_the_one_the_list_is_ordered_by(settings, run_pipeline):
    """A hit the spread over conversations or MMR moved up has a score at most the one above it: `score` is what
    ordered the list; `own_score` is the hit's own before the spread, and the first hit's score is its own."""
    memory = garden_home(settings, run_pipeline)
    for params in ({"same_conversation_decay": 0.05}, {"mmr_lambda": 0.5}, {}):
        for question in ("tomato seedlings", "where are my seedlings growing?", "a plot at the allotment"):
            found = memory.search(question, "alice", k=6, **params)
            scores = found["score"].to_list()
            assert scores == sorted(scores, reverse=True), (params, question, found.select("score", "own_score"))
            assert found["own_score"][0] == pytest.approx(scores[0])
    moved = memory.search("tomato seedlings", "alice", k=3, same_conversation_decay=0.05)
    assert (moved["own_score"] > moved["score"]).any()  # the spread changed an order, and says so


def garden_home(settings, run_pipeline):
    """Alice's two conversations about tomato seedlings, one of four turns, one of two, through the pipeline."""
    land(settings, "alice", "garden.jsonl", jsonl(
        msg("garden", 0, "user", "My tomato seedlings on the balcony are leggy.", "2024-04-01"),
        msg("garden", 1, "assistant", "Leggy tomato seedlings want more light on the balcony.", "2024-04-01"),
        msg("garden", 2, "user", "I moved the tomato seedlings under a lamp.", "2024-04-01"),
        msg("garden", 3, "assistant", "Good: tomato seedlings under a lamp grow stocky.", "2024-04-01"),
        msg("allotment", 0, "user", "The allotment committee gave me a plot for tomato seedlings next year.",
            "2024-05-01"),
        msg("allotment", 1, "assistant", "Congratulations on the plot.", "2024-05-01"),
    ))
    run_pipeline()
    return hash_memory(settings)


STARTER_ANSWER = (
    "Reviving a sluggish sourdough starter takes a week of steady habits, so here is a plan you can follow "
    "without buying anything new. First, keep the sourdough starter somewhere warm, ideally between 24 and 27 "
    "degrees, because a cold kitchen is the most common reason a starter stays flat and smells sharp. Feed it "
    "twice a day at equal weights of flour and water, discarding all but a spoonful each time. "
    "Second, change the flour: a sourdough starter fed only white flour has little to eat, so mix in a "
    "quarter of wholemeal rye for a few days and you will see more bubbles within a day or two. Use a clean "
    "jar every few days and mark the level with a rubber band so you can see how far it rises. "
    "Third, if it still lags, replace the water in one feed with unsweetened pineapple juice: its acidity "
    "keeps the bad bacteria down while the wild yeast in the jar wakes up, an old trick from "
    "bakers who started theirs from scratch. Go back to water once it doubles reliably. "
    "Finally, be patient with the sourdough starter: some take ten days to settle, and once it doubles in "
    "four to six hours after a feed it is ready to bake with, so plan your first loaf for the weekend."
)


def test_a_long_answer_returns_the_passage_with_the_words_that_set_it_apart_not_the_topic_words(
    settings, run_pipeline
):
    """A user trial: "what juice for the sourdough starter" returned the answer's first passage, which says
    "sourdough starter" like every other, and not the one with the pineapple juice."""
    land(settings, "alice", "bake.jsonl", jsonl(
        msg("bake", 0, "user", "My sourdough starter is sluggish, how do I revive it?", "2024-03-01"),
        msg("bake", 1, "assistant", STARTER_ANSWER, "2024-03-01"),
    ))
    run_pipeline()
    hit = hash_memory(settings).search("what juice for the sourdough starter", "alice", k=1).row(0, named=True)
    assert hit["excerpt"] is True and "pineapple juice" in hit["text"]
