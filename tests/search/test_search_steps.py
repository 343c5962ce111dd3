"""The steps of a search on their own: plan, RRF terms of one list, a turn's lifts from its context."""

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlake.search.fusion import Candidate, Fused, add_context_lifts, rrf_terms
from memlake.search.params import CHUNK_SPEC, FACT_SPEC, SearchParams, turn_key
from memlake.search.plan import plan_search
from memlake.search.rerank import Mentions, Scoring, shortlist
from memlake.vectors import Filters


def test_the_plan_asks_each_list_for_at_least_k_rows_and_for_the_kinds_that_count():
    plan = plan_search(CHUNK_SPEC, "oolong tea", "alice", SearchParams(k=40, candidates=10, window_weight=0.5),
                       Filters(), "2024-03-01")
    assert plan.params.candidates == 40
    assert plan.group.kinds == ("turn", "sentence", "passage", "question", "window")
    assert plan.limit == 40 * 3  # turns, their parts, windows: a count each
    assert plan.when.isoformat() == "2024-03-01T23:59:59.999999+00:00"  # a day means its end


def test_a_query_naming_an_identifier_plans_no_context_lifts():
    lifted = SearchParams(session_weight=0.3, window_weight=0.5, neighbor_weight=0.2)
    plan = plan_search(CHUNK_SPEC, "where is ORD-58213", "alice", lifted, Filters(), None)
    assert (plan.params.session_weight, plan.params.window_weight, plan.params.neighbor_weight) == (0, 0, 0)
    assert plan.context == ()
    words = plan_search(CHUNK_SPEC, "where is the order", "alice", lifted, Filters(), None)
    assert words.context == ("window", "session")


def test_the_plan_refuses_a_role_filter_where_rows_have_no_role():
    with pytest.raises(ValueError, match="role filter applies to turns"):
        plan_search(FACT_SPEC, "tea", "alice", SearchParams(), Filters(roles=("user",)), None)


def test_rrf_terms_are_scaled_by_the_score_relative_to_the_best_and_cut_at_the_candidates():
    hits = [{"kind": "turn", "_score": 4.0}, {"kind": "turn", "_score": 1.0}, {"kind": "turn", "_score": 0.5}]
    terms = list(rrf_terms(hits, "text", SearchParams(candidates=2, rrf_k=10)))
    assert [(rank, value) for _, _, rank, value in terms] == [(1, pytest.approx(1 / 11)), (2, pytest.approx(0.25 / 12))]
    plain = list(rrf_terms([{"kind": "turn", "_score": 1.0}], "text", SearchParams(text_score_power=0.0)))
    assert plain[0][3] == pytest.approx(1 / 61)


def test_a_turn_gets_its_window_view_and_passes_a_share_to_its_neighbours():
    fused = Fused()
    hit = turn_key("alice", "c1", 5)
    fused.candidates[hit] = Candidate(row={"conversation_id": "c1", "turn_start": 5, "turn_end": 5}, rrf=0.1)
    fused.window_scores[("c1", 4, 6)] = 0.4
    add_context_lifts("alice", SearchParams(window_weight=0.5, neighbor_weight=0.25), fused)
    # the window view (0.5 x 0.4) beats the turn's own 0.1; each neighbour gets a quarter of the best beside it
    assert fused.candidates[hit].lift == pytest.approx(0.2 - 0.1 + 0.25 * 0.2)
    before = fused.candidates[turn_key("alice", "c1", 4)]
    assert before.row["turn_start"] == 4 and before.lift == pytest.approx(0.2 + 0.25 * 0.2)
    assert turn_key("alice", "c1", 7) in fused.candidates  # reached only as turn 6's neighbour


@settings(max_examples=300, deadline=None)
@given(
    # fused scores spread over orders of magnitude, as a search's are (a few hits, many weak neighbours)
    scores=st.lists(st.tuples(st.integers(0, 12).map(lambda n: 0.5**n), st.floats(0, 0.01),
                              st.none() | st.floats(-0.5, 2), st.sampled_from(["Caroline", "Melanie", None]),
                              st.integers(0, 400), st.integers(0, 3)),
                    min_size=1, max_size=60),
    keep=st.integers(1, 30),
    weights=st.tuples(st.floats(0, 0.5), st.floats(0, 0.5), st.floats(0, 0.5), st.floats(0, 0.5)),
)
def test_the_shortlist_is_the_best_by_boosted_score_whatever_it_leaves_unboosted(scores, keep, weights):
    """The shortlist boosts only candidates that could reach the best `keep` (a boost is at least 1 and at most the
    weights' ceiling); it keeps exactly what boosting every candidate and sorting would, in the same order."""
    params = replace(SearchParams(), recency_weight=weights[0], importance_weight=weights[1],
                     access_weight=weights[2], mention_weight=weights[3])
    when = datetime(2024, 1, 1, tzinfo=UTC)
    candidates = {
        f"k{i}": Candidate(row={"created_at": when - timedelta(days=days), "importance": importance,
                                "speaker": speaker, "role": "user", "kind": "turn"}, rrf=rrf, lift=lift)
        for i, (rrf, lift, importance, speaker, days, _) in enumerate(scores)
    }
    access = {f"k{i}": used for i, (*_, used) in enumerate(scores)}
    scoring = Scoring(CHUNK_SPEC, Mentions.of(CHUNK_SPEC, "what did Caroline say?", []), params, when, access)
    most = scoring.most_accessed(candidates)
    every = sorted(candidates, key=lambda k: -(candidates[k].rrf + candidates[k].lift)
                   * scoring.boost(k, candidates[k].row, most)[0])[:keep]
    assert shortlist(candidates, scoring, keep) == every
