"""The FastAPI app of `memlake serve`: one warm `Memory` behind REST endpoints, the memory tools, ingest into
landing, and the OpenAI-compatible proxy (`service.proxy`).

Every route that touches memory goes through `Caller.agent`: the agent asked for is checked against the agent
id rule and against the caller's token before `Memory` sees it. Memory text is never logged at info.
"""

from __future__ import annotations

import logging
import math
import os
import tempfile
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, date, datetime
from typing import Annotated, Any

import polars as pl
from fastapi import Depends, FastAPI, Header, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memlake.api import Memory
from memlake.cpu import one_blas_thread
from memlake.disk_faults import disk_fault
from memlake.tools import TOOLS
from service import models as m
from service.calls import Caller, Service, ServiceError, error_response, named_once
from service.config import ServiceSettings
from service.ingest import ingest_status, write_ingest
from service.proxy import AGENT_HEADER, Upstream, add_proxy_routes

log = logging.getLogger("memlake.service")
HIDDEN_COLUMNS = ("vector", "embedding")  # numbers no client reads, and large


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, bytes):
        return None
    return value


def records(frame: pl.DataFrame) -> list[dict[str, Any]]:
    shown = frame.drop([c for c in HIDDEN_COLUMNS if c in frame.columns])
    return [_jsonable(row) for row in shown.to_dicts()]


def as_json(model: BaseModel) -> Response:
    """The response, serialised here by pydantic in one step: a route returning the model has FastAPI validate
    it again and walk it with `jsonable_encoder` (~1 ms of CPU for a search of 10 hits). The route keeps its
    `response_model` for the OpenAPI schema."""
    return Response(model.model_dump_json(), media_type="application/json")


def rows(agent_id: str, frame: pl.DataFrame) -> m.Rows:
    return m.Rows(agent_id=agent_id, count=frame.height, rows=records(frame))


class BodyLimit:
    """Refuses a request body over `limit` bytes with 413 before any route reads it."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await self._refuse(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.limit:
                await self._refuse(scope, receive, send)
                return
            if not message.get("more_body"):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = error_response(413, f"the request body is over {self.limit:,} bytes", "invalid_request_error")
        await response(scope, receive, send)


async def caller_of(request: Request, authorization: Annotated[str | None, Header()] = None) -> Caller:
    """Who is asking, from the bearer token (every agent when the home has no tokens). On the event loop (a
    `stat` of the tokens file and a lookup): a sync dependency costs every request a trip to a worker thread."""
    service: Service = request.app.state.service
    who = service.caller(authorization)
    named_once(request.headers.getlist(AGENT_HEADER), " in its X-Memlake-Agent-Id headers")
    named_once(request.query_params.getlist("agent_id"), " in its agent_id query parameters")
    return who


# at module level: the routes' string annotations are resolved here
CallerDep = Annotated[Caller, Depends(caller_of)]
AgentHeader = Annotated[str | None, Header(alias="X-Memlake-Agent-Id", max_length=200)]
AgentQuery = Annotated[str | None, Query(max_length=200, description="Whose memory; default the X-Memlake-Agent-Id "
                                         "header or the token's only agent.")]
Moment = Annotated[datetime | None, Query(description="An ISO date or time (UTC)")]


def create_app(memory: Memory, config: ServiceSettings | None = None, *, warm: bool = True) -> FastAPI:
    """The service over one `Memory`."""
    config = config or ServiceSettings()
    one_blas_thread()  # each worker process builds its app here
    service = Service(memory, config)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> Any:
        if warm:
            service.warm()
        app.state.upstream = Upstream(config)
        log.info("memlake serve: home %s, %s", memory.settings.home, service.tokens.gate_state())
        yield
        await app.state.upstream.close()

    app = FastAPI(title="memlake", version="0.1.0", lifespan=lifespan,
                  description="Long-term memory for AI agents: search, context, facts, tools, ingest, and an "
                  "OpenAI-compatible proxy that puts the agent's memory before the model.",
                  responses={400: {"model": m.ErrorResponse}, 401: {"model": m.ErrorResponse},
                             403: {"model": m.ErrorResponse}, 404: {"model": m.ErrorResponse},
                             413: {"model": m.ErrorResponse}, 422: {"model": m.ErrorResponse}})
    app.state.service = service
    app.add_middleware(BodyLimit, limit=config.max_body_bytes)

    def known(who: Caller, agent: str) -> str:
        """`agent`, if it has memory here; else a 404 naming it (and the agents with memory the caller may use),
        so a mistyped id is not taken for an empty answer. Writes (remember, ingest) and the proxy create memory
        and skip this."""
        if memory.has_memory(agent):
            return agent
        with_memory = memory.agents()
        visible = with_memory if who.agents is None else [a for a in who.agents if a in with_memory]
        raise ServiceError(404, f"agent {agent!r} has no memory here (a mistyped id?); agents with memory: "
                           f"{', '.join(visible) or 'none yet'}", "not_found_error")
    _add_error_handlers(app)

    @app.get("/healthz", response_model=m.Health, tags=["service"])
    def health() -> m.Health:
        return m.Health(status="ok", tokens=service.tokens.required)

    @app.head("/healthz", include_in_schema=False)  # load balancers and uptime checks ask HEAD
    def health_head() -> Response:
        return Response()

    @app.get("/agents", response_model=m.AgentsResponse, tags=["memory"])
    def agents(who: CallerDep) -> m.AgentsResponse:
        """The agents the caller may use (with no tokens: every agent with memory)."""
        with_turns = set(memory.agents_with_turns())
        names = memory.agents() if who.agents is None else list(who.agents)
        return m.AgentsResponse(agents=[m.AgentInfo(agent_id=a, has_turns=a in with_turns) for a in names])

    @app.get("/v1/memory/search", response_model=m.SearchResponse, tags=["memory"])
    def search(
        who: CallerDep,
        q: Annotated[str, Query(min_length=1, max_length=m.MAX_TEXT, description="What to look for")],
        header: AgentHeader = None, agent_id: AgentQuery = None,
        scope: Annotated[str, Query(pattern="^(chunks|episodes|facts)$")] = "chunks",
        k: Annotated[int, Query(ge=1, le=100)] = 10,
        as_of: Moment = None, since: Moment = None, until: Moment = None,
    ) -> Response:
        """Hybrid search of one agent's memory, best match first."""
        agent = known(who, who.agent(agent_id, header))
        found = memory.search(q, agent, k=k, scope=scope, as_of=as_of, since=since, until=until)
        first = found.row(0, named=True) if found.height else {}
        return as_json(m.SearchResponse(agent_id=agent, count=found.height, rows=records(found), scope=scope,
                                        mode=first.get("mode"), note=first.get("note")))

    @app.post("/v1/memory/context", response_model=m.ContextResponse, tags=["memory"])
    def context(who: CallerDep, body: m.ContextRequest, header: AgentHeader = None,
                agent_id: AgentQuery = None) -> Response:
        """The context block to put before the model for a question."""
        agent = known(who, who.agent(body.agent_id, agent_id, header))
        block = memory.context(body.query, agent, mode=body.mode, budget=body.budget, as_of=body.as_of,
                               gate=body.gate)
        return as_json(m.ContextResponse(agent_id=agent, provenance=_jsonable(block.provenance),
                                         **_jsonable(block.as_dict())))

    @app.get("/v1/memory/facts", response_model=m.Rows, tags=["memory"])
    def facts(
        who: CallerDep, header: AgentHeader = None, agent_id: AgentQuery = None,
        type: Annotated[str | None, Query(max_length=40)] = None,  # noqa: A002 - the fact type, as in the schema
        subject: Annotated[str | None, Query(max_length=500)] = None,
        as_of: Moment = None, include_history: bool = False, candidates: bool = False,
    ) -> m.Rows:
        """The agent's current facts shown to it (every version with include_history; with candidates, the
        current facts held back: read with too little confidence, kept until said again or confirmed)."""
        agent = known(who, who.agent(agent_id, header))
        return rows(agent, memory.facts(agent, type=type, subject=subject, as_of=as_of,
                                        include_history=include_history, candidates=candidates))

    @app.get("/v1/memory/episodes", response_model=m.Rows, tags=["memory"])
    def episodes(who: CallerDep, header: AgentHeader = None, agent_id: AgentQuery = None, since: Moment = None,
                 until: Moment = None) -> m.Rows:
        """The agent's episodes (one per distilled conversation), oldest first."""
        agent = known(who, who.agent(agent_id, header))
        return rows(agent, memory.episodes(agent, since=since, until=until))

    @app.get("/v1/memory/profile", response_model=m.Rows, tags=["memory"])
    def profile(who: CallerDep, header: AgentHeader = None, agent_id: AgentQuery = None,
                version: Annotated[int | None, Query(ge=1, le=1_000_000)] = None) -> m.Rows:
        """The agent's profile (the latest version unless `version`)."""
        agent = known(who, who.agent(agent_id, header))
        return rows(agent, memory.profile(agent, version))

    @app.get("/v1/memory/export", tags=["memory"], response_class=Response, responses={200: {
        "content": {"application/gzip": {}, "application/zip": {}},
        "description": "One archive: Parquet per table and manifest.json, as `memlake export --archive` writes."}})
    def export(who: CallerDep, header: AgentHeader = None, agent_id: AgentQuery = None,
               format: Annotated[str, Query(pattern="^(tar.gz|zip)$")] = "tar.gz") -> Response:  # noqa: A002
        """The agent's memory as one archive (`memlake import` reads it into any home)."""
        agent = known(who, who.agent(agent_id, header))
        with tempfile.TemporaryDirectory() as folder:
            archive = os.path.join(folder, f"{agent}.{format}")
            memory.export(agent, archive, archive=True)
            with open(archive, "rb") as packed:
                data = packed.read()
        return Response(data, media_type="application/zip" if format == "zip" else "application/gzip",
                        headers={"Content-Disposition": f'attachment; filename="{agent}.{format}"'})

    @app.get("/v1/memory/history/{fact_id}", response_model=m.Rows, tags=["memory"], responses={404: {
        "model": m.ErrorResponse, "description": "The agent has no memory here, or no fact with this id."}})
    def history(who: CallerDep, fact_id: Annotated[str, Path(max_length=200)], header: AgentHeader = None,
                agent_id: AgentQuery = None) -> m.Rows:
        """Every version of one of the agent's facts, oldest first."""
        agent = known(who, who.agent(agent_id, header))
        versions = memory.history(fact_id, agent)
        if versions.height == 0:  # a fact has at least one version: a mistyped id (or another agent's) is no fact
            raise ServiceError(404, f"agent {agent!r} has no fact {fact_id[:80]!r} (fact ids are in "
                               "/v1/memory/facts)", "not_found_error")
        return rows(agent, versions)

    @app.post("/v1/memory/remember", response_model=m.Rows, tags=["memory"])
    def remember(who: CallerDep, body: m.RememberRequest, header: AgentHeader = None,
                 agent_id: AgentQuery = None) -> m.Rows:
        """Remember a fact (a user override: it wins over what was extracted)."""
        agent = who.agent(body.agent_id, agent_id, header)
        fields = body.model_dump(exclude={"agent_id", "content"})
        return rows(agent, service.write(memory.remember, agent, body.content, author="api", **fields))

    @app.post("/v1/memory/reject", response_model=m.Rows, tags=["memory"])
    def reject(who: CallerDep, body: m.RejectRequest, header: AgentHeader = None,
               agent_id: AgentQuery = None) -> m.Rows:
        """Reject an extracted fact by id."""
        agent = who.agent(body.agent_id, agent_id, header)
        return rows(agent, service.write(memory.reject, agent, body.fact_id))

    @app.post("/v1/memory/forget", response_model=m.Rows, tags=["memory"])
    def forget(who: CallerDep, body: m.ForgetRequest, header: AgentHeader = None,
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
        return rows(agent, service.write(memory.forget, agent, fact_id=body.fact_id,
                                       conversation_id=body.conversation_id, everything=body.everything,
                                       reason=body.reason))

    @app.post("/v1/memory/forget/preview", response_model=m.Rows, tags=["memory"])
    def forget_preview(who: CallerDep, body: m.ForgetPreviewRequest, header: AgentHeader = None,
                       agent_id: AgentQuery = None) -> m.Rows:
        """What forgetting by a query would take, forgetting nothing: forget exactly those by fact_id."""
        agent = known(who, who.agent(body.agent_id, agent_id, header))
        return rows(agent, memory.forget_preview(agent, body.query))

    @app.get("/v1/memory/forget/receipts", response_model=m.Rows, tags=["memory"])
    def forget_receipts(who: CallerDep, header: AgentHeader = None, agent_id: AgentQuery = None) -> m.Rows:
        """One row per forget of the agent: what was asked, what each store lost, ids and hashes (no text)."""
        agent = who.agent(agent_id, header)
        return rows(agent, memory.forget_receipts(agent))

    @app.get("/v1/memory/tools", response_model=m.ToolsResponse, tags=["tools"])
    def tool_schemas() -> m.ToolsResponse:
        """The memory tools, as OpenAI function-calling schemas."""
        return m.ToolsResponse(tools=TOOLS)

    @app.post("/v1/memory/tools", tags=["tools"])
    def call_tool(who: CallerDep, body: m.ToolCallRequest, header: AgentHeader = None,
                  agent_id: AgentQuery = None) -> dict[str, Any]:
        """Run one memory tool call for the agent; the result says ok or why not, as a model should see it."""
        agent = who.agent(body.agent_id, agent_id, header)
        return service.tool(agent, body.name, body.arguments)

    # Under /v1 as every memory route (the openai client's base_url ends in /v1); the first path stays for
    # the callers that use it.
    @app.post("/v1/memory/ingest", status_code=202, response_model=m.IngestAccepted, tags=["ingest"])
    @app.post("/memory/ingest", status_code=202, response_model=m.IngestAccepted, tags=["ingest"])
    def ingest(who: CallerDep, body: m.IngestRequest, header: AgentHeader = None,
               agent_id: AgentQuery = None) -> m.IngestAccepted:
        """Land a conversation in the agent's landing folder; the next run (or the landing sensor) reads it."""
        agent = who.agent(body.agent_id, agent_id, header)
        conversation = {**body.model_dump(mode="json", exclude_none=True), "agent_id": agent}
        # a conversation without a date would be quarantined by the run ("no session date"): it was said now
        conversation.setdefault("session_date", datetime.now(UTC).isoformat())
        ingest_id, path = write_ingest(memory.settings, conversation)
        log.info("ingest %s landed for agent %s (%d turns)", ingest_id, agent, len(body.turns))
        return m.IngestAccepted(ingest_id=ingest_id, agent_id=agent, state="waiting",
                                file=path.relative_to(memory.settings.landing_dir).as_posix())

    @app.get("/v1/memory/ingest/{ingest_id}", response_model=m.IngestStatusResponse, tags=["ingest"])
    @app.get("/memory/ingest/{ingest_id}", response_model=m.IngestStatusResponse, tags=["ingest"])
    def ingest_state(who: CallerDep, ingest_id: Annotated[str, Path(max_length=100)], header: AgentHeader = None,
                     agent_id: AgentQuery = None) -> m.IngestStatusResponse:
        """Whether an ingest landed, was read, was quarantined (and why), and is searchable yet."""
        agent = who.agent(agent_id, header)
        status = ingest_status(memory.settings, agent, ingest_id)
        if status is None:
            raise ServiceError(404, f"agent {agent!r} has no ingest {ingest_id[:80]!r}", "not_found_error")
        return m.IngestStatusResponse(ingest_id=ingest_id, agent_id=agent, state=status.state,  # type: ignore[arg-type]
                                      reason=status.reason, searchable=status.searchable,
                                      conversation_ids=status.conversation_ids)

    add_proxy_routes(app, service)
    return app


def app_of_environment() -> FastAPI:
    """The service over the home `MEMLAKE_HOME` names: what each worker of `memlake serve --workers N` builds."""
    return create_app(Memory(), ServiceSettings())


def _add_error_handlers(app: FastAPI) -> None:
    """Every refusal as an OpenAI-style error with a clear message: what Memory refuses (ValueError) is the
    caller's mistake, 400; only a bug is a 500, and its trace goes to the log, not to the caller."""

    def handler(status: int, kind: str, message: Callable[[Any], str]) -> Callable[..., Awaitable[JSONResponse]]:
        async def handle(request: Request, exc: Any) -> JSONResponse:
            return error_response(status, message(exc), kind)
        return handle

    async def service_error(request: Request, exc: Any) -> JSONResponse:
        return error_response(exc.status, exc.message, exc.kind, exc.headers)

    async def http_error(request: Request, exc: Any) -> JSONResponse:
        return error_response(exc.status_code, str(exc.detail), "invalid_request_error")

    async def refused(request: Request, exc: ValueError) -> JSONResponse:
        return _disk_fault_response(request, exc) or error_response(400, str(exc), "invalid_request_error")

    async def internal(request: Request, exc: Exception) -> JSONResponse:
        fault_response = _disk_fault_response(request, exc)
        if fault_response is not None:
            return fault_response
        log.exception("%s %s failed", request.method, request.url.path)
        return error_response(500, f"{type(exc).__name__}: the request failed; see the service log", "server_error")

    app.add_exception_handler(ServiceError, service_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, handler(422, "invalid_request_error", _validation_message))
    app.add_exception_handler(ValueError, refused)
    # a disk fault is an OSError where Python or pyarrow meets it: handled here, not re-raised to the server as a
    # bug is; one that a library wraps in its own error still reaches `internal`
    app.add_exception_handler(OSError, internal)
    app.add_exception_handler(Exception, internal)


def _disk_fault_response(request: Request, exc: Exception) -> JSONResponse | None:
    """A write the disk refused: 507 when it is full (or over quota), 503 when it is read-only, saying which and
    where; None for any other error. Not memlake's bug, so not a 500; nothing was written, nothing is lost."""
    fault = disk_fault(exc)
    if fault is None:
        return None
    log.error("%s %s: %s", request.method, request.url.path, fault)
    remedy = "make it writable" if fault.read_only else "free some space"
    return error_response(503 if fault.read_only else 507, f"{fault}: nothing was written ({remedy}, then try again)",
                          "storage_error")


NOT_JSON = "the body is not a JSON object: send one, with Content-Type: application/json"


def _validation_message(exc: RequestValidationError) -> str:
    """Which field is wrong and how, in one line. A body FastAPI could not read as JSON (cut short, or sent
    without its content type) is named as such: its own words were "1: JSON decode error" and "body: Input
    should be a valid dictionary"."""
    errors = exc.errors()
    if any(e.get("type") == "json_invalid" or (tuple(e.get("loc", ())) == ("body",) and isinstance(
            e.get("input"), bytes | str)) for e in errors):
        return NOT_JSON
    parts = []
    for error in errors[:5]:
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    return "; ".join(parts)
