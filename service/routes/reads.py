"""The memory reads: search, the context block, facts, episodes, the profile, a fact's history, the export. Each
is of one agent with memory here (`known`); bounds are `memlake.requests`'."""

from __future__ import annotations

import os
import tempfile
from typing import Annotated

from fastapi import APIRouter, Path, Query
from fastapi.responses import Response

from memlake.errors import NotFound
from memlake.requests import (
    DEFAULT_SEARCH_K,
    MAX_FACT_TYPE,
    MAX_ID,
    MAX_PROFILE_VERSION,
    MAX_SEARCH_K,
    MAX_SUBJECT,
    MAX_TEXT,
    MIN_PROFILE_VERSION,
    MIN_SEARCH_K,
)
from service import models as m
from service.routes.shared import (
    AgentHeader,
    AgentQuery,
    CallerDep,
    Moment,
    ServiceDep,
    as_json,
    jsonable,
    known,
    records,
    rows,
)

router = APIRouter(tags=["memory"])


@router.get("/v1/memory/search", response_model=m.SearchResponse)
def search(
    who: CallerDep, service: ServiceDep,
    q: Annotated[str, Query(min_length=1, max_length=MAX_TEXT, description="What to look for")],
    header: AgentHeader = None, agent_id: AgentQuery = None,
    scope: Annotated[str, Query(pattern="^(chunks|episodes|facts)$")] = "chunks",
    k: Annotated[int, Query(ge=MIN_SEARCH_K, le=MAX_SEARCH_K)] = DEFAULT_SEARCH_K,
    as_of: Moment = None, since: Moment = None, until: Moment = None,
) -> Response:
    """Hybrid search of one agent's memory, best match first."""
    agent = known(service, who, who.agent(agent_id, header))
    found = service.memory.search(q, agent, k=k, scope=scope, as_of=as_of, since=since, until=until)
    first = found.row(0, named=True) if found.height else {}
    return as_json(m.SearchResponse(agent_id=agent, count=found.height, rows=records(found), scope=scope,
                                    mode=first.get("mode"), note=first.get("note")))


@router.post("/v1/memory/context", response_model=m.ContextResponse)
def context(who: CallerDep, service: ServiceDep, body: m.ContextRequest, header: AgentHeader = None,
            agent_id: AgentQuery = None) -> Response:
    """The context block to put before the model for a question."""
    agent = known(service, who, who.agent(body.agent_id, agent_id, header))
    block = service.memory.context(body.query, agent, mode=body.mode, budget=body.budget, as_of=body.as_of,
                                   gate=body.gate)
    return as_json(m.ContextResponse(agent_id=agent, provenance=jsonable(block.provenance),
                                     **jsonable(block.as_dict())))


@router.get("/v1/memory/facts", response_model=m.Rows)
def facts(
    who: CallerDep, service: ServiceDep, header: AgentHeader = None, agent_id: AgentQuery = None,
    type: Annotated[str | None, Query(max_length=MAX_FACT_TYPE)] = None,  # noqa: A002 - the fact type, as in the schema
    subject: Annotated[str | None, Query(max_length=MAX_SUBJECT)] = None,
    as_of: Moment = None, include_history: bool = False, candidates: bool = False,
) -> m.Rows:
    """The agent's current facts shown to it (every version with include_history; with candidates, the
    current facts held back: read with too little confidence, kept until said again or confirmed)."""
    agent = known(service, who, who.agent(agent_id, header))
    return rows(agent, service.memory.facts(agent, type=type, subject=subject, as_of=as_of,
                                            include_history=include_history, candidates=candidates))


@router.get("/v1/memory/episodes", response_model=m.Rows)
def episodes(who: CallerDep, service: ServiceDep, header: AgentHeader = None, agent_id: AgentQuery = None,
             since: Moment = None, until: Moment = None) -> m.Rows:
    """The agent's episodes (one per distilled conversation), oldest first."""
    agent = known(service, who, who.agent(agent_id, header))
    return rows(agent, service.memory.episodes(agent, since=since, until=until))


@router.get("/v1/memory/profile", response_model=m.Rows)
def profile(who: CallerDep, service: ServiceDep, header: AgentHeader = None, agent_id: AgentQuery = None,
            version: Annotated[int | None, Query(ge=MIN_PROFILE_VERSION, le=MAX_PROFILE_VERSION)] = None) -> m.Rows:
    """The agent's profile (the latest version unless `version`)."""
    agent = known(service, who, who.agent(agent_id, header))
    return rows(agent, service.memory.profile(agent, version))


@router.get("/v1/memory/export", response_class=Response, responses={200: {
    "content": {"application/gzip": {}, "application/zip": {}},
    "description": "One archive: Parquet per table and manifest.json, as `memlake export --archive` writes."}})
def export(who: CallerDep, service: ServiceDep, header: AgentHeader = None, agent_id: AgentQuery = None,
           format: Annotated[str, Query(pattern="^(tar.gz|zip)$")] = "tar.gz") -> Response:  # noqa: A002
    """The agent's memory as one archive (`memlake import` reads it into any home)."""
    agent = known(service, who, who.agent(agent_id, header))
    with tempfile.TemporaryDirectory() as folder:
        archive = os.path.join(folder, f"{agent}.{format}")
        service.memory.export(agent, archive, archive=True)
        with open(archive, "rb") as packed:
            data = packed.read()
    return Response(data, media_type="application/zip" if format == "zip" else "application/gzip",
                    headers={"Content-Disposition": f'attachment; filename="{agent}.{format}"'})


@router.get("/v1/memory/history/{fact_id}", response_model=m.Rows, responses={404: {
    "model": m.ErrorResponse, "description": "The agent has no memory here, or no fact with this id."}})
def history(who: CallerDep, service: ServiceDep, fact_id: Annotated[str, Path(max_length=MAX_ID)],
            header: AgentHeader = None, agent_id: AgentQuery = None) -> m.Rows:
    """Every version of one of the agent's facts, oldest first."""
    agent = known(service, who, who.agent(agent_id, header))
    versions = service.memory.history(fact_id, agent)
    if versions.height == 0:  # a fact has at least one version: a mistyped id (or another agent's) is no fact
        raise NotFound(f"agent {agent!r} has no fact {fact_id[:80]!r} (fact ids are in /v1/memory/facts)")
    return rows(agent, versions)
