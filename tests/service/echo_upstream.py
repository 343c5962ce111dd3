"""An OpenAI-compatible fake model on 127.0.0.1 that echoes what it was sent: the answer's content is the JSON of
the request's messages, so a test reads exactly what the proxy forwarded. Streams in several SSE chunks when
asked; the model name `fail-<status>` answers that status with an OpenAI-style error (`fail-<status>-no-retry`
with `x-should-retry: false` too); the model `slow` streams as a model generating does, a pause before each
chunk, `burst` sends its whole stream in one write, and `streams_ended` is released once per stream finished or
broken off. Answers of the wrong shape, for the proxy's tests: the model `odd-content` answers with content that
is not text, `no-choices` with a completion without choices, and the models under `/v1/not-json` and
`/v1/no-data` are not a model list. The stub server of the core-model tests, with another handler."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.openai_stub_server import StubServer

CHUNK = 40  # characters of the echo per SSE chunk: a real stream comes in many pieces
DONE_TO_CLOSE_S = 0.5  # a real upstream may close the stream a while after its [DONE]
SLOW_CHUNK_S = 0.03  # the `slow` model's pause before each chunk: a client can drop it part-way
ODD_MODEL_LISTS = {"/v1/not-json/models": b"<html>busy, try later</html>", "/v1/no-data/models": b'{"object": "list"}'}
ODD_CONTENT = [{"type": "text", "text": "parts, not a string"}]


class EchoUpstream(StubServer):
    def __init__(self) -> None:
        super().__init__()
        self.streams_ended = threading.Semaphore(0)  # released once per stream, finished or broken off

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        upstream = self
        stub_handler: Any = super()._handler()

        class Handler(stub_handler):  # type: ignore[misc, valid-type]
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802
                if self.path in ODD_MODEL_LISTS:
                    self._send_bytes(200, ODD_MODEL_LISTS[self.path])
                    return
                self._send(200, {"object": "list", "data": [{"id": "echo", "object": "model", "created": 0,
                                                            "owned_by": "test"}]})

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                upstream._next(body, {k.lower(): v for k, v in self.headers.items()})  # kept for the test
                model = str(body.get("model", ""))
                if model.startswith("fail-"):
                    status, _, advice = model.removeprefix("fail-").partition("-")
                    data = json.dumps({"error": {"message": f"upstream says {status}", "type": "server_error",
                                                 "code": None, "param": None}}).encode()
                    self.send_response(int(status))
                    if advice == "no-retry":  # what an upstream says of an error a retry will not mend
                        self.send_header("x-should-retry", "false")
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                if model == "no-choices":
                    self._send(200, {"id": "chatcmpl-echo", "object": "chat.completion", "created": 0})
                    return
                echo: Any = json.dumps(body.get("messages"), ensure_ascii=False)
                if body.get("stream"):
                    try:
                        self._stream(model, echo)
                    except OSError:  # the proxy went away part-way
                        pass
                    finally:
                        upstream.streams_ended.release()
                    return
                if model == "odd-content":
                    echo = ODD_CONTENT
                self._send(200, {
                    "id": "chatcmpl-echo", "object": "chat.completion", "created": 0, "model": model,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": echo},
                                 "finish_reason": "stop", "logprobs": None}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

            def _stream(self, model: str, echo: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                events = []
                for start in range(0, len(echo), CHUNK):
                    content = ODD_CONTENT if model == "odd-content" else echo[start:start + CHUNK]
                    event = {"id": "chatcmpl-echo", "object": "chat.completion.chunk", "created": 0, "model": model,
                             "choices": [{"index": 0, "delta": {"content": content},
                                          "finish_reason": None}]}
                    events.append(f"data: {json.dumps(event)}\n\n".encode())
                events.append(b"data: [DONE]\n\n")
                for event in [b"".join(events)] if model == "burst" else events:
                    if model == "slow":
                        time.sleep(SLOW_CHUNK_S)
                    self._chunk(event)
                time.sleep(DONE_TO_CLOSE_S)
                self._chunk(b"")

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

        return Handler
