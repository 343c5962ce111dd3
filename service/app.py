"""The FastAPI app of `memlake serve`: one warm `Memory` behind REST endpoints (`service.routes`, a router per
group), the memory tools, ingest into landing, and the OpenAI-compatible proxy (`service.proxy`).

Every route that touches memory goes through `Caller.agent`: the agent asked for is checked against the agent
id rule and against the caller's token before `Memory` sees it. Memory text is never logged at info. What went
wrong decides the status (`service.errors`).
"""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memlake.api import Memory
from memlake.cpu import one_blas_thread
from service import models as m
from service.calls import Service, error_response
from service.config import ServiceSettings
from service.errors import add_error_handlers
from service.proxy import Upstream, add_proxy_routes
from service.routes import ingest, reads, service_info, tools, writes

log = logging.getLogger("memlake.service")
ROUTERS = (service_info.router, reads.router, writes.router, tools.router, ingest.router)


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
                  responses={status: {"model": m.ErrorResponse} for status in (400, 401, 403, 404, 409, 413, 422)})
    app.state.service = service
    app.add_middleware(BodyLimit, limit=config.max_body_bytes)
    add_error_handlers(app)
    for router in ROUTERS:
        app.include_router(router)
    add_proxy_routes(app, service)
    return app


def app_of_environment() -> FastAPI:
    """The service over the home `MEMLAKE_HOME` names: what each worker of `memlake serve --workers N` builds."""
    return create_app(Memory(), ServiceSettings())
