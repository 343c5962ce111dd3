"""Forgetting in the facts fold: an agent, a conversation or a fact chain, as if never said (`memlake.facts.fold`)."""

from __future__ import annotations

from memlake.facts.fold_chains import ChainBook
from memlake.facts.fold_inputs import Candidate, Event, Forget, Override, slot_key
from memlake.moments import as_utc_or_none


class Forgetting(ChainBook):
    """Applies the forget log: what was said before a forget of its agent or conversation is left out, and a
    forgotten chain goes whole."""

    # ---------------------------------------------------------------- forget

    def _register_forget(self, event: Event) -> None:
        if not isinstance(event, Forget):
            return
        at = as_utc_or_none(event.written_at)
        assert at is not None
        if event.scope == "agent":
            self._forgotten_agents.setdefault(event.agent_id, []).append(at)
        elif event.scope == "conversation" and event.target:
            self._forgotten_conversations.setdefault((event.agent_id, event.target), []).append(at)

    def _is_forgotten(self, event: Candidate | Override) -> bool:
        if isinstance(event, Candidate):
            seen = as_utc_or_none(event.ingested_at or event.created_at)
            times = list(self._forgotten_agents.get(event.agent_id, []))
            if event.conversation_id:
                times += self._forgotten_conversations.get((event.agent_id, event.conversation_id), [])
        else:
            seen = as_utc_or_none(event.written_at)
            times = self._forgotten_agents.get(event.agent_id, [])
        return seen is not None and any(seen <= t for t in times)

    def _apply_forget(self, event: Forget) -> None:
        self.stats.forgets += 1
        at = as_utc_or_none(event.written_at)
        assert at is not None
        if event.scope == "fact" and event.target:
            chain = self.chains.get(event.target)
            # Resumed from tables, a chain first said after the forget was said again after it (a run already
            # dropped the forgotten one): applying the forget again must leave it, so reads can re-apply forgets.
            if chain is not None and not (self.resumed and chain[0].created_at > at):
                self._drop_chains({event.target}, event.agent_id)
        elif not self.resumed:
            return  # a fold over the inputs never let the forgotten agent's or conversation's statements in
        elif event.scope == "agent":
            self._drop_chains(
                {
                    fid for fid, c in self.chains.items()
                    if c[0].agent_id == event.agent_id and (c[0].ingested_at is None or c[0].ingested_at <= at)
                },
                event.agent_id,
            )
        elif event.scope == "conversation" and event.target:
            doomed: dict[str, set[int]] = {}
            for fid, chain in self.chains.items():
                if chain[0].agent_id != event.agent_id:
                    continue
                for v in chain:
                    # a version first ingested after the forget came from the conversation sent again later
                    if event.target in v.source_conversation_ids and (v.ingested_at is None or v.ingested_at <= at):
                        v.source_conversation_ids = [c for c in v.source_conversation_ids if c != event.target]
                        if not v.source_conversation_ids and not v.held:
                            doomed.setdefault(fid, set()).add(v.version)
            self._drop_versions(doomed, event.agent_id)

    def _drop_versions(self, doomed: dict[str, set[int]], agent_id: str) -> None:
        """Remove the versions whose only source was forgotten, as if never said: a chain left empty goes; when
        the current version goes, the version it replaced is current again (the other versions stay)."""
        emptied = set()
        gone: set[tuple[str, int]] = set()
        for fid, versions in doomed.items():
            chain = self.chains[fid]
            kept = [v for v in chain if v.version not in versions]
            if not kept:
                emptied.add(fid)
                continue
            gone |= {(fid, n) for n in versions}
            self.chains[fid] = kept
            replaced_by_gone = {
                (e.to_fact_id, e.to_version) for e in self.edges
                if e.edge_type == "update" and (e.from_fact_id, e.from_version) in gone
            }
            newest = kept[-1]
            if not any(v.status == "active" for v in kept) and (fid, newest.version) in replaced_by_gone:
                newest.status, newest.superseded_by, newest.valid_until = "active", None, None
        if gone:
            self.stats.dropped_by_forget += len(gone)
            self.edges = [e for e in self.edges
                          if (e.from_fact_id, e.from_version) not in gone and (e.to_fact_id, e.to_version) not in gone]
            self._index = {key: index for key, index in self._index.items() if key[0] != agent_id}
            for chain in self.chains.values():
                if chain[0].agent_id == agent_id:
                    for version in chain:
                        self._index_add(version)
        self._drop_chains(emptied, agent_id)

    def _drop_chains(self, fact_ids: set[str], agent_id: str) -> None:
        fact_ids = {f for f in fact_ids if f in self.chains and self.chains[f][0].agent_id == agent_id}
        if not fact_ids:
            return
        for fid in fact_ids:
            chain = self.chains.pop(fid)
            for v in chain:
                if v.slot:
                    key = slot_key(agent_id, v.subject, v.slot, v.value)
                    if self.slot_chain.get(key) == fid:
                        del self.slot_chain[key]
        self.stats.forgotten_chains += len(fact_ids)
        self._index = {key: index for key, index in self._index.items() if key[0] != agent_id}
        for chain in self.chains.values():
            if chain[0].agent_id == agent_id:
                for version in chain:
                    self._index_add(version)
        self.edges = [e for e in self.edges if e.from_fact_id not in fact_ids and e.to_fact_id not in fact_ids]
        for chain in self.chains.values():
            for v in chain:
                if v.superseded_by in fact_ids:
                    v.superseded_by = None
