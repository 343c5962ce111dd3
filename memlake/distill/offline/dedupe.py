"""Duplicates out: the same candidate, key date, relation or entity said twice is kept once."""

from __future__ import annotations

from memlake.distill.models import Entity, FactCandidate, KeyDate, Relation
from memlake.text import jaccard

# The fold's duplicate rule (DESIGN.md, Facts): a statement said again in other words is one fact.
SAID_AGAIN_JACCARD = 0.6


def dedupe_candidates(candidates: list[FactCandidate]) -> list[FactCandidate]:
    seen: dict[tuple[str, str, str | None, str], FactCandidate] = {}
    for c in candidates:
        key = (c.type, c.subject.lower(), c.slot, c.value.lower())
        if key in seen:
            old = seen[key]
            ids = old.message_ids + [m for m in c.message_ids if m not in old.message_ids]
            seen[key] = old.model_copy(update={"message_ids": ids})
        else:
            seen[key] = c
    return list(seen.values())


def drop_said_again(candidates: list[FactCandidate]) -> list[FactCandidate]:
    """A self-statement ("said") that repeats an earlier candidate about the same subject is merged into it."""
    kept: list[FactCandidate] = []
    for c in candidates:
        twin = next((i for i, k in enumerate(kept) if "said" in c.tags and k.subject == c.subject
                     and jaccard(k.content, c.content) >= SAID_AGAIN_JACCARD), None)
        if twin is None:
            kept.append(c)
        else:
            old = kept[twin]
            kept[twin] = old.model_copy(update={"message_ids": old.message_ids + [
                m for m in c.message_ids if m not in old.message_ids]})
    return kept


def dedupe_key_dates(dates: list[KeyDate]) -> list[KeyDate]:
    out: dict[tuple[str, str], KeyDate] = {}
    for d in dates:
        key = (d.date, d.message_ids[0] if d.message_ids else "")
        out.setdefault(key, d)
    return sorted(out.values(), key=lambda d: d.date)


def dedupe_relations(relations: list[Relation]) -> list[Relation]:
    out: dict[tuple[str, str, str], Relation] = {}
    for r in relations:
        out.setdefault((r.source.lower(), r.relation, r.target.lower()), r)
    return list(out.values())


def drop_short_duplicates(entities: list[Entity]) -> list[Entity]:
    """'Acme' goes when 'Acme Robotics' is there too; 'Tomás' when 'Tomás Ruiz' is."""
    names = [e.name for e in entities]
    return [e for e in entities
            if not any(other != e.name and other.startswith(e.name + " ") for other in names)]


def unique(values: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for v in values:
        if v.lower() not in seen:
            seen.add(v.lower())
            out.append(v)
    return out
