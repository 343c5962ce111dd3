"""Which facts are shown: the `shown_confidence` threshold on development data, and the judged samples' shown share.

The offline distiller reads every conversation of a sample (a LoCoMo sample, a RealMem persona) and the facts
fold folds them as the pipeline does, each candidate with its reading prior (`memlake.distill.confidence`), so a
fact said in several conversations has the confidence it has in a home. Two measures over the current facts:

- **development** (`threshold_sweep`: LoCoMo 0-4): for each threshold, how many current facts are shown, the
  share of them matching a LoCoMo observation of their turn (`memlake_bench.facts.match_observations`: a
  precision proxy, the judged samples being held out), and the observations the shown facts still match (recall).
- **the judged samples** (`judged_shown`: measured once the threshold is chosen, never used to choose it): of
  the hand-judged facts, which are shown now, and the share of judged-right among all judged and among shown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import polars as pl

from memlake.distill.confidence import reading_prior, shown
from memlake.distill.models import Conversation, FactCandidate
from memlake.distill.offline import OFFLINE_DISTILLER_VERSION, distill_offline
from memlake.distill.offline.assistant_chat import is_assistant_chat
from memlake.embedding import TextEmbedder
from memlake.facts.fold import Candidate, fold
from memlake_bench.facts import Extracted, Observation, match_observations

THRESHOLDS = (0.0, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)


def fold_conversations(conversations: Iterable[Conversation],
                       distill: Callable[[Conversation], Any] = distill_offline) -> pl.DataFrame:
    """The current facts (status active) the fold makes of these conversations' offline facts."""
    candidates = []
    for conversation in conversations:
        assistant_chat = is_assistant_chat(conversation)
        said_at = {m.message_id: m.created_at for m in conversation.messages}
        for fact in distill(conversation).fact_candidates:
            candidates.append(candidate_of(conversation, fact, said_at, assistant_chat))
    facts = fold(candidates).facts
    return facts.filter(pl.col("status") == "active")


def candidate_of(conversation: Conversation, fact: FactCandidate, said_at: dict[str, Any],
                 assistant_chat: bool) -> Candidate:
    when = max((said_at[m] for m in fact.message_ids if m in said_at), default=conversation.messages[-1].created_at)
    return Candidate(
        agent_id=conversation.agent_id, type=fact.type, subject=fact.subject, content=fact.content, created_at=when,
        slot=fact.slot, value=fact.value, importance=fact.importance, tags=tuple(fact.tags),
        confidence=reading_prior(fact.confidence, distiller=OFFLINE_DISTILLER_VERSION, slot=fact.slot,
                                 subject=fact.subject, tags=fact.tags, assistant_chat=assistant_chat),
        conversation_id=conversation.conversation_id, message_ids=tuple(fact.message_ids))


def threshold_sweep(facts: pl.DataFrame, observations: Sequence[Observation], sample_of: dict[str, int],
                    embedder: TextEmbedder, thresholds: Sequence[float] = THRESHOLDS) -> list[dict[str, Any]]:
    """For each threshold: the shown current facts, the share matching an observation, the observations matched."""
    extracted = [Extracted(sample_of[r["agent_id"]], (r["source_conversation_ids"] or [""])[0],
                           FactCandidate(type=r["type"], subject=r["subject"], value=r["value"] or r["content"],
                                         content=r["content"], message_ids=list(r["source_message_ids"])))
                 for r in facts.iter_rows(named=True)]
    rows = []
    for threshold in thresholds:
        kept = facts.with_row_index("_at").filter(shown(threshold))["_at"].to_list()
        matched_observations, matched_facts = match_observations(observations, [extracted[i] for i in kept],
                                                                 embedder)
        rows.append({"threshold": threshold, "shown": len(kept), "matching_an_observation": len(matched_facts),
                     "shown_matched_share": round(len(matched_facts) / len(kept), 4) if kept else None,
                     "observations_matched": len(matched_observations),
                     "observation_recall": round(len(matched_observations) / len(observations), 4)
                     if observations else None})
    return rows


def judged_shown(judged: Sequence[dict[str, Any]], facts: pl.DataFrame, threshold: float) -> dict[str, Any]:
    """Of the judged facts (rows of a judged sample), those a current fact holds (the same content said in the
    same messages, or a fact they confirmed: its source messages hold them) and whether it is shown."""
    rows = [r for r in judged if r.get("correct") is not None]
    current = facts.with_columns(shown(threshold).alias("_shown"))
    by_content = {(r["agent_id"], r["content"]): r for r in current.iter_rows(named=True)}
    outcome = []
    for row in rows:
        fact = by_content.get((row["sample"], row["content"])) or next(
            (r for r in current.iter_rows(named=True) if r["agent_id"] == row["sample"]
             and set(row["message_ids"]) <= set(r["source_message_ids"] or ()) and r["type"] == row["type"]), None)
        outcome.append((row["correct"], fact is not None and fact["_shown"]))
    right = sum(1 for correct, _ in outcome if correct)
    shown_rows = [correct for correct, is_shown in outcome if is_shown]
    return {"judged": len(rows), "right": right, "precision_all": round(right / len(rows), 4) if rows else None,
            "shown": len(shown_rows), "shown_right": sum(shown_rows),
            "precision_shown": round(sum(shown_rows) / len(shown_rows), 4) if shown_rows else None}
