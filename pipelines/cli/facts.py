"""`memlake remember`, `reject`, `forget`, `facts`, `history`, `profile`: an agent's facts, what the user
tells it, and what it forgets."""

from __future__ import annotations

from typing import Annotated

import typer

from memlake.api import Memory, check_agent_id
from pipelines.cli.shared import AgentOption, HomeOption, json_line, unknown_agent


def _fact_line(row: dict) -> str:  # type: ignore[type-arg]
    span = f"{row['valid_from']:%Y-%m-%d}..{row['valid_until']:%Y-%m-%d}" if row["valid_until"] else (
        f"{row['valid_from']:%Y-%m-%d}.."
    )
    slot = f" {row['slot']}={row['value']}" if row["slot"] else ""
    sources = ",".join((row["source_message_ids"] or [])[:3]) or ",".join(row["override_ids"] or []) or "-"
    conflicts = "".join(f"\n    conflicting: {c}" for c in row.get("conflicts") or [])  # a lint sweep's verdicts
    return (
        f"{row['fact_id']} v{row['version']} [{row['status']}] {row['type']} {row['subject']}{slot}: "
        f"{row['content']}  (valid {span}; said {row['created_at']:%Y-%m-%d}; from {sources}; "
        f"confidence {row['confidence']:.2f}){conflicts}"
    )


def remember(
    content: Annotated[str, typer.Argument(help="the fact, as you would say it")],
    agent: AgentOption,
    replaces: Annotated[str | None, typer.Option("--replaces", help="the fact id this corrects")] = None,
    home: HomeOption = None,
) -> None:
    """Tell the agent a fact (a user override: it always wins over what was extracted)."""
    frame = Memory(home).remember(agent, content, replaces=replaces, author="cli")
    for row in frame.iter_rows(named=True):
        typer.echo(f"remembered: {_change_line(row)}")
        typer.echo(f"  {_fact_line(row)}")
        for closed in row["closed"]:
            typer.echo(f"  closed {closed}")


def _change_line(row: dict) -> str:  # type: ignore[type-arg]
    """What `remember` did, with the values: a new fact, a new version of which chain (old -> new), a confirmation."""
    what = f"{row['slot']}" if row["slot"] else f"{row['type']}"
    if row["change"] == "new version":
        old = row["previous_value"] or row["previous_content"]
        new = row["value"] or row["content"]
        versions = f"v{row['previous_version']} -> v{row['version']}"
        return f"new version of {row['fact_id']} ({versions}), {what}: {old} -> {new}"
    if row["change"] == "confirmed":
        value = f"{row['slot']}={row['value']}" if row["slot"] else row["content"]
        return f"confirmed {row['fact_id']} v{row['version']} {value} (confirmed {row['confirmation_count']} time(s))"
    return f"new fact {row['fact_id']}, {what}: {row['value'] or row['content']}"


def reject(
    fact_id: Annotated[str, typer.Argument(help="the fact id to reject")],
    agent: AgentOption,
    home: HomeOption = None,
) -> None:
    """Reject an extracted fact by id (a user override)."""
    for row in Memory(home).reject(agent, fact_id).iter_rows(named=True):
        typer.echo(f"rejected {_fact_line(row)}")


def forget(
    agent: AgentOption,
    fact: Annotated[list[str] | None, typer.Option(
        "--fact", help="forget this fact id (every version, and the messages it was read from); repeatable")] = None,
    conversation: Annotated[
        str | None, typer.Option("--conversation", help="forget this conversation: its text, and what only it gave")
    ] = None,
    query: Annotated[str | None, typer.Option(
        "--query", help="preview the facts these words match (forgets nothing): then forget them by --fact")] = None,
    everything: Annotated[bool, typer.Option("--all", help="forget the whole agent: every file and row of it")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="do not ask before forgetting a conversation or all")] = (
        False
    ),
    reason: Annotated[str | None, typer.Option(help="why (kept in the forget log)")] = None,
    home: HomeOption = None,
) -> None:
    """Forget facts, a conversation, or a whole agent: the text leaves every store at once (landing,
    quarantine, the lake, every LanceDB version, the caches), the forget log (ids only) keeps every rebuild
    from bringing it back, and a receipt says what each store lost. `--query` previews, forgetting nothing.
    """
    chosen = [name for name, on in (("--fact", fact), ("--conversation", conversation), ("--query", query),
                                    ("--all", everything)) if on]
    if len(chosen) != 1:
        raise typer.BadParameter("give exactly one of --fact, --conversation, --query or --all")
    check_agent_id(agent)
    memory = Memory(home)
    if query is not None:
        preview = memory.forget_preview(agent, query)
        for row in preview.iter_rows(named=True):
            typer.echo(f"would forget {_fact_line(row)}")
        ids = list(dict.fromkeys(preview["fact_id"].to_list()))
        typer.echo("to forget exactly these: memlake forget --agent " + agent + "".join(f" --fact {i}" for i in ids)
                   if ids else "nothing matches: nothing to forget")
        return
    if not yes and not fact:
        what = f"conversation {conversation}" if conversation else "everything"
        typer.confirm(f"Forget {what} of agent {agent}? This cannot be undone", abort=True)
    frames = [memory.forget(agent, fact_id=one, reason=reason) for one in fact] if fact else [
        memory.forget(agent, conversation_id=conversation, everything=everything, reason=reason)]
    for frame in frames:
        for row in frame.iter_rows(named=True):
            typer.echo(f"forgot {_fact_line(row)}")
    typer.echo(f"{sum(f.height for f in frames)} fact version(s) forgotten")
    for receipt in memory.forget_receipts(agent).tail(len(frames)).iter_rows(named=True):
        removed = (receipt["removed"] or {}).items()
        stores = ", ".join(f"{store} {count}" for store, count in removed) or "nothing was stored"
        typer.echo(f"receipt {receipt['forget_id']}: removed {stores}")


def facts(
    agent: AgentOption,
    as_of: Annotated[str | None, typer.Option("--as-of", help="what was true then (ISO date or time)")] = None,
    history: Annotated[bool, typer.Option("--history", help="every version of each fact, candidates too")] = False,
    candidates: Annotated[bool, typer.Option(
        "--candidates", help="the facts held back: read with too little confidence to show, kept until said again "
        "or confirmed")] = False,
    fact_type: Annotated[str | None, typer.Option("--type", help="only this fact type")] = None,
    subject: Annotated[str | None, typer.Option(help="only facts about this subject")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines, every column")] = False,
    home: HomeOption = None,
) -> None:
    """An agent's facts: current ones shown to the agent, or those true at --as-of; --history adds every version;
    --candidates lists the ones held back instead."""
    memory = Memory(home)
    frame = memory.facts(agent, type=fact_type, subject=subject, as_of=as_of, include_history=history,
                         candidates=candidates)
    if frame.height == 0:
        unknown_agent(memory, agent)
    for row in frame.iter_rows(named=True):
        typer.echo(json_line(row) if as_json else _fact_line(row))
    if frame.height == 0 and not as_json:
        typer.echo("no candidates" if candidates else "no facts")


def history(
    fact_id: Annotated[str, typer.Argument(help="a fact id, as `memlake facts` shows it")],
    agent: AgentOption,
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines, every column")] = False,
    home: HomeOption = None,
) -> None:
    """Every version of one fact, oldest first, with the facts it updated or that updated it."""
    memory = Memory(home)
    frame = memory.history(fact_id, agent)
    if frame.height == 0:
        unknown_agent(memory, agent)
        raise typer.BadParameter(f"agent {agent!r} has no fact {fact_id!r}: `memlake facts --agent {agent}` lists "
                                 "its fact ids", param_hint="FACT_ID")
    for row in frame.iter_rows(named=True):
        typer.echo(json_line(row) if as_json else _fact_line(row))


def profile(
    agent: AgentOption,
    version: Annotated[int | None, typer.Option(help="this version (default: the latest)")] = None,
    home: HomeOption = None,
) -> None:
    """The agent's profile of the user: sections of lines, each citing its fact ids."""
    memory = Memory(home)
    if version is not None and memory.profile(agent).height == 0:
        unknown_agent(memory, agent)  # an agent with no memory at all is named as such, before the version
    frame = memory.profile(agent, version)
    if frame.height == 0:
        unknown_agent(memory, agent)
        typer.echo("no profile yet")
        return
    row = frame.row(0, named=True)
    typer.echo(f"profile v{row['version']} of {row['agent_id']} ({row['contributions']} contributions, "
               f"{row['created_at']:%Y-%m-%d}, {row['writer']})")
    typer.echo(row["text"])
