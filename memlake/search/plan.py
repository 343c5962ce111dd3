"""Step 1 of a search: from the request to a plan (which kinds of rows each list asks for, how many, as of when)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime

from memlake.errors import BadRequest
from memlake.moments import parse_as_of
from memlake.search.params import IndexSpec, SearchParams
from memlake.vectors import Filters

_TOKEN = re.compile(r"[\w-]+", re.UNICODE)
_ORDINAL = re.compile(r"\d+(st|nd|rd|th|s)", re.IGNORECASE)


def names_identifier(query: str) -> bool:
    """Whether the query names an identifier: a token mixing letters and digits (ORD-58213, A320), a
    number of five digits or more, or a code symbol (snake_case, camelCase). Ordinals, decades and
    short numbers (18th, 1990s, 2023) are words."""
    for token in _TOKEN.findall(query):
        digits = sum(c.isdigit() for c in token)
        if digits >= 5 or (digits and any(c.isalpha() for c in token) and not _ORDINAL.fullmatch(token)):
            return True
        if "_" in token.strip("_") or any(_camel_case(part) for part in token.split("-")):
            return True
    return False


def _camel_case(word: str) -> bool:
    return word[:1].islower() and any(c.isupper() for c in word[1:])


@dataclass(frozen=True)
class Plan:
    """One search, decided before any index is read."""

    spec: IndexSpec
    query: str
    agent_id: str
    params: SearchParams  # as asked, with the lifts off for an identifier and at least k candidates
    when: datetime  # recency counts from here
    caller_clauses: tuple[str, ...]  # clauses the caller added: only LanceDB applies them (no snapshot)
    base: Filters  # the caller's filters and the index's own clauses
    group: Filters  # `base` limited to the kinds the lists ask for
    parts: tuple[str, ...]  # kinds of row that stand for a turn (its sentences, the questions it answered)
    context: tuple[str, ...]  # kinds of row that lift the turns inside them (windows, sessions)
    limit: int  # rows each list asks for
    use_text: bool  # whether the full-text list is asked

    @property
    def use_vector(self) -> bool:
        return "vector" in self.params.lists


def plan_search(
    spec: IndexSpec, query: str, agent_id: str, params: SearchParams, filters: Filters, as_of: datetime | str | None
) -> Plan:
    """The plan of one search; a request that cannot be answered (a role filter outside chunks) is an error."""
    if filters.roles and "role" not in spec.extra_columns:  # before LanceDB says it in its own words
        raise BadRequest(f"a role filter applies to turns (scope chunks); {spec.table} rows have no role")
    when = parse_as_of(as_of, end_of_day=True)  # a day, as in fact reads: as of its end
    base = replace(filters, extra=(*filters.extra, *spec.base_filter))
    params = _adjusted(params, query)
    context = tuple(kind for kind, weight in (("window", params.window_weight), ("session", params.session_weight))
                    if weight > 0 and kind in spec.context_kinds)
    # a long turn's passages are its sentence keys, grouped: one switch for both
    switched_off = {"sentence": not params.sentence_keys, "passage": not params.sentence_keys,
                    "question": not params.question_keys}
    parts = tuple(kind for kind in spec.part_kinds if not switched_off.get(kind, False))
    kinds = (*spec.result_kinds, *parts, *context) if spec.result_kinds else ()
    group = replace(base, kinds=kinds) if kinds else base
    # one query per list for every kind, ranks counted within each kind; a turn's parts (its sentences,
    # the questions it answered) share one count, as they all stand for turns (a share more for
    # question keys cost a 100k-chunk search ~0.4 ms of CPU for 0.3 points of LoCoMo recall)
    shares = len(spec.result_kinds) + bool(parts) + len([kind for kind in context if kind != "session"])
    limit = params.candidates * max(1, shares) + (params.context_candidates if "session" in context else 0)
    return Plan(
        spec, query, agent_id, params, when, filters.extra, base, group, parts, context, limit, "text" in params.lists
    )


def _adjusted(params: SearchParams, query: str) -> SearchParams:
    if params.k > params.candidates:  # each list is asked for at least the rows the caller wants
        params = replace(params, candidates=params.k)
    lifts = (params.session_weight, params.window_weight, params.neighbor_weight, params.graph_weight)
    if any(lifts) and names_identifier(query):
        # an identifier is matched on its own: no turn rises on what its session, window or neighbour
        # matched, else a turn beside the exact one, or a session of near-miss numbers, outranks it
        params = replace(params, session_weight=0.0, window_weight=0.0, neighbor_weight=0.0, graph_weight=0.0)
    return params
