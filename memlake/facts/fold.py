"""The facts fold: fact candidates, user overrides and the forget log, in time order, into fact versions.

One pass over every input of every agent, sorted by (when it happened, kind,
content), so the same inputs always give the same tables whatever order they
came in. Each candidate meets the agent's active facts about the same subject
and the first rule that applies decides:

1. same subject and slot: the same value confirms the current version, another
   value supersedes it (the old row is kept: status superseded, valid_until
   set, superseded_by and an `update` edge), except that a guessed value (tag
   `inferred`) never replaces one the user said and is left out;
2. a duplicate (same polarity, no conflicting short values, and Jaccard >=
   `duplicate_jaccard`, or cosine >= `duplicate_cosine`, or Jaccard >=
   `contradict_jaccard` with cosine >= `near_duplicate_cosine`) confirms the
   old fact: confirmation_count, source_count, last_confirmed_at, sources;
   but an event that duplicates a commitment carries the plan out: it
   supersedes it in its chain (the plan valid until the event), and a
   statement of another type that duplicates a plan is a new fact;
3. an explicit change (type correction, or "instead of", "no longer",
   "switched", ... ) supersedes the closest fact it shares words with
   (Jaccard >= `contradict_jaccard`);
4. same type and subject with Jaccard >= `contradict_jaccard` (negation words
   left out when exactly one side is negated): a `contradict` edge, both stay
   active (`contradiction_policy` = supersede makes the newer supersede);
5. otherwise a new fact.

A statement that says a value it names ended ("I left Acme": an end cue and a
current slot value) is a new fact before rule 3. Then outcomes (`_settle`):
what a new version carried out or ended is closed as of the day it says it
happened (status superseded, valid_until, superseded_by and an `update` edge
whose reason says why), whatever its type: a slot's new value carries out
the subject's plans and open events naming it as their goal ("plans to move
to Montreal", "is interviewing at Initech"); a slot value replaced or ended
ends the subject's plans, states and open events naming it ("works with
Tomás at Acme"), and an ended value stays its slot's current version, with
valid_until; a plan that a statement of another type duplicates is carried
out by it (not confirmed). Plans and decisions carry nothing out.

Overrides always win: an active version that an override made or confirmed
is never superseded by an extraction; such an extraction is kept as a version
with status superseded (valid for no time) pointing at the override. A
correction replaces a fact retroactively (the old version gets valid_until =
its valid_from); a rejection sets the version's status to `rejected`, and the
same statement extracted again only confirms the rejected row. A correction
giving a multi-valued slot (sibling) another value keeps its chain under both
values (`slot_chains`); if another chain held the new value, that chain's
current version is superseded, so each value is current once. Forgetting a
fact removes its whole chain from the tables; forgetting an agent or a
conversation drops what was ingested from it before the forget. Applied on
top of written tables (a read merging the logs), a forget removes what the
run will remove and no more, so it may be applied again: a chain said anew
after it stays, and a conversation takes only the versions it alone
supported (the version one of them replaced is current again).

Ids come from content: a slotted chain is `hash(agent, subject, slot)`, a
slot-less one `hash(agent, subject, type, first content)`. Pure domain code.
"""


from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from memlake.distill.models import INFERRED
from memlake.facts.fold_forget import Forgetting
from memlake.facts.fold_inputs import (
    EXTRACTION,
    MULTI_VALUED_SLOTS,
    OVERRIDE,
    PLAN_TYPES,
    USER,
    Candidate,
    Event,
    FoldConfig,
    Forget,
    Override,
    chain_id,
    display_subject,
    slot_chains,
    slot_key,
    slot_of,
    subject_key,
)
from memlake.facts.fold_outcomes import Outcomes
from memlake.facts.fold_rows import Edge, Embed, FactVersion, FoldResult, FoldStats, _Obs
from memlake.facts.fold_words import TIME_WORDS, _jaccard_sets, has_change_cue, same_value_loosely, words_loosely_in
from memlake.facts.tastes import reverses
from memlake.lake import conform
from memlake.moments import as_utc_or_none
from memlake.schemas import FACT_EDGES, FACTS
from memlake.text import content_words

# What the fold's callers import from here (the pieces live in the fold_* modules beside it).
__all__ = [
    "EXTRACTION", "MULTI_VALUED_SLOTS", "OVERRIDE", "TIME_WORDS", "USER", "Candidate", "Edge", "Embed",
    "Event", "FactVersion", "FoldConfig", "FoldResult", "FoldStats", "Folder", "Forget", "Override", "chain_id",
    "display_subject", "fold", "has_change_cue", "same_value_loosely", "slot_chains", "slot_key", "slot_of",
    "subject_key", "words_loosely_in",
]


def _clamp01(value: float | None, default: float) -> float:
    if value is None or value != value:
        return default
    return min(1.0, max(0.0, float(value)))


class Folder(Forgetting, Outcomes):
    """Applies events in time order to the fact versions of every agent.

    `add(events)` continues the fold when every new event sorts after the
    last one applied, and folds everything again otherwise, so adding A then
    B always equals adding A and B together. `from_tables` resumes from
    written tables (reads use it to merge overrides not folded yet).
    """

    # ---------------------------------------------------------------- public

    def add(self, events: Iterable[Event]) -> Folder:
        new = sorted(events, key=lambda e: e.sort_key())
        if not new:
            return self
        forgets_sources = any(isinstance(e, Forget) and e.scope != "fact" for e in new)
        late = self.last_key is not None and not new[0].sort_key() > self.last_key
        if self.events and not self.resumed and (late or forgets_sources):
            everything = sorted([*self.events, *new], key=lambda e: e.sort_key())
            self._reset()
            new = everything
        self._prime([e.content for e in new if isinstance(e, Candidate)])
        for event in new:
            self._register_forget(event)
        for event in new:
            self.events.append(event)
            self.last_key = event.sort_key()
            if isinstance(event, Candidate):
                self._apply_candidate(event)
            elif isinstance(event, Override):
                self._apply_override(event)
            else:
                self._apply_forget(event)
        return self

    def result(self) -> FoldResult:
        return FoldResult(facts=self.facts_frame(), edges=self.edges_frame(), stats=self.stats)

    def versions(self) -> list[FactVersion]:
        return [v for chain in self.chains.values() for v in chain]

    @property
    def vectors(self) -> dict[str, np.ndarray]:
        """Content -> vector of every text the fold embedded (empty without an embedder)."""
        return self._vectors

    def facts_frame(self) -> pl.DataFrame:
        rows = sorted((v.row() for v in self.versions()), key=lambda r: (r["agent_id"], r["fact_id"], r["version"]))
        return _frame(conform(FACTS, pa.Table.from_pylist(rows, schema=FACTS.schema)) if rows else None, FACTS)

    def edges_frame(self) -> pl.DataFrame:
        rows = sorted(
            (e.row() for e in self.edges),
            key=lambda r: (r["agent_id"], r["edge_type"], r["from_fact_id"], r["from_version"], r["to_fact_id"],
                           r["to_version"]),
        )
        table = pa.Table.from_pylist(rows, schema=FACT_EDGES.schema) if rows else None
        return _frame(table, FACT_EDGES)

    @classmethod
    def from_tables(
        cls,
        facts: pl.DataFrame,
        edges: pl.DataFrame,
        config: FoldConfig | None = None,
        embed: Embed | None = None,
    ) -> Folder:
        """A folder holding written tables, ready to apply events that come after them."""
        folder = cls(config, embed)
        latest: datetime | None = None
        for r in facts.sort("agent_id", "fact_id", "version").iter_rows(named=True):
            fields: dict[str, Any] = {k: r.get(k) for k in FactVersion.__dataclass_fields__
                                      if k not in ("override_ids", "prior")}
            version = FactVersion(**fields, override_ids=list(r.get("override_ids") or []))
            version.tags = list(version.tags or [])
            version.source_conversation_ids = list(version.source_conversation_ids or [])
            version.source_message_ids = list(version.source_message_ids or [])
            folder.chains.setdefault(version.fact_id, []).append(version)
            folder.applied_overrides.update(version.override_ids)
            for t in (version.created_at, version.last_confirmed_at):
                if t is not None and (latest is None or t > latest):
                    latest = t
        for r in edges.iter_rows(named=True):
            folder.edges.append(Edge(**{k: r[k] for k in Edge.__dataclass_fields__}))
            if latest is None or r["created_at"] > latest:
                latest = r["created_at"]
        # every value a chain held names it; a value two chains held names the one whose version of it is active
        for version in sorted(folder.versions(), key=lambda v: (v.status == "active", v.agent_id, v.fact_id,
                                                                 v.version)):
            if version.slot:
                folder.slot_chain[slot_key(version.agent_id, version.subject, version.slot, version.value)] = (
                    version.fact_id)
        folder.resumed = True
        folder.resumed_at = latest
        folder._prime([v.content for v in folder.versions()])
        for version in folder.versions():
            folder._index_add(version)
        return folder

    # ---------------------------------------------------------------- candidates

    def _apply_candidate(self, c: Candidate) -> None:
        self.stats.candidates += 1
        if self._is_forgotten(c):
            self.stats.dropped_by_forget += 1
            return
        created_at = as_utc_or_none(c.created_at)
        assert created_at is not None
        valid_from = as_utc_or_none(c.valid_from) or created_at
        valid_until = as_utc_or_none(c.valid_until)
        if valid_until is not None and valid_until < valid_from:
            valid_until = valid_from
        obs = _Obs(
            agent_id=c.agent_id,
            type=c.type,
            subject=display_subject(c.subject),
            slot=c.slot or None,
            value=(c.value or "").strip() or None,
            content=" ".join(c.content.split()),
            confidence=_clamp01(c.confidence, 0.8),
            importance=_clamp01(c.importance, 0.5),
            tags=tuple(sorted({t for t in c.tags if t})),
            valid_from=valid_from,
            valid_until=valid_until,
            created_at=created_at,
            ingested_at=as_utc_or_none(c.ingested_at),
            conversation_id=c.conversation_id,
            message_ids=tuple(c.message_ids),
        )
        self._observe(obs)

    def _observe(self, obs: _Obs) -> None:
        made = self._place(obs)
        if made is not None and made.status == "active":
            self._settle(made)

    def _place(self, obs: _Obs) -> FactVersion | None:
        """Apply the first rule that fits; the version `obs` became (None when it confirmed a fact or an
        override blocked it)."""
        skey = subject_key(obs.subject)
        # Rule 1: same subject and slot.
        if obs.slot:
            fid = self.slot_chain.get(slot_key(obs.agent_id, obs.subject, obs.slot, obs.value))
            if fid is not None:
                chain = self.chains[fid]
                current = next((v for v in reversed(chain) if v.status == "active"), None)
                if current is None:
                    rejected = [v for v in chain if v.status == "rejected" and self._same_slot_value(v, obs)]
                    if rejected and not obs.is_override:
                        self._confirm(rejected[-1], obs)
                        return None
                    return self._new_version(fid, obs)
                if self._same_slot_value(current, obs):
                    self._confirm(current, obs)
                    self._start_said(chain, current, obs)
                    return None
                if current.held and not obs.is_override:
                    self._block(obs, current, chain_fid=fid)
                    return None
                if INFERRED in obs.tags and INFERRED not in current.tags:
                    return None  # a guess ("works in Leeds", so lives there) never replaces a value the user said
                if self._said_in_one_breath(current, obs):
                    # "We moved into the Leith flat, so I live in Edinburgh now": one message giving the slot two
                    # values tells no change between them (a district and its city; no gazetteer says which holds
                    # which). The slot keeps its value and the other is kept too, as a statement without the slot.
                    return self._new_chain(replace(obs, slot=None))
                return self._supersede(current, obs, chain_fid=fid, reason=f"{obs.slot}: new value")
        # A statement that ends something the subject holds is never a duplicate of it, however alike they read. "I
        # left Acme" is a fact of its own that ends the employer (the slot keeps its chain); "I've gone off oat milk"
        # is the next version of the state it ends, the closest by words (`_settle` closes any other it names).
        if self._ended_values(obs):
            return self._new_chain(obs)
        ended = self._ended_states(obs)
        if ended:
            words_said = self._content_words(obs.content)
            closest = max(ended, key=lambda v: (_jaccard_sets(words_said, self._content_words(v.content)), v.key))
            return self._replace(closest, obs, reason="ended")
        matches = self._matches(obs, skey, statuses=("active",))
        # Rule 2: duplicate. What the user tells memory (an override) confirms a fact only if it says nothing more:
        # "My sister Giulia moved to York" reads like "The user's sister is Giulia", but the move is news.
        # (the opposite taste of the same thing is never a duplicate: "disliked board games" beside "likes them now")
        duplicates = [m for m in matches if self._is_duplicate(m) and not reverses(obs, m.fact) and not (
            obs.is_override and not words_loosely_in(self._content_words(obs.content),
                                                     self._content_words(m.fact.content)))]
        if duplicates:
            best = max(duplicates, key=lambda m: (m.jaccard, m.cosine, m.fact.fact_id))
            if best.fact.type in PLAN_TYPES and obs.type not in PLAN_TYPES:
                if obs.type == "event" and not obs.slot:
                    # "I ran the half marathon yesterday" fulfils the plan to run it: the plan ends there, and the
                    # chain goes on as the event, rather than the event confirming a plan still to come
                    return self._replace(best.fact, obs, reason="plan carried out")
                # an outcome of another kind ("I live in Montreal" after the plan to move there) is a fact of its
                # own, which closes the plan (`_settle`)
                return self._new_chain(obs)
            self._confirm(best.fact, obs)
            if obs.slot and not best.fact.slot and slot_key(obs.agent_id, obs.subject, obs.slot, obs.value) not in (
                    self.slot_chain):
                best.fact.slot = obs.slot
                best.fact.value = best.fact.value or obs.value
                self.slot_chain[slot_key(obs.agent_id, obs.subject, obs.slot, best.fact.value)] = best.fact.fact_id
            return None
        # Rule 3: an explicit change supersedes the closest fact.
        related = [m for m in matches if m.jaccard >= self.config.contradict_jaccard]
        if related and (obs.type == "correction" or has_change_cue(obs.content)):
            best = max(related, key=lambda m: (m.jaccard, m.cosine, m.fact.fact_id))
            return self._replace(best.fact, obs, reason="correction" if obs.type == "correction" else "stated change")
        # A statement the user rejected before only confirms the rejected row.
        blocked = [m for m in self._matches(obs, skey, statuses=("rejected",)) if self._is_duplicate(m)]
        if blocked and not obs.is_override:
            self._confirm(max(blocked, key=lambda m: (m.jaccard, m.cosine, m.fact.fact_id)).fact, obs)
            return None
        # Rule 4: contradiction candidates.
        contradicted = [m for m in related if m.fact.type == obs.type]
        if contradicted:
            if self.config.contradiction_policy == "supersede":
                best = max(contradicted, key=lambda m: (m.jaccard, m.cosine, m.fact.fact_id))
                return self._replace(best.fact, obs, reason="contradiction (policy supersede)")
            new = self._new_chain(obs)
            for m in sorted(contradicted, key=lambda m: m.fact.key):
                self._edge("contradict", new, m.fact, obs.created_at, f"jaccard {m.jaccard:.2f}")
                self.stats.contradictions += 1
            return new
        # Rule 5: a new fact.
        return self._new_chain(obs)

    # ---------------------------------------------------------------- overrides

    def _apply_override(self, o: Override) -> None:
        self.stats.overrides += 1
        if self._is_forgotten(o):
            self.stats.dropped_by_forget += 1
            return
        written_at = as_utc_or_none(o.written_at)
        assert written_at is not None
        if o.action == "add":
            if not o.content:
                self.stats.unresolved_overrides.append(o.override_id)
                return
            self._observe(self._override_obs(o, written_at, None))
            return
        target = self._resolve(o)
        if target is None:
            self.stats.unresolved_overrides.append(o.override_id)
            return
        chain = self.chains[target]
        current = next((v for v in reversed(chain) if v.status == "active"), chain[-1])
        if o.action == "reject":
            if current.status == "active":
                current.status = "rejected"
                current.valid_until = current.valid_from
                self.stats.rejected += 1
            if o.override_id not in current.override_ids:
                current.override_ids.append(o.override_id)
            return
        if o.action == "correct":
            if not o.content:
                self.stats.unresolved_overrides.append(o.override_id)
                return
            obs = self._override_obs(o, written_at, current)
            new = self._new_version(target, obs)
            if current.status == "active":
                current.status = "superseded"
                current.superseded_by = new.fact_id
                self._close(current, new.valid_from)
            self._edge("update", new, current, written_at, "user correction")
            self.stats.superseded += 1
            return
        self.stats.unresolved_overrides.append(o.override_id)

    def _override_obs(self, o: Override, written_at: datetime, target: FactVersion | None) -> _Obs:
        valid_from = as_utc_or_none(o.valid_from) or (target.valid_from if target is not None else written_at)
        valid_until = as_utc_or_none(o.valid_until)
        if valid_until is not None and valid_until < valid_from:
            valid_until = valid_from
        content = " ".join((o.content or "").split())
        return _Obs(
            agent_id=o.agent_id,
            type=o.type or (target.type if target is not None else "fact"),
            subject=target.subject if target is not None else display_subject(o.subject or USER),
            slot=o.slot or (target.slot if target is not None else None),
            value=(o.value or "").strip() or None,
            content=content,
            confidence=_clamp01(o.confidence, 1.0),
            importance=_clamp01(o.importance, max(0.7, target.importance) if target is not None else 0.7),
            tags=tuple(sorted(set(o.tags))),
            valid_from=valid_from,
            valid_until=valid_until,
            created_at=written_at,
            ingested_at=written_at,
            conversation_id=None,
            message_ids=(),
            override_id=o.override_id,
        )

    def _resolve(self, o: Override) -> str | None:
        """The chain an override targets: by id, else by what the target looked like."""
        if o.fact_id and o.fact_id in self.chains and self.chains[o.fact_id][0].agent_id == o.agent_id:
            return o.fact_id
        if o.target_slot:
            fid = self.slot_chain.get((o.agent_id, subject_key(o.target_subject), o.target_slot))
            if fid is not None:
                return fid
        if o.target_content:
            skey = subject_key(o.target_subject)
            best: tuple[float, str] | None = None
            for fid, chain in self.chains.items():
                current = chain[-1]
                if current.agent_id != o.agent_id or subject_key(current.subject) != skey:
                    continue
                score = max(_jaccard_sets(content_words(v.content), content_words(o.target_content)) for v in chain)
                if score >= self.config.duplicate_jaccard and (best is None or (score, fid) > best):
                    best = (score, fid)
            if best is not None:
                return best[1]
        return None


def _frame(table: pa.Table | None, spec: Any) -> pl.DataFrame:
    table = table if table is not None else spec.schema.empty_table()
    frame = pl.from_arrow(conform(spec, table))
    assert isinstance(frame, pl.DataFrame)
    return frame


def fold(
    candidates: Iterable[Candidate],
    overrides: Iterable[Override] = (),
    forgets: Iterable[Forget] = (),
    config: FoldConfig | None = None,
    embed: Embed | None = None,
) -> FoldResult:
    """Fold every input, in time order, into `facts/facts` and `facts/fact_edges` frames."""
    return Folder(config, embed).add([*candidates, *overrides, *forgets]).result()
