"""For a question about now, a turn that says only what has since changed gives way to the turn that says what
replaced it.

Facts link turns across time: a fact version cites the messages that said it, and a version a later one replaced
names it (`superseded_by`). A turn whose messages said only versions no longer in force (the old home, the diet
before the change) is stale for a question in the present tense (`memlake.nlp.asks_about_now`); the turns that
said the versions in force (the move, the new diet) answer it, even when they share no word with it ("we got the
keys to the flat in Bristol" for "where do I live?"). So in such a search each stale hit passes its score to the
turns that said what replaced it (they join the candidates if no list found them) and keeps `superseded_weight`
of its own: it stays in the list, below what replaced it. A question about the past ("where did I live?") or
about the future is searched as it is. No fact superseded, no parse: most searches never pay for one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import polars as pl

from memlake.search.fusion import Candidate, Fused, light_candidate
from memlake.search.params import turn_key

# chains are short (a home moved twice); a cycle a fold never writes must not loop forever
_MOST_HOPS = 8


@dataclass(frozen=True)
class Turn:
    """A turn that said a fact version, as a light candidate needs it."""

    conversation_id: str
    index: int
    created_at: datetime | None


@dataclass(frozen=True)
class Replaced:
    """One agent's stale turns (by turn key) for a question about now, each with the turns that said what replaced
    what it said."""

    by: Mapping[str, tuple[Turn, ...]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.by)


TurnsOf = Callable[[list[str]], pl.DataFrame]  # message ids -> their turns: message_id, conversation_id, ...


def replaced_turns(agent_id: str, question: str, history: pl.DataFrame, in_force_of: Callable[[], pl.DataFrame],
                   turns_of: TurnsOf) -> Replaced | None:
    """The stale turns of a search for `question`, or None when it does not ask about now or nothing was replaced.

    `history`: every version of the agent's facts said by the search's moment; `in_force_of()`: those true then
    (read only when a version was replaced); `turns_of`: the turns (message_id, conversation_id, turn_index,
    created_at) of the given message ids."""
    replaced = history.filter(pl.col("superseded_by").is_not_null()) if history.height else history
    if replaced.height == 0:
        return None
    in_force = in_force_of()
    current = set(in_force.select("fact_id", "version").rows()) if in_force.height else set()
    stale = [row for row in replaced.iter_rows(named=True) if (row["fact_id"], row["version"]) not in current]
    if not stale or not _about_now(question):
        return None
    current_sources = {m for ids in in_force["source_message_ids"].to_list() for m in ids or ()}
    next_ids = {row["fact_id"]: row["superseded_by"] for row in replaced.iter_rows(named=True)}
    said_by = {row["fact_id"]: list(row["source_message_ids"] or ()) for row in in_force.iter_rows(named=True)}
    successors: dict[str, set[str]] = {}  # a stale message -> the messages that said what replaced it
    for row in stale:
        now = _in_force_successor(row["superseded_by"], next_ids, said_by)
        for message in set(row["source_message_ids"] or ()) - current_sources:
            successors.setdefault(message, set()).update(said_by.get(now, ()) if now is not None else ())
    turns = {row["message_id"]: Turn(row["conversation_id"], int(row["turn_index"]), row["created_at"])
             for row in turns_of(sorted({*successors, *(m for ms in successors.values() for m in ms)}))
             .iter_rows(named=True)}
    by = {turn_key(agent_id, turns[m].conversation_id, turns[m].index):
          tuple(turns[n] for n in sorted(successors[m]) if n in turns) for m in successors if m in turns}
    return Replaced(by) if by else None


def _about_now(question: str) -> bool:
    """`memlake.nlp.asks_about_now`, or False when the language model is not installed (searched as asked)."""
    from memlake.nlp import LanguageModelMissing, asks_about_now  # deferred: spaCy loads in seconds

    try:
        return asks_about_now(question)
    except LanguageModelMissing:
        return False


def _in_force_successor(fact_id: str | None, next_ids: Mapping[str, str], said_by: Mapping[str, Any]) -> str | None:
    """The fact in force that a replaced one's chain of `superseded_by` ends at, or None when it ends elsewhere."""
    for _ in range(_MOST_HOPS):
        if fact_id is None or fact_id in said_by:
            return fact_id
        fact_id = next_ids.get(fact_id)
    return None


def give_way(agent_id: str, fused: Fused, replaced: Replaced, weight: float) -> None:
    """Each stale candidate's score (fused and lifted) passed to the turns that said what replaced it, then its own
    multiplied by `weight` (`Candidate.standing`): first every pass, so a chain's scores are those before."""
    candidates = fused.candidates
    scores = {key: candidates[key].rrf + candidates[key].lift for key in replaced.by if key in candidates}
    for key, score in scores.items():
        for turn in replaced.by[key]:
            successor = turn_key(agent_id, turn.conversation_id, turn.index)
            if successor in scores:
                continue  # stale too: it gives way in its turn
            cand: Candidate = candidates.setdefault(
                successor, light_candidate(turn.conversation_id, turn.index, turn.created_at))
            cand.lift = max(cand.lift, score - cand.rrf)
    for key in scores:
        candidates[key].standing = weight
