"""The chains of fact versions the facts fold keeps, and the steps that change them: match a statement against
the subject's versions, start a chain, add a version, confirm, close, supersede, block (`memlake.facts.fold`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import numpy as np

from memlake.distill.confidence import fact_confidence
from memlake.distill.models import INFERRED
from memlake.facts.fold_inputs import Event, FoldConfig, chain_id, slot_key, slot_of, subject_key
from memlake.facts.fold_rows import Edge, Embed, FactVersion, FoldStats, _Match, _Obs, _SubjectIndex
from memlake.facts.fold_words import _is_atomic, _jaccard_sets, _value_words, same_value_loosely
from memlake.text import NEGATIONS, content_words, is_negated


class ChainBook:
    """The fold's state (every agent's chains, their slot keys, the edges, the index by subject) and the steps
    that change one version or chain; `Folder` decides which step a statement takes."""

    def __init__(self, config: FoldConfig | None = None, embed: Embed | None = None) -> None:
        self.config = config or FoldConfig()
        self.embed = embed
        self._vectors: dict[str, np.ndarray] = {}
        self._words: dict[str, frozenset[str]] = {}
        self._negated: dict[str, bool] = {}
        self.resumed = False  # built from tables: no inputs to fold again
        self.resumed_at: datetime | None = None
        self._reset()

    def _reset(self) -> None:
        self.chains: dict[str, list[FactVersion]] = {}
        self.slot_chain: dict[tuple[str, str, str], str] = {}
        self.edges: list[Edge] = []
        self.events: list[Event] = []
        self.last_key: tuple[Any, ...] | None = None
        self.stats = FoldStats()
        self.applied_overrides: set[str] = set()
        self._index: dict[tuple[str, str], _SubjectIndex] = {}
        self._forgotten_agents: dict[str, list[datetime]] = {}
        self._forgotten_conversations: dict[tuple[str, str], list[datetime]] = {}

    # ---------------------------------------------------------------- embeddings

    def _prime(self, texts: Sequence[str]) -> None:
        if self.embed is None:
            return
        missing = sorted({t for t in texts if t and t not in self._vectors})
        if missing:
            vectors = np.asarray(self.embed(missing), dtype=np.float32)
            for text, vector in zip(missing, vectors, strict=True):
                self._vectors[text] = vector

    def _vector(self, text: str) -> np.ndarray | None:
        if self.embed is None:
            return None
        self._prime([text])
        return self._vectors[text]

    def _cosine(self, a: str, b: str) -> float:
        va, vb = self._vector(a), self._vector(b)
        return 0.0 if va is None or vb is None else float(np.dot(va, vb))

    def _content_words(self, text: str) -> frozenset[str]:
        if text not in self._words:
            self._words[text] = frozenset(content_words(text))
        return self._words[text]

    def _is_negated(self, text: str) -> bool:
        if text not in self._negated:
            self._negated[text] = is_negated(text)
        return self._negated[text]

    def _index_add(self, version: FactVersion) -> None:
        key = (version.agent_id, subject_key(version.subject))
        vector = self._vector(version.content)
        if key not in self._index:
            self._index[key] = _SubjectIndex(None if vector is None else vector.shape[0])
        self._index[key].add(version, self._content_words(version.content), vector)

    # ---------------------------------------------------------------- matching

    def _obs_of(self, version: FactVersion) -> _Obs:
        return _Obs(
            agent_id=version.agent_id, type=version.type, subject=version.subject, slot=version.slot,
            value=version.value, content=version.content, confidence=version.confidence,
            importance=version.importance, tags=tuple(version.tags), valid_from=version.valid_from,
            valid_until=version.valid_until, created_at=version.created_at, ingested_at=version.ingested_at,
            conversation_id=None, message_ids=(),
        )

    def _matches(self, obs: _Obs, skey: str, statuses: tuple[str, ...]) -> list[_Match]:
        """The agent's versions about the same subject, in `statuses`, whose slot does not differ, that could
        match `obs`: sharing a content word, or with cosine >= duplicate_cosine (the others can be neither
        duplicates nor related)."""
        index = self._index.get((obs.agent_id, skey))
        if index is None:
            return []
        near = index.near(self._content_words(obs.content), self._vector(obs.content), self.config.duplicate_cosine)
        out = []
        for position, cosine in sorted(near.items()):
            v = index.versions[position]
            if v.status in statuses and not (obs.slot and v.slot and slot_of(v.slot, v.value) != slot_of(
                    obs.slot, obs.value)):
                out.append(self._match(obs, v, cosine))
        return out

    def _match(self, obs: _Obs, fact: FactVersion, cosine: float | None = None) -> _Match:
        negated_obs, negated_fact = self._is_negated(obs.content), self._is_negated(fact.content)
        same_polarity = negated_obs == negated_fact
        a, b = self._content_words(obs.content), self._content_words(fact.content)
        if not same_polarity:
            a, b = a - NEGATIONS, b - NEGATIONS
        conflict = (
            _is_atomic(obs.value) and _is_atomic(fact.value) and not same_value_loosely(obs.value, fact.value)
        )
        if cosine is None:
            cosine = self._cosine(obs.content, fact.content)
        return _Match(fact, _jaccard_sets(a, b), cosine, same_polarity, conflict)

    def _is_duplicate(self, m: _Match) -> bool:
        c = self.config
        if not m.same_polarity or m.values_conflict:
            return False
        return (
            m.jaccard >= c.duplicate_jaccard
            or m.cosine >= c.duplicate_cosine
            or (m.jaccard >= c.contradict_jaccard and m.cosine >= c.near_duplicate_cosine)
        )

    def _same_slot_value(self, fact: FactVersion, obs: _Obs) -> bool:
        if fact.value and obs.value:
            if obs.slot == "job_title" and _value_words(fact.value) < _value_words(obs.value):
                return False  # a title with more words is a new one ("pharmacist" -> "lead pharmacist"), not shorter
            return same_value_loosely(fact.value, obs.value)
        return self._is_duplicate(self._match(obs, fact))

    # ---------------------------------------------------------------- changes

    def _version_from(self, fid: str, version: int, obs: _Obs, status: str = "active") -> FactVersion:
        return FactVersion(
            fact_id=fid,
            version=version,
            agent_id=obs.agent_id,
            type=obs.type,
            subject=obs.subject,
            slot=obs.slot,
            value=obs.value,
            content=obs.content,
            confidence=fact_confidence(obs.confidence, 1),
            importance=obs.importance,
            tags=list(obs.tags),
            valid_from=obs.valid_from,
            valid_until=obs.valid_until,
            created_at=obs.created_at,
            ingested_at=obs.ingested_at,
            source_conversation_ids=[obs.conversation_id] if obs.conversation_id else [],
            source_message_ids=list(dict.fromkeys(obs.message_ids)),
            source_count=1,
            confirmation_count=0,
            last_confirmed_at=None,
            status=status,
            superseded_by=None,
            source_interface=obs.interface,
            override_ids=[obs.override_id] if obs.override_id else [],
            prior=obs.confidence,
        )

    def _new_chain(self, obs: _Obs, status: str = "active") -> FactVersion:
        if obs.slot and slot_key(obs.agent_id, obs.subject, obs.slot, obs.value) not in self.slot_chain:
            fid = chain_id(obs.agent_id, obs.subject, slot_of(obs.slot, obs.value), obs.type, obs.content)
            if fid in self.chains:  # a slotted chain that lost its slot key: start a fresh one
                fid = self._unique(fid)
            self.slot_chain[slot_key(obs.agent_id, obs.subject, obs.slot, obs.value)] = fid
        else:
            fid = self._unique(chain_id(obs.agent_id, obs.subject, None, obs.type, obs.content))
        version = self._version_from(fid, 1, obs, status)
        self.chains[fid] = [version]
        self._index_add(version)
        self.stats.created += 1
        return version

    def _unique(self, fid: str) -> str:
        if fid not in self.chains:
            return fid
        n = 2
        while f"{fid}-{n}" in self.chains:
            n += 1
        return f"{fid}-{n}"

    def _new_version(self, fid: str, obs: _Obs, status: str = "active") -> FactVersion:
        chain = self.chains[fid]
        version = self._version_from(fid, chain[-1].version + 1, obs, status)
        chain.append(version)
        self._index_add(version)
        self.stats.created += 1
        self._keep_under_value(version)
        return version

    def _keep_under_value(self, version: FactVersion) -> None:
        """Keep `version`'s chain under the slot key of its value too (see `slot_chains`).

        Only a new value of a multi-valued slot (a replaced sibling) makes a new key. A later mention of that value
        then confirms this chain rather than starting a second one; and when another chain holds the value, this
        active version supersedes that chain's, so the value stays current once."""
        if not version.slot:
            return
        key = slot_key(version.agent_id, version.subject, version.slot, version.value)
        holder = self.slot_chain.get(key)
        if holder is not None and version.status != "active":
            return  # a version kept for history only (blocked by an override) takes no value from a chain
        self.slot_chain[key] = version.fact_id
        if holder is None or holder == version.fact_id:
            return
        other = next((v for v in reversed(self.chains.get(holder, [])) if v.status == "active"), None)
        if other is not None:
            other.status = "superseded"
            other.superseded_by = version.fact_id
            self._close(other, version.valid_from)
            self._edge("update", version, other, version.created_at, f"{version.slot}: the same value, replaced")
            self.stats.superseded += 1

    def _close(self, old: FactVersion, until: datetime) -> None:
        end = max(old.valid_from, until)
        old.valid_until = end if old.valid_until is None else max(old.valid_from, min(old.valid_until, end))

    def _supersede(self, old: FactVersion, obs: _Obs, chain_fid: str, reason: str) -> FactVersion:
        new = self._new_version(chain_fid, obs)
        old.status = "superseded"
        old.superseded_by = new.fact_id
        self._close(old, new.valid_from)
        self._edge("update", new, old, obs.created_at, reason)
        self.stats.superseded += 1
        return new

    def _replace(self, old: FactVersion, obs: _Obs, reason: str) -> FactVersion | None:
        """Supersede `old` (found by words, not by slot) by `obs` in old's chain, unless an override holds it."""
        if old.held and not obs.is_override:
            self._block(obs, old, chain_fid=None)
            return None
        return self._supersede(old, replace(obs, slot=old.slot or obs.slot), chain_fid=old.fact_id, reason=reason)

    def _block(self, obs: _Obs, holder: FactVersion, chain_fid: str | None) -> None:
        """An extraction that would replace an override: kept for history, valid for no time."""
        blocked = replace(obs, valid_until=obs.valid_from)
        if chain_fid is not None:
            row = self._new_version(chain_fid, blocked, status="superseded")
        else:
            row = self._new_chain(replace(blocked, slot=None), status="superseded")
        row.superseded_by = holder.fact_id
        self._edge("update", holder, row, obs.created_at, "user override wins over extraction")
        self.stats.blocked_by_override += 1

    @staticmethod
    def _start_said(chain: list[FactVersion], current: FactVersion, obs: _Obs) -> None:
        """A statement of the current value that says when it began ("He's been there since June") dates the version
        from then, and the version it replaced until then: a start said beats the day the value was first told
        ("He's taken a job at Morriston Hospital" in May). Not before the replaced version began, never an
        override's."""
        start = obs.valid_from
        if obs.is_override or current.held or start.date() >= obs.created_at.date() or start == current.valid_from:
            return
        before = chain[chain.index(current) - 1] if chain.index(current) > 0 else None
        if before is not None and (before.valid_until != current.valid_from or start <= before.valid_from):
            return
        current.valid_from = start
        if before is not None:
            before.valid_until = start

    def _confirm(self, fact: FactVersion, obs: _Obs) -> None:
        if obs.is_override:
            if obs.override_id not in fact.override_ids:
                fact.override_ids.append(obs.override_id)  # type: ignore[arg-type]
        elif obs.message_ids and set(obs.message_ids) <= set(fact.source_message_ids) and (
            obs.conversation_id is None or obs.conversation_id in fact.source_conversation_ids
        ):
            return  # the same statement again (a re-ingested export): nothing new
        fact.confirmation_count += 1
        fact.source_count += 1
        fact.last_confirmed_at = obs.created_at if fact.last_confirmed_at is None else max(
            fact.last_confirmed_at, obs.created_at
        )
        if obs.conversation_id and obs.conversation_id not in fact.source_conversation_ids:
            fact.source_conversation_ids.append(obs.conversation_id)
        for message_id in obs.message_ids:
            if message_id not in fact.source_message_ids:
                fact.source_message_ids.append(message_id)
        fact.prior = max(fact.confidence if fact.prior is None else fact.prior, obs.confidence)
        fact.confidence = fact_confidence(fact.prior, len(fact.source_conversation_ids))
        fact.importance = max(fact.importance, obs.importance)
        said = INFERRED not in fact.tags or INFERRED not in obs.tags  # a value said once is said, guessed again or not
        fact.tags = sorted((set(fact.tags) | set(obs.tags)) - ({INFERRED} if said else set()))
        self.stats.confirmed += 1

    def _edge(self, edge_type: str, new: FactVersion, old: FactVersion, at: datetime, reason: str) -> None:
        self.edges.append(
            Edge(new.agent_id, edge_type, new.fact_id, new.version, old.fact_id, old.version, at, reason)
        )
