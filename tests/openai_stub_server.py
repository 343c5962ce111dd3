"""A small OpenAI-compatible server on 127.0.0.1 for tests of the core-model path.

It answers `POST /v1/chat/completions` from a script of actions, one per
request, then from `default`:

- `"valid"`: a valid DistilledSession built by `responder(request)` (the
  default responder reads the prompt: it cites the first user message id and
  resolves "last week" against the date printed on that message, as a model
  following the prompt would);
- `"malformed"`: 200 with content that is not JSON;
- an int (e.g. 500): that HTTP status with an OpenAI-style error body.

It answers in the shape the request asked for: a tool call when the request
has `tools` (instructor's tools mode), else JSON in the message content. It
counts requests and keeps their bodies.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from datetime import date, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Action = str | int
_LINE = re.compile(r"^\[(?P<id>[^\]]+)\] (?P<date>\d{4}-\d{2}-\d{2}) \d{2}:\d{2} UTC (?P<role>\w+)(?: \([^)]*\))?: "
                   r"(?P<text>.*)$", re.M)


def prompt_messages(request: dict[str, Any]) -> list[dict[str, str]]:
    """The conversation lines of a request's prompt: id, date, role, text."""
    text = "\n".join(str(m.get("content") or "") for m in request.get("messages", []) if m.get("role") == "user")
    return [m.groupdict() for m in _LINE.finditer(text)]


def default_responder(request: dict[str, Any]) -> dict[str, Any]:
    """A valid answer to the prompt, the way a careful model would give it."""
    lines = prompt_messages(request)
    user = [line for line in lines if line["role"] == "user"] or lines
    first = user[0] if user else {"id": "unknown", "date": "2000-01-01", "text": ""}
    key_dates = []
    candidates = []
    for line in user:
        said = date.fromisoformat(line["date"])
        if "last week" in line["text"]:
            key_dates.append({"date": (said - timedelta(days=7)).isoformat(),
                              "description": line["text"][:80], "message_ids": [line["id"]]})
        moved = re.search(r"I moved to (\w+)", line["text"])
        if moved:
            candidates.append({
                "type": "fact", "subject": "user", "slot": "home_city", "value": moved.group(1),
                "content": f"The user lives in {moved.group(1)}.", "confidence": 0.9, "importance": 0.8,
                "tags": ["home"], "valid_from": (said - timedelta(days=7)).isoformat() if "last week" in line["text"]
                else said.isoformat(), "valid_until": None, "message_ids": [line["id"]],
            })
    return {
        "summary": f"The user talked about: {first['text'][:60]}",
        "topics": ["test"],
        "decisions": [],
        "action_items": [],
        "key_dates": key_dates,
        "entities": [],
        "relations": [],
        "fact_candidates": candidates,
        "salience": 0.5,
    }


class StubServer:
    """The server, started on a free loopback port; use as a context manager."""

    def __init__(self, responder: Callable[[dict[str, Any]], dict[str, Any]] = default_responder) -> None:
        self.responder = responder
        self.script: list[Action] = []
        self.default: Action = "valid"
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def calls(self) -> int:
        with self._lock:
            return len(self.requests)

    def then(self, *actions: Action) -> StubServer:
        with self._lock:
            self.script.extend(actions)
        return self

    def __enter__(self) -> StubServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> Action:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            return self.script.pop(0) if self.script else self.default

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
                    return
                action = stub._next(body, {k.lower(): v for k, v in self.headers.items()})
                if isinstance(action, int):
                    self._send(action, {"error": {"message": f"scripted {action}", "type": "server_error"}})
                    return
                content = "{this is not json" if action == "malformed" else json.dumps(stub.responder(body))
                self._send(200, completion(body, content))

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                self._send_bytes(status, json.dumps(payload).encode())

            def _send_bytes(self, status: int, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def completion(request: dict[str, Any], content: str) -> dict[str, Any]:
    """A chat.completion answering `request` with `content` (as a tool call when tools were offered)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    finish = "stop"
    tools = request.get("tools") or []
    if tools:
        name = tools[0]["function"]["name"]
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": name, "arguments": content}}],
        }
        finish = "tool_calls"
    prompt_tokens = sum(len(str(m.get("content") or "")) for m in request.get("messages", [])) // 4
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": request.get("model", "stub"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(content) // 4,
                  "total_tokens": prompt_tokens + len(content) // 4},
    }
