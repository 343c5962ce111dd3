"""`memlake mcp`: the memory tools (recall, store, forget, list) and `context` as an MCP server for one agent,
given on the command line: no tool takes an agent, so no call can reach another one's memory.

The four memory tools are `memlake.tools` unchanged (their schemas, their dispatcher); `context` is
`Memory.context`. Over stdio, or streamable HTTP on loopback (elsewhere only with a token of that agent).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server
from starlette.types import ASGIApp, Receive, Scope, Send

from memlake.api import Memory
from memlake.cpu import one_blas_thread
from memlake.requests import MAX_CONTEXT_BUDGET, MIN_CONTEXT_BUDGET
from memlake.schemas import check_agent_id
from memlake.tools import TOOLS, BadArguments, MemoryTools, tool_result
from service.calls import WRITING_TOOLS, error_response
from service.tokens import TokenRefused, TokenStore, TokensUnreadable

CONTEXT_TOOL = {
    "name": "context",
    "description": "The user's long-term memory relevant to a question, as one block to read before answering: "
                   "the date, the user's own statements of fact, then what the question calls for (facts, past "
                   "conversations or what was said), each line with the day it was said.",
    "parameters": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "The question or task, in words."},
            "mode": {"type": ["string", "null"], "enum": ["compact", "full", None],
                     "description": "compact (default): one budget for what the question needs; full: every "
                                    "section."},
            "budget": {"type": ["integer", "null"], "minimum": MIN_CONTEXT_BUDGET, "maximum": MAX_CONTEXT_BUDGET,
                       "description": "Tokens at most (default: the home's setting)."},
        },
        "required": ["query", "mode", "budget"],
        "additionalProperties": False,
    },
}


def _tools() -> list[types.Tool]:
    specs = [tool["function"] for tool in TOOLS] + [CONTEXT_TOOL]
    return [types.Tool(name=s["name"], description=s["description"], input_schema=s["parameters"]) for s in specs]


def _result(payload: dict[str, Any]) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=json.dumps(payload, ensure_ascii=False))],
                                structured_content=payload, is_error=not payload.get("ok", False))


def context_call(memory: Memory, agent_id: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The `context` tool: the block as a dict, or why not, in the memory tools' result shape (`tool_result`)."""

    def run() -> dict[str, Any]:
        unknown = sorted(set(arguments) - set(CONTEXT_TOOL["parameters"]["properties"]))  # type: ignore[index]
        if unknown:
            raise BadArguments(f"context takes no argument {', '.join(map(repr, unknown))}; it takes query, mode, "
                               "budget")
        block = memory.context(arguments.get("query"), agent_id, mode=arguments.get("mode") or "compact",
                               budget=arguments.get("budget"))
        return dict(block.as_dict())

    return tool_result("context", run)


def build_server(memory: Memory, agent_id: str) -> Server[Any]:
    """An MCP server whose every tool reads and writes `agent_id`'s memory only."""
    agent_id = check_agent_id(agent_id)
    one_blas_thread()
    tools = MemoryTools(memory, agent_id)
    writes = anyio.Lock()  # reads run side by side; the tools that write, one at a time (as `Service` does)

    async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
                         ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=_tools())

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments or {}
        if params.name == "context":
            payload = await anyio.to_thread.run_sync(context_call, memory, agent_id, arguments)
        elif params.name in WRITING_TOOLS:
            async with writes:
                payload = await anyio.to_thread.run_sync(tools.call, params.name, arguments)
        else:
            payload = await anyio.to_thread.run_sync(tools.call, params.name, arguments)
        return _result(payload)

    return Server(f"memlake ({agent_id})", version="0.1.0",
                  instructions=f"Long-term memory of agent {agent_id}: recall before answering, store what the "
                               "user asks you to remember.",
                  on_list_tools=list_tools, on_call_tool=call_tool)


def run_stdio(memory: Memory, agent_id: str) -> None:
    server = build_server(memory, agent_id)

    async def serve() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(serve)


class TokenGate:
    """Streamable HTTP: only a bearer token that grants the server's agent gets in, once the home has tokens.
    The same gate as `memlake serve`'s (`TokenStore.grant`), asked at every request: a token revoked, or the
    home's first token added, while the server runs counts from the next request."""

    def __init__(self, app: ASGIApp, tokens: TokenStore, agent_id: str) -> None:
        self.app, self.tokens, self.agent_id = app, tokens, agent_id

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            authorization = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
            try:
                agents = self.tokens.grant(authorization)
            except TokenRefused:
                agents = ()
            except TokensUnreadable as exc:
                await error_response(503, str(exc), "server_error")(scope, receive, send)
                return
            if agents is not None and self.agent_id not in agents:
                response = error_response(401, f"a bearer token of agent {self.agent_id!r} is required",
                                          "authentication_error")
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def http_app(memory: Memory, agent_id: str, host: str) -> ASGIApp:
    """The streamable HTTP app at /mcp, always behind the token gate: whether the home has tokens is asked at
    every request, not once at start."""
    app: ASGIApp = build_server(memory, agent_id).streamable_http_app(host=host)
    return TokenGate(app, TokenStore(memory.settings.home), agent_id)
