"""What every route group shares: who is asking (`CallerDep`), the warm `Service` (`ServiceDep`), which agent a
read may be of (`known`), and the response helpers (frames as JSON rows)."""

from __future__ import annotations

import math
from datetime import date, datetime
from typing import Annotated, Any

import polars as pl
from fastapi import Depends, Header, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel

from memlake.errors import UnknownAgent
from service import models as m
from service.calls import Caller, Service, named_once
from service.proxy import AGENT_HEADER

HIDDEN_COLUMNS = ("vector", "embedding")  # numbers no client reads, and large


def jsonable(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, bytes):
        return None
    return value


def records(frame: pl.DataFrame) -> list[dict[str, Any]]:
    shown = frame.drop([c for c in HIDDEN_COLUMNS if c in frame.columns])
    return [jsonable(row) for row in shown.to_dicts()]


def as_json(model: BaseModel) -> Response:
    """The response, serialised here by pydantic in one step: a route returning the model has FastAPI validate
    it again and walk it with `jsonable_encoder` (~1 ms of CPU for a search of 10 hits). The route keeps its
    `response_model` for the OpenAPI schema."""
    return Response(model.model_dump_json(), media_type="application/json")


def rows(agent_id: str, frame: pl.DataFrame) -> m.Rows:
    return m.Rows(agent_id=agent_id, count=frame.height, rows=records(frame))


async def caller_of(request: Request, authorization: Annotated[str | None, Header()] = None) -> Caller:
    """Who is asking, from the bearer token (every agent when the home has no tokens). On the event loop (a
    `stat` of the tokens file and a lookup): a sync dependency costs every request a trip to a worker thread."""
    service: Service = request.app.state.service
    who = service.caller(authorization)
    named_once(request.headers.getlist(AGENT_HEADER), " in its X-Memlake-Agent-Id headers")
    named_once(request.query_params.getlist("agent_id"), " in its agent_id query parameters")
    return who


async def service_of(request: Request) -> Service:
    """The app's one `Service` (and through it its warm `Memory`)."""
    return request.app.state.service  # type: ignore[no-any-return]


# at module level: the routes' string annotations are resolved here
CallerDep = Annotated[Caller, Depends(caller_of)]
ServiceDep = Annotated[Service, Depends(service_of)]
AgentHeader = Annotated[str | None, Header(alias="X-Memlake-Agent-Id", max_length=200)]
AgentQuery = Annotated[str | None, Query(max_length=200, description="Whose memory; default the X-Memlake-Agent-Id "
                                         "header or the token's only agent.")]
Moment = Annotated[datetime | None, Query(description="An ISO date or time (UTC)")]


def known(service: Service, who: Caller, agent: str) -> str:
    """`agent`, if it has memory here; else `UnknownAgent` (a 404) naming it and the agents with memory the caller
    may use, so a mistyped id is not taken for an empty answer. Writes (remember, ingest) and the proxy create
    memory and skip this."""
    memory = service.memory
    if memory.has_memory(agent):
        return agent
    with_memory = memory.agents()
    visible = with_memory if who.agents is None else [a for a in who.agents if a in with_memory]
    raise UnknownAgent(f"agent {agent!r} has no memory here (a mistyped id?); agents with memory: "
                       f"{', '.join(visible) or 'none yet'}")
