"""Outcomes in the facts fold: what a new version carried out or ended is closed as of the day it says it
happened (`memlake.facts.fold`'s docstring says which)."""

from __future__ import annotations

from memlake.facts.fold_chains import ChainBook
from memlake.facts.fold_inputs import ENDABLE_TYPES, EXTRACTION, GOAL_TYPES, PLAN_TYPES, STATE_TYPES, subject_key
from memlake.facts.fold_rows import FactVersion, _Obs
from memlake.facts.fold_words import (
    _END_CUE,
    _STATE_END_CUE,
    _ended_object,
    _is_atomic,
    _names,
    _names_goal,
    _value_words,
    has_change_cue,
    same_value_loosely,
    words_loosely_in,
)
from memlake.facts.tastes import left_out_by_diet, reverses


class Outcomes(ChainBook):
    """Closes what a new version carried out or ended (`_settle`)."""

    # ---------------------------------------------------------------- outcomes

    def _settle(self, made: FactVersion) -> None:
        """Close what the statement `made` carried out or ended, as of the day it says it happened.

        A value that became current (a slot's new value) carries out the subject's open plans and states that
        name it as their goal ("plans to move to Montreal", "is interviewing at Initech"); a value that ended
        (replaced, or left: `_ended_values`) ends the subject's states that name it ("works with Tomás at
        Acme"); and a plan that `made` reads like (a duplicate, rule 2) is carried out by it."""
        if made.type in PLAN_TYPES:
            return  # a plan or a decision carries nothing out
        if made.slot and made.value:
            for item in self._open_items(made, GOAL_TYPES, made.value, as_goal=True):
                self._close_item(item, made, f"plan carried out: {made.slot} {made.value}")
        for old in self._replaced_in_slot(made):
            for item in self._open_items(made, STATE_TYPES, old.value):
                self._close_item(item, made, f"ended: {old.slot} {old.value} -> {made.value}")
        for version in self._ended_values(made):
            if version.held and not made.held:
                continue  # an override's value is never ended by an extraction
            self._close(version, made.valid_from)  # still the slot's current version (one per chain), ended
            self._edge("update", made, version, made.created_at, f"ended: {version.slot} {version.value}")
            self.stats.closed += 1
            for item in self._open_items(made, STATE_TYPES, version.value):
                self._close_item(item, made, f"ended: {version.slot} {version.value}")
        for state in self._ended_states(made):
            self._close_item(state, made, f"ended: {' '.join(sorted(_ended_object(made.content)))}")
        for state, reason in self._ended_by_taste_or_diet(made):
            self._close_item(state, made, reason)
        for m in self._matches(self._obs_of(made), subject_key(made.subject), statuses=("active",)):
            if m.fact.type == "commitment" and m.fact.created_at < made.created_at and self._is_duplicate(m):
                self._close_item(m.fact, made, "plan carried out")

    def _open_items(
        self, made: FactVersion, types: tuple[str, ...], value: str | None, as_goal: bool = False
    ) -> list[FactVersion]:
        """The subject's active versions of `types` said before `made`, without a slot, still open, that name
        `value` (`as_goal`: as where they go). An event is open when it was happening or coming when said: one
        told after it happened is done, and no later statement ends it."""
        names = _names_goal if as_goal else _names
        index = self._index.get((made.agent_id, subject_key(made.subject)))
        found = []
        for v in index.versions if index is not None else ():
            if v.status != "active" or v.slot or v.fact_id == made.fact_id or v.created_at >= made.created_at:
                continue
            if v.type not in types or (v.type == "event" and v.valid_from.date() < v.created_at.date()):
                continue
            if names(v.content, value):
                found.append(v)
        return sorted(found, key=lambda v: v.key)

    def _close_item(self, item: FactVersion, by: FactVersion, reason: str) -> None:
        """`by` carried out or ended `item`: it holds until the day `by` says, and `by` replaces it."""
        if item.status != "active" or (item.held and not by.held):
            return  # an override's fact is never replaced by an extraction
        item.status = "superseded"
        item.superseded_by = by.fact_id
        self._close(item, by.valid_from)
        self._edge("update", by, item, by.created_at, reason)
        self.stats.closed += 1

    def _replaced_in_slot(self, made: FactVersion) -> list[FactVersion]:
        """The slot value `made` replaced in its chain (the version before it, with another value)."""
        if not made.slot or made.version == 1:
            return []
        before = self.chains[made.fact_id][-2] if self.chains[made.fact_id][-1] is made else None
        if before is None or not before.value or same_value_loosely(before.value, made.value):
            return []
        return [before]

    def _ended_values(self, said: _Obs | FactVersion) -> list[FactVersion]:
        """The subject's current slot values a statement without a slot says ended ("left Acme" ends employer
        Acme): it has an end cue and names the value."""
        if said.slot or said.type in PLAN_TYPES or not _END_CUE.search(said.content):
            return []
        index = self._index.get((said.agent_id, subject_key(said.subject)))
        return sorted(
            (v for v in (index.versions if index is not None else ())
             if v.status == "active" and v.slot and v.value and _is_atomic(v.value) and v.valid_until is None
             and v.created_at <= said.created_at and _names(said.content, v.value)),
            key=lambda v: v.key,
        )

    @staticmethod
    def _said_in_one_breath(current: FactVersion, obs: _Obs) -> bool:
        """Whether `obs` gives `current`'s slot another value in the same message, with no word of a change or an
        end in either ("I used to live in Berlin, now I live in Lisbon" is a change)."""
        return (not obs.is_override and current.source_interface == EXTRACTION and current.created_at == obs.created_at
                and bool(set(current.source_message_ids) & set(obs.message_ids))
                and current.valid_until is None and obs.valid_until is None
                and not any(has_change_cue(text) or _END_CUE.search(text) for text in (current.content, obs.content)))

    def _ended_states(self, said: _Obs | FactVersion) -> list[FactVersion]:
        """The subject's states without a slot that a later statement says ended: it has an end cue, and what
        follows the cue names them ("gone off oat milk" ends "takes oat milk in their coffee", not "doesn't drink
        cow's milk"; "back from Lisbon" ends the trip to Lisbon)."""
        if said.type in PLAN_TYPES:
            return []
        ended = _ended_object(said.content)
        if not ended:
            return []
        index = self._index.get((said.agent_id, subject_key(said.subject)))
        return sorted(
            (v for v in (index.versions if index is not None else ())
             if v.status == "active" and not v.slot and v.type in ENDABLE_TYPES and v.created_at < said.created_at
             and v.fact_id != getattr(said, "fact_id", None) and not _STATE_END_CUE.search(v.content)
             and words_loosely_in(ended, _value_words(v.content))),
            key=lambda v: v.key,
        )

    def _ended_by_taste_or_diet(self, made: FactVersion) -> list[tuple[FactVersion, str]]:
        """The subject's earlier slot-less states that `made` ends: the opposite taste of the same thing, or what
        a diet taken up leaves out (`memlake.facts.tastes`)."""
        index = self._index.get((made.agent_id, subject_key(made.subject)))
        ended = []
        for v in sorted(index.versions if index is not None else (), key=lambda v: v.key):
            if v.status != "active" or v.slot or v.type not in ENDABLE_TYPES or v.created_at >= made.created_at:
                continue
            if reverses(made, v):
                ended.append((v, f"taste changed: {made.value}"))
            elif left_out_by_diet(made, v):
                ended.append((v, f"ended: diet {made.value}"))
        return ended
