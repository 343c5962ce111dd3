"""`memlake serve` (the HTTP API and the OpenAI-compatible proxy), `memlake mcp`, and `memlake token` (the tokens
they check). service/ is imported where used: FastAPI, uvicorn and the MCP SDK are for these commands only."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from memlake.api import Memory
from memlake.cpu import serve_workers
from memlake.settings import existing_home, load_settings
from pipelines.cli.shared import AgentOption, HomeOption

if TYPE_CHECKING:
    from service.tokens import TokenStore


ServeHost = Annotated[str, typer.Option(help="address to listen on; other than loopback only with tokens "
                                             "(`memlake token add`)")]


def _loopback_or_tokens(host: str, home: Path) -> None:
    """Refuse to listen beyond this machine while every caller may read every agent."""
    from service.config import LOOPBACK_HOSTS  # deferred: the service's packages, for its commands only
    from service.tokens import TokenStore, tokens_path

    if host not in LOOPBACK_HOSTS and not TokenStore(home).configured:
        raise ValueError(f"--host {host} would let anyone who reaches it read every agent's memory: add a token "
                         f"first (`memlake token add --agent A`, stored in {tokens_path(home)}) or listen on "
                         "127.0.0.1")


def serve(
    host: ServeHost = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="port (0: any free one)")] = 8420,
    access_log: Annotated[bool, typer.Option(help="log every request line (queries included)")] = False,
    workers: Annotated[int | None, typer.Option(
        min=1, max=64, help="server processes, each with its own warm memory (Python runs one thread at a time per "
        "process: more use more cores); default one per core, at most 2")] = None,
    home: HomeOption = None,
) -> None:
    """The HTTP API over this home (OpenAPI at /docs), with an OpenAI-compatible proxy at /v1/chat/completions
    that puts the agent's memory before the upstream model (MEMLAKE_UPSTREAM_BASE_URL)."""
    import uvicorn  # deferred: the HTTP server, for this command only

    from service.app import create_app  # deferred: FastAPI and the service, for this command only
    from service.config import ServiceSettings

    memory = Memory(home)
    _loopback_or_tokens(host, memory.settings.home)
    config = ServiceSettings()  # read here, by every worker too: a wrong setting is named before anything listens
    workers = workers or serve_workers()
    if workers > 1:  # each worker process builds its app from the home named here
        os.environ["MEMLAKE_HOME"] = str(memory.settings.home)
        uvicorn.run("service.app:app_of_environment", factory=True, workers=workers, host=host, port=port,
                    access_log=access_log, log_level="info")
        return
    uvicorn.run(create_app(memory, config), host=host, port=port, access_log=access_log, log_level="info")


def mcp(
    agent: AgentOption,
    transport: Annotated[str, typer.Option(help="stdio | http (streamable HTTP at /mcp)")] = "stdio",
    host: ServeHost = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="port of the http transport")] = 8421,
    home: HomeOption = None,
) -> None:
    """An MCP server of one agent's memory: the tools recall, store, forget, list and context."""
    from service.mcp_server import http_app, run_stdio  # deferred: the MCP SDK, for this command only

    memory = Memory(home)
    if transport == "stdio":
        run_stdio(memory, agent)
        return
    if transport != "http":
        raise ValueError(f"unknown transport {transport!r}: stdio or http")
    import uvicorn  # deferred: the HTTP server, for this transport only

    _loopback_or_tokens(host, memory.settings.home)
    uvicorn.run(http_app(memory, agent, host), host=host, port=port, log_level="info")


token_app = typer.Typer(no_args_is_help=True, help="Bearer tokens of `memlake serve` and `memlake mcp --transport "
                        "http`: each maps to the agents it may use.")


def _token_store(home: Path | None) -> TokenStore:
    from service.tokens import TokenStore  # deferred: the service's packages, for its commands only

    return TokenStore(existing_home(load_settings(home)).home)


@token_app.command("add")
def token_add(
    agent: Annotated[list[str], typer.Option("--agent", help="an agent the token may use (repeat for more)")],
    note: Annotated[str, typer.Option(help="what the token is for")] = "",
    home: HomeOption = None,
) -> None:
    """Make a token for these agents; it is printed once and stored only as its hash."""
    secret, entry = _token_store(home).add(agent, note)
    typer.echo(secret)
    typer.echo(f"token {entry.token_id} for {', '.join(entry.agents)}: keep it now, it is not shown again", err=True)


@token_app.command("list")
def token_list(home: HomeOption = None) -> None:
    """The tokens: id, agents, when made, note (never the token); then what the servers' gate does with them."""
    store = _token_store(home)
    for entry in store.entries:
        typer.echo(f"{entry.token_id}  {','.join(entry.agents)}  {entry.created_at}  {entry.note}".rstrip())
    typer.echo(store.gate_state(), err=True)  # the gate's own words: after the last revoke, closed, not open


@token_app.command("revoke")
def token_revoke(token_id: Annotated[str, typer.Argument(help="the id `memlake token list` shows")],
                 home: HomeOption = None) -> None:
    """Revoke a token: a running `memlake serve` or `memlake mcp` refuses it from its next request."""
    gone = _token_store(home).revoke(token_id)
    typer.echo(f"revoked token {gone.token_id} ({', '.join(gone.agents)})")
    typer.echo(_token_store(home).gate_state(), err=True)
