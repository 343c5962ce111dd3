"""The memory tools (recall, store, forget, list) for a function-calling agent: their schemas, and one call."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from memlake.tools import TOOLS
from service import models as m
from service.routes.shared import AgentHeader, AgentQuery, CallerDep, ServiceDep

router = APIRouter(tags=["tools"])


@router.get("/v1/memory/tools", response_model=m.ToolsResponse)
def tool_schemas() -> m.ToolsResponse:
    """The memory tools, as OpenAI function-calling schemas."""
    return m.ToolsResponse(tools=TOOLS)


@router.post("/v1/memory/tools")
def call_tool(who: CallerDep, service: ServiceDep, body: m.ToolCallRequest, header: AgentHeader = None,
              agent_id: AgentQuery = None) -> dict[str, Any]:
    """Run one memory tool call for the agent; the result says ok or why not, as a model should see it."""
    agent = who.agent(body.agent_id, agent_id, header)
    return service.tool(agent, body.name, body.arguments)
