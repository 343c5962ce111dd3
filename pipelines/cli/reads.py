"""`memlake agents`, `turns`, `context`, `search`: reads of an agent's memory through `Memory`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    import polars as pl

from memlake.api import Memory
from memlake.requests import (
    CONTEXT_MODES,
    DEFAULT_SEARCH_K,
    FULL_BUDGET,
    GATE_MODES,
    MAX_CONTEXT_BUDGET,
    MAX_SEARCH_K,
    MIN_CONTEXT_BUDGET,
    MIN_SEARCH_K,
    SEARCH_SCOPES,
)
from memlake.settings import Settings, load_settings
from pipelines.cli.shared import AgentOption, HomeOption, json_line, unknown_agent, unknown_conversation

SHOWN_CHARS = 600  # of a hit's text on the terminal; --json gives all of it
# The help says the bounds and defaults memlake.requests and the settings state: never a number of its own.
COMPACT_BUDGET = Settings.model_fields["context_budget_tokens"].default
MODE_HELP = f"{' | '.join(CONTEXT_MODES)}: compact is one section in {COMPACT_BUDGET} tokens, full every section"
BUDGET_HELP = (f"tokens, {MIN_CONTEXT_BUDGET}..{MAX_CONTEXT_BUDGET:,} (default: the context_budget_tokens "
               f"setting; full: {FULL_BUDGET})")
GATE_HELP = (f"relevance gate: {' | '.join(GATE_MODES)} (llm: the core model; default: the context_gate "
             "setting)")


def _shown(text: str) -> str:
    cut = len(text) - SHOWN_CHARS
    return text if cut <= 0 else f"{text[:SHOWN_CHARS]}… ({cut:,} more characters: --json shows them)"


def _printed_as_json(memory: Memory, frame: pl.DataFrame, agent: str, conversation: str | None,
                     as_json: bool) -> bool:
    """Nothing found: say which agent or conversation is unknown (an error exit). Else, with --json, print the rows
    as JSON lines and say so."""
    if frame.height == 0:
        unknown_agent(memory, agent)
        unknown_conversation(memory, agent, conversation)
    if as_json:
        for row in frame.iter_rows(named=True):
            typer.echo(json_line(row))
    return as_json


def agents(home: HomeOption = None) -> None:
    """List the agents that have memory."""
    for agent_id in Memory(home).agents():
        typer.echo(agent_id)


def turns(
    agent: AgentOption,
    conversation: Annotated[str | None, typer.Option(help="only this conversation")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines")] = False,
    home: HomeOption = None,
) -> None:
    """Print an agent's turns."""
    memory = Memory(home)
    frame = memory.turns(agent, conversation)
    if _printed_as_json(memory, frame, agent, conversation, as_json):
        return
    for row in frame.iter_rows(named=True):
        typer.echo(f"[{row['created_at']:%Y-%m-%d %H:%M}] {row['conversation_id']} {row['role']}: {row['content']}")


def context(
    query: Annotated[str, typer.Argument(help="the question the agent is about to answer")],
    agent: AgentOption,
    mode: Annotated[str, typer.Option(help=MODE_HELP)] = CONTEXT_MODES[0],
    budget: Annotated[int | None, typer.Option(help=BUDGET_HELP)] = None,
    as_of: Annotated[str | None, typer.Option("--as-of", help="the block as it would have been then (ISO)")] = None,
    gate: Annotated[str | None, typer.Option(help=GATE_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="the block, its sections and every line's sources")] = False,
    home: HomeOption = None,
) -> None:
    """The context block an agent puts before its model: the date, the user's overrides, then the memory the
    question needs (current facts first, each dated), within a token budget."""
    memory = Memory(settings=load_settings(home, search_snapshot_rows=0))
    block = memory.context(query, agent, mode=mode, budget=budget, as_of=as_of, gate=gate)
    if not block.provenance and agent not in memory.agents():
        unknown_agent(memory, agent)
    if as_json:
        typer.echo(json.dumps(block.as_dict(), ensure_ascii=False))
        return
    typer.echo(block.text)
    typer.echo(f"({block.token_count}/{block.budget} tokens; gate: {block.gate.section}, {block.gate.reason})",
               err=True)


def search(
    query: Annotated[str, typer.Argument(help="what to look for")],
    agent: AgentOption,
    k: Annotated[int, typer.Option("-k", "--k", help=f"number of results, {MIN_SEARCH_K}..{MAX_SEARCH_K}")
                 ] = DEFAULT_SEARCH_K,
    scope: Annotated[str, typer.Option(help=" | ".join(SEARCH_SCOPES))] = SEARCH_SCOPES[0],
    as_of: Annotated[
        str | None, typer.Option("--as-of", help="recency counts back from this ISO time (a date: its end)")
    ] = None,
    since: Annotated[str | None, typer.Option(help="only from this ISO time on")] = None,
    until: Annotated[str | None, typer.Option(help="only before this ISO time (a date: through that day)")] = None,
    role: Annotated[str | None, typer.Option(help="only turns of this role")] = None,
    conversation: Annotated[str | None, typer.Option(help="only this conversation")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines, every column")] = False,
    record: Annotated[
        bool, typer.Option("--record", help="log the hits as used now: later searches boost them")
    ] = False,
    home: HomeOption = None,
) -> None:
    """Hybrid search of an agent's memory (vector + full text), best match first (near-duplicates pushed down,
    so a score can exceed the one above it)."""
    # One search per process: reading LanceDB directly beats loading the agent's rows into memory first
    # (a 100k-chunk agent, the whole command: 2.1-2.5 s against 4.9-5.4 s).
    memory = Memory(settings=load_settings(home, search_snapshot_rows=0))
    frame = memory.search(
        query, agent, k=k, scope=scope, as_of=as_of, since=since, until=until, role=role,
        conversation_id=conversation, record_access=record,
    )
    if _printed_as_json(memory, frame, agent, conversation, as_json):
        return
    if scope == "graph":
        for row in frame.iter_rows(named=True):
            typer.echo(f"{row['rank']:>3}. {row['score']:.4f} {row['kind']} {row['key']}: {_shown(row['text'])}")
        if frame.height == 0:
            typer.echo("no results")
        return
    if frame.height and frame["mode"][0] != "hybrid":
        typer.echo(f"({frame['mode'][0]}: {frame['note'][0]})")
    for row in frame.iter_rows(named=True):
        when = f"{row['created_at']:%Y-%m-%d}" if row["created_at"] else "-"
        source = " ".join(part for part in (row["conversation_id"], ",".join(row["message_ids"][:3])) if part)
        # a fact hit leads with its id and version: what `memlake reject`, `forget` and `--replaces` take
        fact = f"{row['fact_id']} v{row['version']} [{row['status']}] " if scope == "facts" else ""
        # a passage of a long turn: say where the whole turn is
        part = (f" (a passage: `memlake turns --agent {agent} --conversation {row['conversation_id']}` has the whole "
                "turn)") if row.get("excerpt") else ""
        typer.echo(f"{row['rank']:>3}. {row['score']:.4f} [{when}] {fact}{source or 'override'}: "
                   f"{_shown(row['text'])}{part}")
    if frame.height == 0:
        typer.echo("no results")
    elif record:  # the access log was written: say so, as `remember` and `forget` say what they wrote
        typer.echo(f"recorded {frame.height} use(s) of these {scope} for agent {agent}")
