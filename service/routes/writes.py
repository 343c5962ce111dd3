"""The memory writes: remember, reject, forget (and what a forget would take, and its receipts). A write runs in
turn (`Service.write`) and may create memory for a new agent, so only the preview asks `known`."""

from __future__ import annotations

from fastapi import APIRouter

from service import models as m
from service.calls import ServiceError
from service.routes.shared import AgentHeader, AgentQuery, CallerDep, ServiceDep, known, rows

router = APIRouter(tags=["memory"])


@router.post("/v1/memory/remember", response_model=m.Rows)
def remember(who: CallerDep, service: ServiceDep, body: m.RememberRequest, header: AgentHeader = None,
             agent_id: AgentQuery = None) -> m.Rows:
    """Remember a fact (a user override: it wins over what was extracted)."""
    agent = who.agent(body.agent_id, agent_id, header)
    fields = body.model_dump(exclude={"agent_id", "content"})
    return rows(agent, service.write(service.memory.remember, agent, body.content, author="api", **fields))


@router.post("/v1/memory/reject", response_model=m.Rows)
def reject(who: CallerDep, service: ServiceDep, body: m.RejectRequest, header: AgentHeader = None,
           agent_id: AgentQuery = None) -> m.Rows:
    """Reject an extracted fact by id."""
    agent = who.agent(body.agent_id, agent_id, header)
    return rows(agent, service.write(service.memory.reject, agent, body.fact_id))


@router.post("/v1/memory/forget", response_model=m.Rows)
def forget(who: CallerDep, service: ServiceDep, body: m.ForgetRequest, header: AgentHeader = None,
           agent_id: AgentQuery = None) -> m.Rows:
    """Forget one fact (and the messages it was read from), one conversation, or the whole agent
    (`everything`, with the agent id typed again as `confirm`): the text leaves every store at once. Returns
    the fact versions that went; the receipt is at `/v1/memory/forget/receipts`."""
    agent = who.agent(body.agent_id, agent_id, header)
    if body.everything and body.confirm != agent:
        raise ServiceError(400, f"forgetting every fact of agent {agent!r} cannot be undone: to confirm, send "
                           f'"confirm": "{agent}" (the agent id, typed again) with "everything": true')
    if body.confirm is not None and not body.everything:
        raise ServiceError(400, '"confirm" goes only with "everything": true (forgetting every fact of the '
                           "agent); a fact or a conversation is forgotten without it")
    return rows(agent, service.write(service.memory.forget, agent, fact_id=body.fact_id,
                                     conversation_id=body.conversation_id, everything=body.everything,
                                     reason=body.reason))


@router.post("/v1/memory/forget/preview", response_model=m.Rows)
def forget_preview(who: CallerDep, service: ServiceDep, body: m.ForgetPreviewRequest, header: AgentHeader = None,
                   agent_id: AgentQuery = None) -> m.Rows:
    """What forgetting by a query would take, forgetting nothing: forget exactly those by fact_id."""
    agent = known(service, who, who.agent(body.agent_id, agent_id, header))
    return rows(agent, service.memory.forget_preview(agent, body.query))


@router.get("/v1/memory/forget/receipts", response_model=m.Rows)
def forget_receipts(who: CallerDep, service: ServiceDep, header: AgentHeader = None,
                    agent_id: AgentQuery = None) -> m.Rows:
    """One row per forget of the agent: what was asked, what each store lost, ids and hashes (no text)."""
    agent = who.agent(agent_id, header)
    return rows(agent, service.memory.forget_receipts(agent))
