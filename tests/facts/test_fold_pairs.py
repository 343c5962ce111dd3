"""The fold on phrasing pairs: each pair's expected outcome was written before the fold was tuned.

`tests/data/fold_pairs.csv` holds at least 30 pairs of statements, what the
user said and the candidate a distiller makes of it, with the outcome the
second statement must have on the first: supersede, duplicate, contradict or
independent. The fold runs with the real default embedding model (the
cosine rules need it).
"""

from __future__ import annotations

import csv
from collections import Counter
from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from memlake.facts.fold import Candidate, FoldConfig, FoldResult, fold
from tests.conftest import TESTS

PAIRS = list(csv.DictReader((TESTS / "data" / "fold_pairs.csv").read_text("utf-8").splitlines()))
OUTCOMES = ("supersede", "duplicate", "contradict", "independent")
T0 = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


def candidate(pair: dict[str, str], side: str, at: datetime) -> Candidate:
    def field(name: str) -> str | None:
        return pair[f"{name}_{side}"] or None

    return Candidate(
        agent_id="pairs",
        type=field("type") or "fact",
        subject=field("subject") or "user",
        slot=field("slot"),
        value=field("value"),
        content=field("content") or "",
        created_at=at,
        conversation_id=f"{pair['pair_id']}-{side}",
        message_ids=(f"{pair['pair_id']}-{side}-1",),
    )


def outcome(result: FoldResult) -> str:
    """What the second statement did to the first, read off the tables."""
    facts, edges = result.facts, result.edges
    if facts.height == 1:
        row = facts.row(0, named=True)
        assert row["confirmation_count"] == 1 and row["status"] == "active"
        return "duplicate"
    assert facts.height == 2, facts
    first = facts.filter(pl.col("source_message_ids").list.first().str.ends_with("-a-1")).row(0, named=True)
    second = facts.filter(pl.col("source_message_ids").list.first().str.ends_with("-b-1")).row(0, named=True)
    assert second["status"] == "active"
    if first["status"] == "superseded":
        assert first["superseded_by"] == second["fact_id"]
        assert first["valid_until"] is not None
        assert edges.filter(pl.col("edge_type") == "update").height == 1
        return "supersede"
    assert first["status"] == "active"
    if edges.filter(pl.col("edge_type") == "contradict").height:
        return "contradict"
    assert edges.height == 0
    return "independent"


@pytest.fixture(scope="module")
def embed():
    from memlake.embedding import SentenceEmbedder

    return SentenceEmbedder().embed


def test_the_table_is_big_and_covers_every_outcome() -> None:
    assert len(PAIRS) >= 30
    assert len({p["pair_id"] for p in PAIRS}) == len(PAIRS)
    counts = Counter(p["expected"] for p in PAIRS)
    assert set(counts) == set(OUTCOMES), counts
    issue_examples = {(p["said_a"], p["said_b"]): p["expected"] for p in PAIRS}
    assert issue_examples[("I live in Berlin.", "I moved to Paris.")] == "supersede"
    assert issue_examples[("I like coffee.", "I like tea.")] == "independent"
    assert issue_examples[("I work at Acme.", "I'm employed by Acme.")] == "duplicate"


@pytest.mark.model
@pytest.mark.parametrize("pair", PAIRS, ids=[p["pair_id"] for p in PAIRS])
def test_the_fold_gets_the_pair_right(pair: dict[str, str], embed) -> None:
    result = fold(
        [candidate(pair, "a", T0), candidate(pair, "b", T0 + timedelta(days=3))],
        config=FoldConfig(),
        embed=embed,
    )
    assert outcome(result) == pair["expected"], (pair["said_a"], pair["said_b"])


@pytest.mark.model
def test_all_pairs_in_one_fold_per_agent_agree(embed) -> None:
    """Folding every pair at once (one agent per pair) gives each pair the same outcome."""
    candidates = []
    for i, pair in enumerate(PAIRS):
        a = candidate(pair, "a", T0 + timedelta(hours=i))
        b = candidate(pair, "b", T0 + timedelta(days=3, hours=i))
        candidates += [
            Candidate(**{**a.__dict__, "agent_id": pair["pair_id"]}),
            Candidate(**{**b.__dict__, "agent_id": pair["pair_id"]}),
        ]
    result = fold(candidates, embed=embed)
    for pair in PAIRS:
        one = FoldResult(
            facts=result.facts.filter(pl.col("agent_id") == pair["pair_id"]),
            edges=result.edges.filter(pl.col("agent_id") == pair["pair_id"]),
            stats=result.stats,
        )
        assert outcome(one) == pair["expected"], pair["pair_id"]
