"""A search or read that cannot mean anything is refused with what is wrong; filter values never become SQL."""


import pytest

from memlake.vectors import Filters, day_scope, quote
from tests.search.helpers import hash_memory


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
    ("kwargs", "message"),
    [
        ({"k": 0}, "k must be a whole number from 1 to 100, got 0"),
        ({"k": 101}, "k must be a whole number from 1 to 100, got 101"),
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
        ({"same_conversation_decay": 0}, "same_conversation_decay must be above 0 and at most 1"),
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
