"""Ingest: a conversation landed in the agent's landing folder for the next run, and what became of it."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Path

from memlake.errors import NotFound
from service import models as m
from service.ingest import ingest_status, write_ingest
from service.routes.shared import AgentHeader, AgentQuery, CallerDep, ServiceDep

log = logging.getLogger("memlake.service")
router = APIRouter(tags=["ingest"])


# Under /v1 as every memory route (the openai client's base_url ends in /v1); the first path stays for the callers
# that use it.
@router.post("/v1/memory/ingest", status_code=202, response_model=m.IngestAccepted)
@router.post("/memory/ingest", status_code=202, response_model=m.IngestAccepted)
def ingest(who: CallerDep, service: ServiceDep, body: m.IngestRequest, header: AgentHeader = None,
           agent_id: AgentQuery = None) -> m.IngestAccepted:
    """Land a conversation in the agent's landing folder; the next run (or the landing sensor) reads it."""
    agent = who.agent(body.agent_id, agent_id, header)
    conversation = {**body.model_dump(mode="json", exclude_none=True), "agent_id": agent}
    # a conversation without a date would be quarantined by the run ("no session date"): it was said now
    conversation.setdefault("session_date", datetime.now(UTC).isoformat())
    settings = service.memory.settings
    ingest_id, landed = write_ingest(settings, conversation)
    log.info("ingest %s landed for agent %s (%d turns)", ingest_id, agent, len(body.turns))
    return m.IngestAccepted(ingest_id=ingest_id, agent_id=agent, state="waiting", file=landed)


@router.get("/v1/memory/ingest/{ingest_id}", response_model=m.IngestStatusResponse)
@router.get("/memory/ingest/{ingest_id}", response_model=m.IngestStatusResponse)
def ingest_state(who: CallerDep, service: ServiceDep, ingest_id: Annotated[str, Path(max_length=100)],
                 header: AgentHeader = None, agent_id: AgentQuery = None) -> m.IngestStatusResponse:
    """Whether an ingest landed, was read, was quarantined (and why), and is searchable yet."""
    agent = who.agent(agent_id, header)
    status = ingest_status(service.memory.settings, agent, ingest_id)
    if status is None:
        raise NotFound(f"agent {agent!r} has no ingest {ingest_id[:80]!r}")
    return m.IngestStatusResponse(ingest_id=ingest_id, agent_id=agent, state=status.state,  # type: ignore[arg-type]
                                  reason=status.reason, searchable=status.searchable,
                                  conversation_ids=status.conversation_ids)
