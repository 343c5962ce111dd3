"""The service itself: whether it is up, and which agents the caller may use."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from service import models as m
from service.routes.shared import CallerDep, ServiceDep

router = APIRouter()


@router.get("/healthz", response_model=m.Health, tags=["service"])
def health(service: ServiceDep) -> m.Health:
    return m.Health(status="ok", tokens=service.tokens.required)


@router.head("/healthz", include_in_schema=False)  # load balancers and uptime checks ask HEAD
def health_head() -> Response:
    return Response()


@router.get("/v1/agents", response_model=m.AgentsResponse, tags=["memory"])
@router.get("/agents", response_model=m.AgentsResponse, tags=["memory"])  # the first route, kept for older callers
def agents(who: CallerDep, service: ServiceDep) -> m.AgentsResponse:
    """The agents the caller may use (with no tokens: every agent with memory)."""
    memory = service.memory
    with_turns = set(memory.agents_with_turns())
    names = memory.agents() if who.agents is None else list(who.agents)
    return m.AgentsResponse(agents=[m.AgentInfo(agent_id=a, has_turns=a in with_turns) for a in names])
