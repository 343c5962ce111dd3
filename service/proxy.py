"""`POST /v1/chat/completions`, an OpenAI-compatible proxy: the agent's context block goes before the request
as a system message, the request goes to the upstream model (`MEMLAKE_UPSTREAM_BASE_URL`), its answer (SSE
chunks passed on as they come) goes back, and the finished exchange lands in the agent's landing folder as an
ingest file for later distillation (`X-Memlake-Store: false` opts out). `GET /v1/models` passes through.
"""

from __future__ import annotations

import contextlib
import json
import logging
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import httpx2
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from memlake.context.echoes import strip_block_copies
from memlake.disk_faults import disk_fault
from memlake.schemas import PROXY_ORIGIN
from service.calls import Service, ServiceError, error_response
from service.config import ServiceSettings
from service.ingest import write_ingest
from service.models import ErrorResponse

log = logging.getLogger("memlake.service.proxy")
AGENT_HEADER = "x-memlake-agent-id"
STORE_HEADER = "x-memlake-store"
# The openai SDK (and clients built like it) retries every 5xx unless told not to: not having an upstream is not
# something a retry mends.
NOT_TRANSIENT = {"x-should-retry": "false"}
RETRY_ADVICE = ("retry-after", "retry-after-ms", "x-should-retry")  # an upstream's, passed on with its error


class Upstream:
    """The upstream OpenAI-compatible model: one pooled async client, its key, its model names."""

    def __init__(self, config: ServiceSettings) -> None:
        self.config = config
        self.client = httpx2.AsyncClient(timeout=config.upstream_timeout_seconds) \
            if config.upstream_base_url else None

    def url(self, path: str) -> str:
        if self.client is None or not self.config.upstream_base_url:
            raise ServiceError(503, "no upstream model: set MEMLAKE_UPSTREAM_BASE_URL (an OpenAI-compatible "
                               "endpoint, e.g. http://localhost:11434/v1)", "upstream_not_configured", NOT_TRANSIENT)
        return self.config.upstream_base_url.rstrip("/") + path

    def headers(self) -> dict[str, str]:
        key = self.config.upstream_api_key
        return {"Authorization": f"Bearer {key}"} if key else {}

    async def close(self) -> None:
        if self.client is not None:
            await self.client.aclose()


def last_user_text(messages: list[Any]) -> str:
    """The text of the last user message (its text parts, for content given as parts): what memory is for."""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return "\n".join(part["text"] for part in content
                                 if isinstance(part, dict) and isinstance(part.get("text"), str))
    return ""


def _not_a_json_number(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _checked_body(raw: bytes) -> dict[str, Any]:
    """The request as JSON the upstream can be sent: Python's parser takes NaN, Infinity and lone surrogates
    (`"\\ud800"`), which cannot be sent on (they were taken for the upstream's failure), and recurses per level."""
    try:
        body = json.loads(raw, parse_constant=_not_a_json_number)
        json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")  # what the upstream will be sent
    except RecursionError:
        raise ServiceError(400, "the body is nested too deeply for a chat completion request") from None
    except ValueError as exc:  # UnicodeError is one
        raise ServiceError(400, f"the body is not JSON: a chat completion request is a JSON object ({exc})") from None
    if not isinstance(body, dict):
        raise ServiceError(400, "a chat completion request is a JSON object")
    if body.get("stream") is not None and not isinstance(body["stream"], bool):
        raise ServiceError(400, "stream: true or false")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or not all(isinstance(x, dict) for x in messages):
        raise ServiceError(400, "messages: a non-empty list of message objects is required")
    if not isinstance(body.get("model"), str):
        raise ServiceError(400, "model: a model name (string) is required")
    return body


def _json_or_none(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None


def _json_with(raw: bytes, field: str) -> dict[str, Any] | None:
    """The upstream's answer if it is a JSON object with the list `field` every OpenAI client reads, else None."""
    data = _json_or_none(raw)
    return data if isinstance(data, dict) and isinstance(data.get(field), list) else None


def _not_shaped(what: str, raw: bytes) -> JSONResponse:
    """An upstream answer that is not what was asked for: the caller's client could not read it either."""
    text = raw.decode("utf-8", "replace")[:200]
    return error_response(502, f"the upstream model's answer is not {what}: {text}", "upstream_error")


def _upstream_error(answer: httpx2.Response, raw: bytes) -> JSONResponse:
    """The upstream's refusal, as an OpenAI-style error whatever shape it came in, with its advice on retrying
    (the openai SDK reads these headers; without them it retried a 5xx the upstream said not to)."""
    status = relayed_status(answer.status_code)
    advice = {name: answer.headers[name] for name in RETRY_ADVICE if name in answer.headers}
    data = _json_or_none(raw)
    if isinstance(data, dict) and isinstance(data.get("error"), dict) and "message" in data["error"]:
        return JSONResponse(data, status_code=status, headers=advice)
    text = raw.decode("utf-8", "replace")[:500]
    return error_response(status, f"the upstream model answered {answer.status_code}: {text}", "upstream_error",
                          advice)


def relayed_status(upstream_status: int) -> int:
    """The status an upstream refusal is relayed with. A 4xx, and the gateway statuses 502-504, pass on as they
    are; any other 5xx (an upstream's 500) becomes a 502, as a gateway's, so that a 500 from memlake always means
    memlake's own failure (docs/decisions.md)."""
    if upstream_status >= 500 and upstream_status not in (502, 503, 504):
        return 502
    return upstream_status


def _unreachable(exc: Exception) -> JSONResponse:
    """Whatever sending to the upstream raised, as a 502: httpx2 raises its own errors, and others besides for an
    address it cannot connect to (InvalidURL; for a port above 65535 an OverflowError inside an ExceptionGroup,
    which was a 500). Nothing of the caller's request runs in that step, so the trace is the upstream's."""
    if not isinstance(exc, httpx2.HTTPError):
        log.warning("sending to the upstream model failed", exc_info=exc)
    return error_response(502, f"the upstream model did not answer: {type(exc).__name__}: {exc}", "upstream_error")


class Exchange:
    """What the proxy stores of one request: the user's own last message and the answer, once it is complete,
    without any text the answer copied from the memory block put before it (`block`): memory is never stored
    again as conversation."""

    def __init__(self, service: Service, agent_id: str, question: str, block: str, store: bool) -> None:
        self.service, self.agent_id, self.question, self.block, self.store = service, agent_id, question, block, store
        self.answer: list[str] = []
        self.done = False  # the stream's `data: [DONE]` was read
        self.saved = False
        self._pending = ""

    def read_sse(self, chunk: bytes) -> None:
        """Collect the answer's text from SSE `data:` lines (a line may span chunks)."""
        self._pending += chunk.decode("utf-8", "replace")
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            data = line.strip()
            if data == "data: [DONE]":
                self.done = True
            if not data.startswith("data:") or self.done:
                continue
            try:
                event = json.loads(data[5:])
                self._add_text(event["choices"][0]["delta"].get("content"))
            except (ValueError, KeyError, IndexError, TypeError, AttributeError):
                continue

    def read_completion(self, data: dict[str, Any]) -> None:
        with contextlib.suppress(KeyError, IndexError, TypeError):  # an answer with no text: nothing to store
            self._add_text(data["choices"][0]["message"]["content"])

    def _add_text(self, content: Any) -> None:
        """Keep the answer's text; content that is not text (None, parts, a number) is passed on, not stored."""
        if isinstance(content, str):
            self.answer.append(content)

    def save(self) -> str | None:
        """Land the exchange for later distillation (once); the id of the ingest, or None when not stored. An
        answer that was nothing but a copy of the block lands the user's message alone."""
        answer = "".join(self.answer)
        if self.saved or not self.store or not self.question.strip() or not answer.strip():
            return None
        self.saved = True
        own = strip_block_copies(answer, self.block)
        try:
            ingest_id, _ = write_ingest(self.service.memory.settings, {
                "agent_id": self.agent_id, "conversation_id": f"proxy-{uuid.uuid4().hex}",
                "session_date": datetime.now(UTC).isoformat(), "title": "proxied chat", "origin": PROXY_ORIGIN,
                "turns": [{"user": self.question, "assistant": own if own.strip() else None}],
            })
        except OSError as exc:  # the answer still goes back whole: the client paid for it, memory only misses it
            fault = disk_fault(exc)
            if fault is None:
                raise
            log.error("the exchange of agent %s was not stored: %s", self.agent_id, fault)
            return None
        return ingest_id


def add_proxy_routes(app: FastAPI, service: Service) -> None:
    """`POST /v1/chat/completions` and `GET /v1/models` on `app`."""
    refusals: dict[int | str, dict[str, Any]] = {
        502: {"model": ErrorResponse, "description": "The upstream model did not answer, or not in its shape."},
        503: {"model": ErrorResponse, "description": "No upstream model is configured."}}

    @app.post("/v1/chat/completions", tags=["proxy"], response_model=None, responses=refusals,
              openapi_extra={"requestBody": {"required": True, "content": {"application/json": {"schema": {
                  "type": "object", "required": ["model", "messages"],
                  "properties": {"model": {"type": "string"}, "stream": {"type": "boolean"},
                                 "messages": {"type": "array", "minItems": 1, "items": {"type": "object"}}}}}}}})
    async def chat_completions(request: Request) -> Response:
        """An OpenAI chat completion with the agent's memory put first (header X-Memlake-Agent-Id, or the
        token's only agent); `X-Memlake-Store: false` keeps the exchange out of memory."""
        who = service.caller(request.headers.get("authorization"))
        agent = who.agent(*request.headers.getlist(AGENT_HEADER))  # two headers naming two agents: a 400
        body = _checked_body(await request.body())
        upstream: Upstream = request.app.state.upstream
        url = upstream.url("/chat/completions")
        question = last_user_text(body["messages"])
        injected, block_text = 0, ""
        if question.strip():
            block = await run_in_threadpool(service.memory.context, question, agent)
            body["messages"] = [{"role": "system", "content": block.text}, *body["messages"]]
            injected, block_text = block.token_count, block.text
        body["model"] = service.config.models.get(body["model"], body["model"])
        store = request.headers.get(STORE_HEADER, "true").strip().lower() not in ("false", "0", "no", "off")
        exchange = Exchange(service, agent, question, block_text, store)
        log.info("chat for agent %s: %d memory tokens, stream %s, store %s", agent, injected,
                 bool(body.get("stream")), store)
        if body.get("stream"):
            return await _stream(request, upstream, url, body, exchange)
        try:
            answer = await upstream.client.post(url, json=body, headers=upstream.headers())  # type: ignore[union-attr]
        except Exception as exc:  # the upstream's failure, see _unreachable
            return _unreachable(exc)
        if answer.status_code >= 400:
            return _upstream_error(answer, answer.content)
        data = _json_with(answer.content, "choices")
        if data is None:
            return _not_shaped('a chat completion (a JSON object with "choices")', answer.content)
        exchange.read_completion(data)
        await run_in_threadpool(exchange.save)
        return JSONResponse(data, status_code=answer.status_code)

    @app.get("/v1/models", tags=["proxy"], response_model=None, responses=refusals)
    async def models(request: Request) -> Response:
        """The upstream's models, passed through."""
        service.caller(request.headers.get("authorization"))
        upstream: Upstream = request.app.state.upstream
        url = upstream.url("/models")  # before the client is touched: no upstream is the chat's 503
        try:
            answer = await upstream.client.get(url, headers=upstream.headers())  # type: ignore[union-attr]
        except Exception as exc:  # the upstream's failure, see _unreachable
            return _unreachable(exc)
        if answer.status_code >= 400:
            return _upstream_error(answer, answer.content)
        if _json_with(answer.content, "data") is None:
            return _not_shaped('a model list (a JSON object with "data")', answer.content)
        return Response(answer.content, status_code=answer.status_code, media_type="application/json")


async def _stream(request: Request, upstream: Upstream, url: str, body: dict[str, Any],
                  exchange: Exchange) -> Response:
    """Pass the upstream's SSE chunks on as they come. The exchange lands once the client has been handed the
    whole answer and is still connected, before its `[DONE]`: a client gone before stores nothing (README)."""
    assert upstream.client is not None  # upstream.url said so
    try:
        sent = upstream.client.build_request("POST", url, json=body, headers=upstream.headers())
        answer = await upstream.client.send(sent, stream=True)
    except Exception as exc:  # the upstream's failure, see _unreachable
        return _unreachable(exc)
    if answer.status_code >= 400:
        raw = await answer.aread()
        await answer.aclose()
        return _upstream_error(answer, raw)

    async def land_if_received() -> None:
        # a client that went away stops the stream at its next await (Starlette cancels it), but a piece handed
        # over to a connection already closed does not say so: ask before landing
        if not await request.is_disconnected():
            await run_in_threadpool(exchange.save)

    async def chunks() -> AsyncIterator[bytes]:
        complete = False
        try:
            async for chunk in answer.aiter_raw():
                was_done = exchange.done
                exchange.read_sse(chunk)
                if exchange.done and not was_done:  # the answer is whole: its text first, then land it, then [DONE]
                    text, done = _split_at_done(chunk)
                    if text:
                        yield text
                    await land_if_received()
                    chunk = done
                yield chunk
            complete = True
        except httpx2.HTTPError as exc:  # the stream broke off: say so in the stream, store nothing
            log.warning("the upstream stream broke off: %s", type(exc).__name__)
            error = {"error": {"message": f"the upstream stream broke off: {type(exc).__name__}",
                               "type": "upstream_error"}}
            yield f"data: {json.dumps(error)}\n\n".encode()
        finally:
            await answer.aclose()
        if complete:  # an upstream that ends its stream without a [DONE]
            await land_if_received()

    media_type = answer.headers.get("content-type", "text/event-stream")
    return StreamingResponse(chunks(), status_code=answer.status_code, media_type=media_type)


def _split_at_done(chunk: bytes) -> tuple[bytes, bytes]:
    """`chunk` (which ends the answer) as what comes before its `data: [DONE]` line and that line on; all of it
    is the line's when the line began in an earlier chunk."""
    at = chunk.find(b"data: [DONE]")
    return (chunk[:at], chunk[at:]) if at > 0 else (b"", chunk)
