"""`memlake graph`: the knowledge graph's entities, relations and neighbourhoods; undo a merge."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import polars as pl
import typer

from memlake.api import Memory
from pipelines.cli.shared import AgentOption, HomeOption, json_line, unknown_agent

graph_app = typer.Typer(
    no_args_is_help=True,
    help="The knowledge graph: entities, relations (with their versions), neighbourhoods; undo a merge.",
)


def _span(row: dict) -> str:  # type: ignore[type-arg]
    until = f"{row['valid_until']:%Y-%m-%d}" if row["valid_until"] else ""
    return f"{row['valid_from']:%Y-%m-%d}..{until}"


def _relation_line(row: dict) -> str:  # type: ignore[type-arg]
    return (f"{row['source_name']} -{row['relation']}-> {row['target_name']} [{row['status']}] (valid {_span(row)}; "
            f"{row['relation_id']} v{row['version']}; from {','.join(row['source_conversation_ids'][:3]) or '-'})")


def _echo_relations(frame: pl.DataFrame, as_json: bool, line: Callable[[dict], str]) -> None:  # type: ignore[type-arg]
    for row in frame.iter_rows(named=True):
        typer.echo(json_line(row) if as_json else line(row))
    if frame.height == 0 and not as_json:
        typer.echo("no relations")


@graph_app.command("entities")
def graph_entities(
    agent: AgentOption,
    name: Annotated[str | None, typer.Option(help="only the entity called this (or with it as an alias)")] = None,
    entity_type: Annotated[str | None, typer.Option("--type", help="only this type (person, place, ...)")] = None,
    merges: Annotated[bool, typer.Option("--merges", help="the merges resolution made, with their ids")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines, every column")] = False,
    home: HomeOption = None,
) -> None:
    """An agent's entities (canonical name, type, aliases, how often named); --merges lists the merges made."""
    memory = Memory(home)
    frame = memory.entity_merges(agent) if merges else memory.entities(agent, name=name, type=entity_type)
    if frame.height == 0:
        unknown_agent(memory, agent)
    for row in frame.iter_rows(named=True):
        if as_json:
            typer.echo(json_line(row))
        elif merges:
            undone = f" [undone by {row['undone_by']}]" if row["undone_by"] else ""
            typer.echo(f"{row['merge_id']} {row['rule']} {row['score']:.2f}: {row['merged_name']!r} into "
                       f"{row['kept_name']!r} ({row['reason']}){undone}")
        else:
            aliases = f" (also {', '.join(row['aliases'])})" if row["aliases"] else ""
            typer.echo(f"{row['entity_id']} {row['type']}: {row['name']}{aliases}; named {row['mention_count']} "
                       f"time(s), {row['first_seen_at']:%Y-%m-%d}..{row['last_seen_at']:%Y-%m-%d}")
    if frame.height == 0 and not as_json:
        typer.echo("no merges" if merges else "no entities")


@graph_app.command("relations")
def graph_relations(
    agent: AgentOption,
    entity: Annotated[str | None, typer.Option(help="only relations this entity is an end of")] = None,
    relation: Annotated[str | None, typer.Option(help="only this relation (works_at, lives_in, ...)")] = None,
    as_of: Annotated[str | None, typer.Option("--as-of", help="only those in force then (ISO date or time)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines, every column")] = False,
    home: HomeOption = None,
) -> None:
    """An agent's relations, every version (closed ones with their end), newest first; --as-of: in force then."""
    memory = Memory(home)
    frame = memory.relations(agent, entity=entity, relation=relation, as_of=as_of)
    if frame.height == 0:
        unknown_agent(memory, agent)
    _echo_relations(frame, as_json, _relation_line)


@graph_app.command("neighborhood")
def graph_neighborhood(
    entity: Annotated[str, typer.Argument(help="a name, an alias or an entity id ('user' for the user)")],
    agent: AgentOption,
    depth: Annotated[int, typer.Option(help="hops, 1 to 5")] = 2,
    as_of: Annotated[str | None, typer.Option("--as-of", help="relations in force then (ISO date or time)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines, every column")] = False,
    home: HomeOption = None,
) -> None:
    """The relations within --depth hops of an entity, current ones (or those in force --as-of)."""
    memory = Memory(home)
    frame = memory.neighborhood(agent, entity, depth=depth, as_of=as_of)
    if as_json:
        _echo_relations(frame, as_json, _relation_line)
        return
    center = memory.entities(agent, name=entity)
    typer.echo(f"{center['name'][0]} ({center['type'][0]})" if center.height else entity)
    _echo_relations(frame.sort("depth", "relation", "valid_from"), False, _hop_line)


def _hop_line(row: dict) -> str:  # type: ignore[type-arg]
    """One relation of a neighbourhood, indented by its hop, with what was said and since when: readable at a
    glance ("  user -sibling_of-> Leela (said: sibling) since 2024-03-01")."""
    until = f" until {row['valid_until']:%Y-%m-%d}" if row["valid_until"] else ""
    return (f"{'  ' * row['depth']}{row['source_name']} -{row['relation']}-> {row['target_name']} "
            f"(said: {row['relation_text']}) since {row['valid_from']:%Y-%m-%d}{until}")


@graph_app.command("split")
def graph_split(
    merge_id: Annotated[str, typer.Argument(help="the merge to undo (`memlake graph entities --merges`)")],
    agent: AgentOption,
    home: HomeOption = None,
) -> None:
    """Undo one entity merge: logged for good, so the next `memlake run` and every rebuild keep the two apart."""
    row = Memory(home).split(agent, merge_id, author="cli").row(0, named=True)
    typer.echo(f"split {row['merge_id']}: {row['merged_name']!r} and {row['kept_name']!r} are kept apart from the "
               "next `memlake run` on")
