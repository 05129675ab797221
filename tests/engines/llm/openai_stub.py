"""A stub OpenAI-compatible chat-completions server on 127.0.0.1, for the openai backend's tests.

It speaks the wire format: ``POST /v1/chat/completions`` with a JSON body, a 200 whose body is a
chat completion (``choices[0].message.content``, ``finish_reason``, ``usage``), or an OpenAI error
object with the status given.  It records every request body, counts the requests in flight at
once (the most ever, for the concurrency bound) and notices a client that hangs up while it is
still delaying its answer (a cancelled request).
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def completion(
    content: str | None,
    *,
    prompt_tokens: int = 13,
    completion_tokens: int = 5,
    cached: int | None = None,
    finish_reason: str = "stop",
    model: str = "m",
) -> dict:
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}],
        "usage": usage,
    }


def error(status: int, message: str) -> Reply:
    return Reply({"error": {"message": message, "type": "invalid_request_error", "code": None}}, status=status)


@dataclass
class Reply:
    body: Any
    status: int = 200
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


def ok(content: str | None, **kw: Any) -> Reply:
    return Reply(completion(content, **kw))


class StubServer:
    """Answers each ``POST /v1/chat/completions`` with ``responder(request_json)``."""

    def __init__(self) -> None:
        self.responder: Callable[[dict], Reply] = lambda _r: ok('{"value": null, "evidence": []}')
        self.requests: list[dict] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.hangups = 0
        self.hung_up = threading.Event()
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length)
                with stub._lock:
                    stub.paths.append(self.path)
                    stub.headers.append({k.lower(): v for k, v in self.headers.items()})
                    stub.in_flight += 1
                    stub.most_in_flight = max(stub.most_in_flight, stub.in_flight)
                try:
                    if self.path != "/v1/chat/completions":
                        reply = error(404, f"no route {self.path}")
                    else:
                        request = json.loads(raw or b"{}")
                        with stub._lock:
                            stub.requests.append(request)
                        reply = stub.responder(request)
                    if reply.delay_s and not stub._wait(self.connection, reply.delay_s):
                        with stub._lock:
                            stub.hangups += 1
                        stub.hung_up.set()
                        self.close_connection = True
                        return
                    payload = json.dumps(reply.body).encode()
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    self.close_connection = True
                finally:
                    with stub._lock:
                        stub.in_flight -= 1

            def log_message(self, *_args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    def _wait(self, conn: socket.socket, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not self.stopping.is_set():
            readable, _, _ = select.select([conn], [], [], 0.02)
            if readable:
                try:
                    if conn.recv(1, socket.MSG_PEEK) == b"":
                        return False
                except OSError:
                    return False
        return not self.stopping.is_set()

    def script(self, *replies: Reply) -> None:
        """Answer the requests with ``replies`` in turn; the last one repeats."""
        queue = list(replies)

        def respond(_request: dict) -> Reply:
            with self._lock:
                return queue.pop(0) if len(queue) > 1 else queue[0]

        self.responder = respond

    def close(self) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()
