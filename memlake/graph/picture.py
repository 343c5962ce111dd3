"""A small picture of the graph for a person: the largest agent's neighbourhood as Mermaid text.

The graph asset shows it in its materialization's metadata, so a person sees the graph's shape without a query.
The agent with the most shown relations is drawn, around its entity with the most of them (most often the user), two
hops out, at most `MAX_NODES` nodes: nearer relations first, so a crowded graph loses its far edges, never the
centre's. A node is its type and entity id, never its name: Dagster keeps every run's metadata where a forget cannot
reach (see `assets/shared.markdown_preview`), so nothing anyone said is put there; the user is "user", and
`memlake graph neighborhood <entity id> --agent A` names the rest.
"""

from __future__ import annotations

import polars as pl

from memlake.distill.models import USER_SUBJECT
from memlake.graph.reads import in_force, neighborhood
from memlake.graph.stated import SHOWN_CONFIDENCE

# More nodes than this and the picture is no longer read at a glance in the UI's metadata panel.
MAX_NODES = 25
# Characters Mermaid's quoted labels cannot hold as they are, and their entity codes.
_ESCAPES = {'"': "#quot;", "[": "#91;", "]": "#93;", "|": "#124;", "<": "#lt;", ">": "#gt;"}


def shown_relations(relations: pl.DataFrame) -> pl.DataFrame:
    """The relations in force that are shown (not candidates)."""
    return in_force(relations, None).filter(pl.col("confidence") >= SHOWN_CONFIDENCE)


def largest_agent(relations: pl.DataFrame) -> str | None:
    """The agent with the most shown relations (the first by id on a tie), None when no relation is shown."""
    shown = shown_relations(relations)
    if shown.is_empty():
        return None
    counts = shown.group_by("agent_id").len().sort(["len", "agent_id"], descending=[True, False])
    return str(counts["agent_id"][0])


def _centre(relations: pl.DataFrame) -> str:
    """The entity at the most shown relations' ends (the first by id on a tie)."""
    ends = pl.concat([relations.select(pl.col("source_entity_id").alias("entity_id")),
                      relations.select(pl.col("target_entity_id").alias("entity_id"))])
    return str(ends.group_by("entity_id").len().sort(["len", "entity_id"], descending=[True, False])["entity_id"][0])


def _label(text: str) -> str:
    return "".join(_ESCAPES.get(c, c) for c in text)


def neighbourhood_mermaid(entities: pl.DataFrame, relations: pl.DataFrame, max_nodes: int = MAX_NODES) -> str:
    """Mermaid text (`graph LR`) of the largest agent's two-hop neighbourhood, at most `max_nodes` nodes, each
    labelled by its type and entity id (the user: "user"), each edge its relation; "" when no relation is shown."""
    agent = largest_agent(relations)
    if agent is None:
        return ""
    ours = shown_relations(relations).filter(pl.col("agent_id") == agent)
    their_entities = entities.filter(pl.col("agent_id") == agent)
    centre = _centre(ours)
    edges = neighborhood(ours, their_entities, centre, depth=2)
    kinds = dict(their_entities.select("entity_id", "type").iter_rows())
    users = set(their_entities.filter(((pl.col("name") == USER_SUBJECT) | pl.col("aliases").list.contains(USER_SUBJECT))
                                      & (pl.col("type") == "person"))["entity_id"])
    node_of: dict[str, str] = {centre: "n0"}
    lines = ["graph LR"]

    def node(entity: str) -> str:  # its label on every line: each edge reads alone, as Mermaid and as plain text
        label = USER_SUBJECT if entity in users else f"{kinds.get(entity, '?')} {entity}"
        return f'{node_of[entity]}["{_label(label)}"]'

    for source, relation, target in edges.select("source_entity_id", "relation", "target_entity_id").iter_rows():
        new = [e for e in dict.fromkeys((source, target)) if e not in node_of]
        if len(node_of) + len(new) > max_nodes:
            continue
        for entity in new:
            node_of[entity] = f"n{len(node_of)}"
        lines.append(f"    {node(source)} -->|{_label(relation.replace('_', ' '))}| {node(target)}")
    return "\n".join(lines)


def neighbourhood_markdown(entities: pl.DataFrame, relations: pl.DataFrame) -> str:
    """`neighbourhood_mermaid` as a Markdown block with a line saying whose it is, for the asset's metadata."""
    text = neighbourhood_mermaid(entities, relations)
    if not text:
        return "No relation shown yet: nothing to draw."
    return (f"The largest agent, `{largest_agent(relations)}`: two hops around its most related entity, at most "
            f"{MAX_NODES} nodes, each its type and entity id (no names: Dagster's run storage is beyond a forget's "
            f"reach; `memlake graph neighborhood <entity id> --agent <agent>` names them).\n\n"
            f"```mermaid\n{text}\n```")
