"""Every refusal of `memlake serve` as an OpenAI-style error with a clear message, its status from what went wrong:
the core's typed refusals (`memlake.errors`) have their own; a full or read-only disk is 507 or 503; anything else
is memlake's bug, a 500 whose trace goes to the log and whose message is short (it never reads as the caller's
mistake, as a ValueError's 400 did)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from memlake.disk_faults import disk_fault
from memlake.errors import BadRequest, Conflict, MemlakeError, NotFound, Unavailable
from service.calls import ServiceError, error_response

log = logging.getLogger("memlake.service")

# the core's refusal -> (status, OpenAI error type); the first that the error is an instance of (UnknownAgent is a
# NotFound). A MemlakeError of none of these (the base itself) is a refusal of the request: 400.
STATUSES: tuple[tuple[type[MemlakeError], int, str], ...] = (
    (BadRequest, 400, "invalid_request_error"),
    (NotFound, 404, "not_found_error"),
    (Conflict, 409, "conflict_error"),
    (Unavailable, 503, "server_error"),
)


def status_of(error: MemlakeError) -> tuple[int, str]:
    return next(((status, kind) for cls, status, kind in STATUSES if isinstance(error, cls)),
                (400, "invalid_request_error"))


def add_error_handlers(app: FastAPI) -> None:
    def handler(status: int, kind: str, message: Callable[[Any], str]) -> Callable[..., Awaitable[JSONResponse]]:
        async def handle(request: Request, exc: Any) -> JSONResponse:
            return error_response(status, message(exc), kind)
        return handle

    async def service_error(request: Request, exc: Any) -> JSONResponse:
        return error_response(exc.status, exc.message, exc.kind, exc.headers)

    async def http_error(request: Request, exc: Any) -> JSONResponse:
        return error_response(exc.status_code, str(exc.detail), "invalid_request_error")

    async def refused(request: Request, exc: MemlakeError) -> JSONResponse:
        status, kind = status_of(exc)
        return error_response(status, str(exc), kind)

    async def internal(request: Request, exc: Exception) -> JSONResponse:
        fault_response = _disk_fault_response(request, exc)
        if fault_response is not None:
            return fault_response
        log.exception("%s %s failed", request.method, request.url.path)
        return error_response(500, f"{type(exc).__name__}: the request failed; see the service log", "server_error")

    app.add_exception_handler(ServiceError, service_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, handler(422, "invalid_request_error", _validation_message))
    app.add_exception_handler(MemlakeError, refused)
    # a disk fault is an OSError where Python or pyarrow meets it: handled here, not re-raised to the server as a
    # bug is; one that a library wraps in its own error still reaches `internal`. A plain ValueError is a bug too.
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
